"""Kernels of If and While: run the branch / condition and body graphs on NumPy values; and of
CheckTripCount, the run-time check that a loop ran (ir/defs/control.py)."""
import numpy as np

from ..interpret import run_graph
from ..registry import kernel


@kernel("If")
def _if(pred, *operands, then_graph, else_graph):
    return run_graph(then_graph if pred else else_graph, *operands)


@kernel("While")
def _while(*operands, cond_graph, body_graph, n_vars):
    state, extra = list(operands[:n_vars]), list(operands[n_vars:])
    count = 0
    while run_graph(cond_graph, *state, *extra)[0]:
        state = list(run_graph(body_graph, *state, *extra))
        count += 1
    return (*state, np.int32(count))


@kernel("CheckTripCount")
def _check_trip_count(x, n, message):
    if n == 0:
        raise ValueError(message)       # dispatch: InvalidArgumentError naming the user's line
    return x
