"""What a converted Python ``if`` runs (see if_rewrite.py): the branch, or one If node.

``if_stmt`` evaluates the test once. A Python value (or a concrete tensor) runs the chosen
branch, exactly as Python would. A symbolic tensor traces both branches, as ``tf.cond``
does (``control.SubTrace``), into one If node whose outputs are the names either branch
assigns (variables assigned in a branch are written back by ``control.emit_if``); Python
numbers a branch assigns become tensors when the two branches disagree on them (as in
TensorFlow), and values both branches leave identical pass through untouched.

Whatever the If node cannot express falls back to tracing the ``if`` once per path, as an
unconverted ``if`` is (``bool(test)`` -> ``TraceContext.decide``), so results are today's:
a name given a value by one branch only that had none before and is read later, a
non-tensor value that differs between the branches, different nestings, dtypes or shapes
of one name, a variable created in a branch, a branch watching on or using up a tape of the
enclosing code (both branches would see it; the tape is given back its state). Python side
effects of the branches then run once more, as they would in
TensorFlow's tracing of both ``tf.cond`` branches.
"""
import re
import sys

import numpy as np

from .. import _nest
from ..autodiff.tape import CREATED
from ..passes.rewrite import is_pure
from ..runtime.recorder import STATE
from ..runtime.tensor import Tensor, convert_to_tensor
from .context import current, predicate
from .control import SubTrace, emit_if
from .pywhile import _UNDEFINED, _Cells, _where
from .symbolic_tensor import SymbolicTensor, TracingError


class _Fallback(Exception):
    """The If node cannot express this ``if``: trace it per path instead."""


def if_stmt(test, then_fn, else_fn, cells_fn, names, temps, lineno):
    """Run ``if test(): then_fn() else: else_fn()``: as Python, or as an If node when the test
    is a symbolic tensor. ``cells_fn`` owns the cells of ``names``, the names the branches
    assign; ``temps`` of them need no value after the ``if``."""
    value = test()
    if isinstance(value, SymbolicTensor) and current() is not None:
        where = _where(sys._getframe(1).f_code, lineno)
        try:
            _traced_if(value, then_fn, else_fn, _Cells(cells_fn), names, temps, where)
            return
        except _Fallback:
            pass
    if value:       # a symbolic tensor here asks TraceContext.decide: one trace per path
        then_fn()
    else:
        else_fn()


# -- one branch's values: what kind each leaf is ------------------------------------------------

_NUMBERS = (bool, int, float, np.number)


def _leaf_kind(x):
    """'tensor', 'number' (may become a tensor), or 'object' (must be the same on both sides)."""
    if isinstance(x, (Tensor, SymbolicTensor)):
        return "tensor"
    if isinstance(x, _NUMBERS) or isinstance(x, np.ndarray):
        return "number"
    return "object"


def _signature(after):
    """Per name: undefined, or (nesting, per leaf its kind and, for a number its value, for
    an object its identity): every run of one branch must give the same."""
    sig = []
    for value in after:
        if value is _UNDEFINED:
            sig.append(None)
            continue
        leaves = _nest.flatten(value)
        sig.append((repr(_nest.structure(value)), tuple(_leaf_id(x) for x in leaves)))
    return tuple(sig)


def _leaf_id(x):
    kind = _leaf_kind(x)
    if kind == "tensor":
        return kind
    if kind == "number" and not isinstance(x, np.ndarray):
        return (kind, type(x).__name__, x)
    return (kind, id(x))


