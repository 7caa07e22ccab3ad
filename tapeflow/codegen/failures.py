"""A compiled program that fails on its data raises what the interpreter (and eager code) raises.

Numba code can raise only exceptions with constant messages (no index, no position), and
LAPACK or the ``rt`` helpers do not know which op called them. Failing is the cold path,
so the program's graph is run again on the NumPy interpreter with the same inputs: it
stops at the same node and raises ``InvalidArgumentError`` exactly as the op does eagerly
(op name, bad index, input types, the user's line). The hot path pays nothing: the
generated caller's ``try`` costs no instruction until something raises.
"""
import numpy as np

from ..errors import InvalidArgumentError, OpError, user_line
from ..runtime.interpret import run_graph
from .concrete import concretize


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


def failure_handler(graph, name):
    """``failed(exc, args)`` for the generated caller of ``graph``'s program."""
    return lambda exc, args: failure(graph, name, exc, args)
