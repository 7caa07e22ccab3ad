"""Which engine runs traced graphs: Numba-compiled programs, or the NumPy interpreter.

The interpreter is the reference (and needs no compile time); ``numba`` is the
product. ``TAPEFLOW_BACKEND=numpy`` or ``set_backend("numpy")`` selects the
interpreter, e.g. to check graph semantics over thousands of programs quickly.

With Numba, ``compile`` has three modes (``mode_for`` maps ``tf.function``'s
``jit_compile`` to them): ``"compiled"`` waits for the Numba program, ``"interpreted"``
never compiles, ``"tiered"`` returns at once a ``tiers.Tiered`` that runs the graph on
the interpreter until its program, compiled in the background, takes over.
"""
from __future__ import annotations

import time
import weakref

from .. import env
from ..passes import FINAL, run_passes
from ..runtime.interpret import run_graph
from . import compile_log, tiers

_backend = env.get("TAPEFLOW_BACKEND")


def set_backend(name: str) -> None:
    """Run traced programs on ``"numba"`` (compiled, the default) or ``"numpy"`` (the interpreter).

    Args:
      name: ``"numba"`` or ``"numpy"`` (also set by ``TAPEFLOW_BACKEND``).

    Raises:
      ValueError: any other name.

    >>> tf.set_backend("numpy")
    """
    global _backend
    if name not in ("numba", "numpy"):
        raise ValueError(f"unknown backend {name!r}; expected 'numba' or 'numpy'")
    _backend = name


def get_backend() -> str:
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


def mode_for(jit_compile):
    """``jit_compile``: True waits for the compiled program, False never compiles, None
    (the default) is tiered unless ``TAPEFLOW_TIERED=0``."""
    if jit_compile is None:
        return "tiered" if env.get("TAPEFLOW_TIERED") else "compiled"
    return "compiled" if jit_compile else "interpreted"


def compile(graph, name="program", mode="compiled"):
    """A callable ``(*arrays) -> tuple of arrays`` for ``graph`` on the selected backend."""
    graph = optimize(graph)
    if _backend != "numba" or mode == "interpreted":
        return Interpreted(graph)
    if mode == "tiered":
        return tiers.start(graph, name, Interpreted(graph), compile_numba)
    return compile_numba(graph, name)


_LOGGED_KERNELS = weakref.WeakSet()   # Numba dispatchers a compile record has named already


def compile_numba(graph, name, log=True):
    """The Numba Program of an optimized graph (the interpreter if Numba is missing), logged."""
    t0 = time.perf_counter()
    try:
        from ..codegen import compile_graph  # imports Numba: only when a program is compiled
    except ImportError:
        return Interpreted(graph)
    prog = compile_graph(graph, name)
    kernels = list(getattr(prog, "kernels", ()) or ())
    shared = bool(kernels) and all(k in _LOGGED_KERNELS for k in kernels)
    _LOGGED_KERNELS.update(kernels)
    if log and compile_log.LOGGER.isEnabledFor(20):
        stats = prog.stats()
        # a specialisation whose source is one already compiled shares its dispatchers, and
        # their counters: no new machine code, whatever the counters say
        cache = ("hit (in memory)" if shared else "miss" if stats["cache_misses"] else
                 "hit" if stats["cache_hits"] else "hit (in memory)" if kernels else None)
        compile_log.record("compile", name, [v.aval for v in graph.inputs],
                           time.perf_counter() - t0, cache,
                           "interpreter" if prog.fallback else "numba", prog.fallback)
    return prog