def _traced_if(pred, then_fn, else_fn, cells, names, temps, where):
    entry = [cells.get(n) for n in names]
    runs = {"then": [], "else": []}     # every run of a branch (several when it has paths)

    def branch(fn, side):
        def run():
            for n, v in zip(names, entry):
                cells.set(n, v)
            with tapes:
                fn()
            after = [cells.get(n) for n in names]
            runs[side].append(after)
            # every tensor and number leaf is returned: which become outputs is decided
            # once both branches are known (unused ones are dead code in the branch graph)
            return [x for v in after if v is not _UNDEFINED
                    for x in _nest.flatten(v) if _leaf_kind(x) != "object"]
        return run

    cond_pred = predicate(pred, f"the condition of the `if` at {where}")
    watched = _watched()
    tapes = _OuterTapes()
    try:
        try:
            traces = {side: SubTrace(branch(fn, side))
                      for side, fn in (("then", then_fn), ("else", else_fn))}
        except TracingError as e:
            if _only_fallback(e):
                raise _Fallback() from e
            raise
        if _unwatch(watched) or tapes.used:
            raise _Fallback()       # a branch watched or used a tape of the enclosing code
        if traces["then"].ctx.created_variables or traces["else"].ctx.created_variables:
            raise _Fallback()       # a variable made in a branch: once, on the path taken
        plan = _plan(runs, names, temps, where)
        _outputs(plan, traces, runs["then"][-1], runs["else"][-1])
        results = []
        if traces["then"].outs or any(t.ctx.assigned or not all(map(is_pure, t.ctx.graph.nodes))
                                      for t in traces.values()):      # tf.print in a branch
            results = emit_if(cond_pred, traces["then"], traces["else"])
    finally:
        for n, v in zip(names, entry):
            cells.set(n, v)
    it = iter(results)
    for n, (how, value) in zip(names, plan):
        if how == "entry":
            continue
        if how == "undefined":
            cells.set(n, _UNDEFINED)
            continue
        leaves = [next(it) if lk == "out" else lv for lk, lv in value[1]]
        cells.set(n, _nest.pack_sequence_as(value[0], leaves))


def _watched():
    """What the recording tapes watch now: ``tape.watch`` in a branch on one of them would
    be seen by both branches (and the If) once both are traced."""
    return [(rec, len(rec.tensor_op), len(rec.variables)) for rec in STATE.tapes]


def _unwatch(watched):
    """Forget what the branches' traces watched on the enclosing tapes; True if anything."""
    changed = False
    for rec, n_ids, n_vars in watched:
        for key in list(rec.tensor_op)[n_ids:]:
            del rec.tensor_op[key]
            changed = True
        for key in list(rec.variables)[n_vars:]:
            del rec.variables[key]
            changed = True
    return changed


class _OuterTapes:
    """While a branch is traced: a non-persistent tape made before the ``if`` that the branch
    uses up (``gradient``/``jacobian``) is given its record back when the branch's trace ends,
    so the other branch, or per-path tracing after all, finds it as it was."""

    def __init__(self):
        self.serial = next(CREATED)
        self.used = False
        self.freed = []

    def __enter__(self):
        self.previous, STATE.on_free = STATE.on_free, self._on_free
        return self

    def _on_free(self, tape):
        if tape._serial < self.serial:
            self.used = True
            self.freed.append((tape, tape._rec, tape._rec.entries, tape._freed_rec,
                               tape._watched_variables))
        elif self.previous is not None:
            self.previous(tape)

    def __exit__(self, *exc):
        STATE.on_free = self.previous
        for tape, rec, entries, freed, watched in reversed(self.freed):
            tape._rec, rec.entries, tape._freed_rec, tape._watched_variables = (rec, entries, freed,
                                                                                watched)
        self.freed = []
        return False


def _only_fallback(e):
    """A TracingError merging a branch's own per-path ifs: the branches differ in a way
    only per-path tracing of this ``if`` expresses too."""
    msg = str(e)
    return "different structures" in msg or "different types" in msg or "different Python value" in msg


