"""Run named Graph -> Graph passes in order, verifying the IR after each and optionally dumping it.

``tapeflow dump --passes`` shows the printed IR after every pass; ``dump`` collects
exactly that. Checking after each pass (not only at the end) is what names the pass
that broke a graph: a ``PassError`` says which one and why.
"""
from ..ir.graph import VerifyError, print_graph, verify as verify_graph
from .constant_fold import constant_fold
from .cse import cse
from .dce import dce
from .share_loops import share_loops
from .simplify import simplify
from .stop_gradient import fold_stop_gradient

PASSES = {
    "dce": dce,
    "cse": cse,
    "constant_fold": constant_fold,
    "simplify": simplify,
    "stop_gradient": fold_stop_gradient,
    "share_loops": share_loops,
}

# Before autodiff: everything that keeps gradients intact.
CLEANUP = ("constant_fold", "simplify", "cse", "dce")
# On forward/backward programs that go to codegen and are not differentiated again
# (share_loops: a While and its WhileGrad in one program run one forward loop).
FINAL = ("stop_gradient", "constant_fold", "simplify", "cse", "share_loops", "dce")


class PassError(Exception):
    """A pass returned a graph that breaks the IR or the pass contract."""


def run_passes(graph, passes, verify=True, dump=None):
    """Apply ``passes`` (names from ``PASSES``, or ``(name, fn)`` pairs) to ``graph`` in order.

    ``verify``: check the input and the result of every pass (``ir.graph.verify`` plus the
    pass contract: same inputs, same number of outputs). ``dump``: a list to which
    ``("input", text)`` and then ``(pass_name, text)`` after each pass are appended, or a
    callable called with ``(pass_name, text)``. Returns the final graph.
    """
    record = _recorder(dump)
    if verify:
        _check(graph, graph, "input")
    record("input", graph)
    for item in passes:
        name, fn = _resolve(item)
        out = fn(graph)
        if verify:
            _check(graph, out, name)
        record(name, out)
        graph = out
    return graph


def _resolve(item):
    if isinstance(item, str):
        if item not in PASSES:
            raise KeyError(f"unknown pass {item!r}; known passes: {', '.join(sorted(PASSES))}")
        return item, PASSES[item]
    if isinstance(item, tuple):
        return item
    return getattr(item, "__name__", repr(item)), item


def _recorder(dump):
    if dump is None:
        return lambda name, graph: None
    if callable(dump):
        return lambda name, graph: dump(name, print_graph(graph))
    return lambda name, graph: dump.append((name, print_graph(graph)))


def _check(before, after, name):
    try:
        verify_graph(after)
    except VerifyError as e:
        where = "the input graph" if after is before else f"after pass {name!r}"
        raise PassError(f"{where}: {e}") from e
    if [v.id for v in after.inputs] != [v.id for v in before.inputs]:
        raise PassError(f"pass {name!r} changed the graph inputs")
    if len(after.outputs) != len(before.outputs):
        raise PassError(f"pass {name!r} changed the number of outputs from "
                        f"{len(before.outputs)} to {len(after.outputs)}")
    for i, (a, b) in enumerate(zip(before.outputs, after.outputs, strict=True)):
        if tuple(a.aval.shape) != tuple(b.aval.shape) or a.aval.dtype != b.aval.dtype:
            raise PassError(f"pass {name!r} changed the type of output {i}")
