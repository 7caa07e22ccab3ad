"""Which engine runs traced graphs: Numba-compiled programs, or the NumPy interpreter.

The interpreter is the reference (and needs no compile time); ``numba`` is the
product. ``TAPEFLOW_BACKEND=numpy`` or ``set_backend("numpy")`` selects the
interpreter, e.g. to check graph semantics over thousands of programs quickly.
"""
from .. import env
from ..passes import FINAL, run_passes
from ..runtime.interpret import run_graph

_backend = env.get("TAPEFLOW_BACKEND")


def set_backend(name):
    global _backend
    if name not in ("numba", "numpy"):
        raise ValueError(f"unknown backend {name!r}; expected 'numba' or 'numpy'")
    _backend = name


def get_backend():
    return _backend


class Interpreted:
    """A graph run by the NumPy kernels, with the Program calling convention."""

    def __init__(self, graph):
        self.graph = graph

    def __call__(self, *args):
        return run_graph(self.graph, *args)


def optimize(graph):
    """The passes every executed program gets (it is not differentiated again afterwards)."""
    return run_passes(graph, FINAL, verify=True)


def compile(graph, name="program"):
    """A callable ``(*arrays) -> tuple of arrays`` for ``graph`` on the selected backend."""
    graph = optimize(graph)
    if _backend == "numba":
        try:
            from ..codegen import compile_graph  # imports Numba: only when a program is compiled
        except ImportError:
            return Interpreted(graph)
        return compile_graph(graph, name)
    return Interpreted(graph)
