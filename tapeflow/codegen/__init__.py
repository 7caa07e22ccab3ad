"""IR -> Numba source -> compiled programs.

``compile_graph(graph, name)`` returns a ``Program``: one ``@njit`` function for the whole
graph (never one per op), generated from the per-op templates in ``CODEGEN``, with
elementwise chains fused into loops (``fusion``, ``loops``), fast vectorizable float32
transcendentals (``fastmath``), and an on-disk cache keyed by the source's hash
(``cache``) so a second process reuses Numba's compiled code. See program.py.

The names below are imported on first use, so importing a codegen module that does not
compile (``failures``, which the tracer's call path uses on every backend) does not pull in
Numba.
"""
import importlib

_LAZY = {"Unsupported": "emitter", "CodegenError": "program", "Program": "program",
         "compile_graph": "program", "CODEGEN": "templates"}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
