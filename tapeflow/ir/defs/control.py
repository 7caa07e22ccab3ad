"""Control flow: If and While, each carrying its branches / condition and body as Graphs.

``If(pred, *operands)``: ``then_graph`` and ``else_graph`` both take the operands and return
outputs of the same avals; only the chosen branch runs. ``While(*loop_vars, *operands)``:
``cond_graph`` (loop vars, operands -> bool scalar) and ``body_graph`` (loop vars, operands ->
loop vars) with ``n_vars`` loop variables; its outputs are the final loop variables, then the
number of iterations (int32), which the gradient uses to walk the loop backwards.

``CheckTripCount(x, n)``: ``x``, once the loop whose trip count is ``n`` is known to have run;
``n == 0`` raises InvalidArgumentError(``message``) when the program runs. A name a converted
loop assigns with no value before it is a loop variable starting from a placeholder, as in
TensorFlow's AutoGraph (tracer/pywhile.py): after a loop that ran zero times it was never
set, and TensorFlow's Assert says so ("loop must iterate at least once to initialize t").
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, defop


def _avals(graph):
    return tuple(v.aval for v in graph.outputs)


def _fits(given, taken):
    """Whether a value of aval ``given`` may enter a graph input of aval ``taken``: the same
    dtype and rank, each dim equal or unknown (None) in ``taken``. A loop variable traced
    with an unknown dim (a TensorArray grown in the loop) is given a value of known size
    when the graph is replayed with concrete values (a compiled call's backward, traced)."""
    return given.dtype == taken.dtype and len(given.shape) == len(taken.shape) and all(
        t is None or g == t for g, t in zip(given.shape, taken.shape))


def _inputs(graph):
    return tuple(v.aval for v in graph.inputs)


def _loop_avals(returned, given, taken):
    """The avals of loop variables a body returns ``returned`` for: ``given`` when it returns
    those, else the more general ones its graph ``taken`` (``_fits``), else None."""
    if returned == given:
        return given
    return taken if returned == taken else None


def _check_inputs(graph, avals, what):
    got = _inputs(graph)
    if got != tuple(avals) and (len(got) != len(avals) or not all(
            _fits(g, t) for g, t in zip(avals, got))):
        raise InferError(f"{what} takes {_fmt(got)} but is given {_fmt(avals)}")


def _fmt(avals):
    return "(" + ", ".join(f"{a.dtype.name}{list(a.shape)}" for a in avals) + ")"


def _check_pred(aval, what):
    if aval.dtype != D.bool_ or aval.shape != ():
        raise InferError(f"{what} must be a scalar bool, got {aval.dtype.name}{list(aval.shape)}")


def _if(avals, then_graph, else_graph):
    _check_pred(avals[0], "the predicate of If")
    _check_inputs(then_graph, avals[1:], "the then branch")
    _check_inputs(else_graph, avals[1:], "the else branch")
    outs, other = _avals(then_graph), _avals(else_graph)
    if outs != other:
        raise InferError(f"the branches of If return {_fmt(outs)} and {_fmt(other)}")
    return outs


def _while(avals, cond_graph, body_graph, n_vars):
    if not 0 <= n_vars <= len(avals):   # else the kernel would zip fewer values than it returns
        raise InferError(f"While has {n_vars} loop variables but {len(avals)} operands")
    _check_inputs(cond_graph, avals, "the condition of While")
    _check_inputs(body_graph, avals, "the body of While")
    (pred,) = _avals(cond_graph) or (None,)
    if pred is None:
        raise InferError("the condition of While returns nothing")
    _check_pred(pred, "the condition of While")
    loop = _loop_avals(_avals(body_graph), tuple(avals[:n_vars]), _inputs(body_graph)[:n_vars])
    if loop is None:
        raise InferError(f"the body of While returns {_fmt(_avals(body_graph))} for loop "
                         f"variables {_fmt(avals[:n_vars])}")
    return loop + (AVal((), D.int32),)


def agree(xs, ys):
    """Record that avals ``xs`` and ``ys`` have equal shapes (raise if they do not); a size
    only the run knows (a dim with ``run_time`` set: ``codegen/dims.py``) decides nothing
    here: the template reads it from the arrays. (For ``graph_inputs`` rules.)"""
    if len(xs) != len(ys) or not all(len(x.shape) == len(y.shape) and all(
            getattr(a, "run_time", False) or getattr(b, "run_time", False) or a == b
            for a, b in zip(x.shape, y.shape)) for x, y in zip(xs, ys)):
        raise ValueError("the graphs of this node do not fit each other")


def _if_graph_inputs(ins, then_graph, else_graph):
    yield "then_graph", ins[1:]
    yield "else_graph", ins[1:]


def _while_graph_inputs(ins, cond_graph, body_graph, n_vars):
    yield "cond_graph", ins
    yield "body_graph", ins


defop("If", _if, arity=None, attrs={"then_graph": "graph", "else_graph": "graph"}, multi_output=True,
      graph_inputs=_if_graph_inputs, graph_operands=(("then_graph", 1), ("else_graph", 1)),
      static_graphs=True)
defop("While", _while, arity=None, attrs={"cond_graph": "graph", "body_graph": "graph", "n_vars": "int"},
      multi_output=True, graph_inputs=_while_graph_inputs,
      graph_operands=(("cond_graph", 0), ("body_graph", 0)), static_graphs=True)


def _check_trip_count(avals, message):
    if avals[1] != AVal((), D.int32):
        raise InferError(f"CheckTripCount's second operand must be the int32 trip count, got "
                         f"{avals[1].dtype.name}{list(avals[1].shape)}")
    return avals[0]


defop("CheckTripCount", _check_trip_count, arity=2, attrs={"message": "str"}, moves_data=True)