def _plan(runs, names, temps, where):
    """Per name: ("entry", None) keep the value before the if; ("undefined", None); or
    ("value", (template, [(kind, leaf)...])) with kind "out" (an If output) or "same"."""
    for side in runs:
        if len({_signature(r) for r in runs[side]}) != 1:
            raise _Fallback()       # the branch's own paths disagree on a name's kind
    then_after, else_after = runs["then"][-1], runs["else"][-1]
    _check_returns(names, then_after, else_after, where)
    plan = []
    for k, n in enumerate(names):
        a, b = then_after[k], else_after[k]
        if n in temps:
            plan.append(("entry", None))
            continue
        if a is _UNDEFINED and b is _UNDEFINED:
            plan.append(("undefined", None))
            continue
        if a is _UNDEFINED or b is _UNDEFINED:
            raise _Fallback()       # TensorFlow: must be defined in both branches
        if _nest.structure(a) != _nest.structure(b):
            raise _Fallback()
        leaves = []
        for x, y in zip(_nest.flatten(a), _nest.flatten(b), strict=True):
            kx, ky = _leaf_kind(x), _leaf_kind(y)
            if x is y:
                leaves.append(("same", x))
            elif kx == "object" or ky == "object":
                raise _Fallback()
            elif kx == ky == "number" and _same_number(x, y):
                leaves.append(("same", x))
            else:
                leaves.append(("out", (x, y)))
        plan.append(("value", (a, leaves)))
    return plan


def _check_returns(names, then_after, else_after, where):
    """An ``if`` on a tensor where one branch returns (return_rewrite.py names the flag
    ``<prefix>do_return`` and the value ``<prefix>retval``) and the other does not, or returns
    None, is traced per path (TensorFlow raises "the else branch must also have a return
    statement"; per path, each path returns its own value, as Python)."""
    values = dict(zip(names, zip(then_after, else_after, strict=True)))
    flag = next((n for n in names if re.fullmatch(r"_+tfw_do_return", n)), None)
    value = next((n for n in names if re.fullmatch(r"_+tfw_retval", n)), None)
    if flag is not None and values[flag][0] is not values[flag][1]:
        raise _Fallback()
    if value is not None and (values[value][0] is None) != (values[value][1] is None):
        raise _Fallback()


def _same_number(x, y):
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return x is y
    return bool(x == y)


def _leaf_values(trace, after):
    """Per name: the trace's output Value of each of its non-object leaves (None for objects),
    in the order the branch returned them."""
    it = iter(trace.outs)
    return [[] if v is _UNDEFINED else
            [None if _leaf_kind(x) == "object" else next(it) for x in _nest.flatten(v)]
            for v in after]


def _outputs(plan, traces, then_after, else_after):
    """Set each trace's ``outs`` to the Values of the If's outputs; check their types agree."""
    values = {"then": _leaf_values(traces["then"], then_after),
              "else": _leaf_values(traces["else"], else_after)}
    outs = {"then": [], "else": []}
    for k, (how, value) in enumerate(plan):
        if how != "value":
            continue
        for j, (kind, leaf) in enumerate(value[1]):
            if kind != "out":
                continue
            x, y = leaf
            vt, ve = values["then"][k][j], values["else"][k][j]
            if _leaf_kind(x) == "number" and _leaf_kind(y) == "tensor":
                vt = _const(traces["then"], x, ve.aval)
            elif _leaf_kind(y) == "number" and _leaf_kind(x) == "tensor":
                ve = _const(traces["else"], y, vt.aval)
            if vt.aval != ve.aval:
                raise _Fallback()   # per path, each side keeps its own dtype and shape
            outs["then"].append(vt)
            outs["else"].append(ve)
    for side in ("then", "else"):
        traces[side].outs = outs[side]


def _const(trace, number, aval):
    """A Python number of one branch as a constant of the other branch's tensor type."""
    try:
        t = convert_to_tensor(number, dtype=aval.dtype)
    except Exception as e:
        raise _Fallback() from e
    if t.aval != aval:
        raise _Fallback()
    with trace.ctx:
        return trace.ctx.value_of(t)


__all__ = ["if_stmt"]
