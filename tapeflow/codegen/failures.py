"""A compiled program that fails on its data raises what the interpreter (and eager code) raises.

Numba code can raise only exceptions with constant messages (no index, no position), and
LAPACK or the ``rt`` helpers do not know which op called them. Failing is the cold path,
so the program's graph is run again on the NumPy interpreter with the same inputs: it
stops at the same node and raises ``InvalidArgumentError`` exactly as the op does eagerly
(op name, bad index, input types, the user's line). The hot path pays nothing: the
generated caller's ``try`` costs no instruction until something raises. A check on a size
only the run knows that fails (``rt.SizeCheck``) is not an error: the interpreter's results
are the call's.
"""
import numpy as np

from ..errors import InvalidArgumentError, OpError, user_line
from ..runtime.interpret import run_graph
from .concretize import concretize
from .jit_helpers import SizeCheck


def failure(graph, name, exc, args):
    """The exception to raise for ``exc`` from program ``name`` (of ``graph``) run on ``args``."""
    if isinstance(exc, OpError):
        return exc
    if len(args) != len(graph.inputs):
        return exc       # the call itself was wrong: the caller's error stands
    shapes = [np.shape(a) for a in args]
    if any(s != tuple(v.aval.shape) for s, v in zip(shapes, graph.inputs, strict=True)):
        # the program's entry check refused shapes it was not generated for: the op that
        # cannot take them says so, as eagerly (op, shapes, the user's line)
        try:
            concretize(graph, shapes, known=False)
        except OpError as e:
            return e
        return InvalidArgumentError(
            f"{name}: this program was generated for input shapes "
            f"{[list(v.aval.shape) for v in graph.inputs]}, got {[list(s) for s in shapes]}")
    try:
        run_graph(graph, *args)
    except OpError as e:
        return e
    except Exception:  # noqa: BLE001 - the compiled program's own error is the better report
        pass
    return InvalidArgumentError(f"{name}: {exc} (raised by the compiled program; the NumPy "
                                f"interpreter ran the same inputs without error) [at {user_line()}]")


class FailureHandler:
    """``failed(exc, args)`` for the generated caller of ``graph``'s program: raises what
    ``failure`` gives, or, when a size only the run knows broke a check (``rt.SizeCheck``: a
    broadcast the program assumed away, an empty list), returns the interpreter's results.
    ``reruns`` counts those calls (tests check the compiled path serves the sizes they run)."""

    def __init__(self, graph, name):
        self.graph, self.name, self.reruns = graph, name, 0

    def __call__(self, exc, args):
        if isinstance(exc, SizeCheck):
            self.reruns += 1
            return run_graph(self.graph, *args)
        raise failure(self.graph, self.name, exc, args) from None


def failure_handler(graph, name):
    """``FailureHandler(graph, name)``: see there."""
    return FailureHandler(graph, name)
