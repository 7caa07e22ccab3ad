"""What a converted Python ``while`` runs (see convert.py): a Python loop or a While node.

``while_stmt`` decides once per loop, at its first test, as TensorFlow's AutoGraph does: a
Python value (or a concrete tensor) runs the plain Python loop, with Python's semantics
(a test that becomes a symbolic tensor on a later iteration goes through
``TraceContext.decide``, like any Python ``if``); a symbolic tensor builds one While node
(``control.loop``) whose condition and body run the user's test and body with the loop's
variables bound to the While's values.

Loop variables are the names the loop assigns that have a value before it, except
temporaries (names the body assigns before reading and nothing reads elsewhere). A name with
no value before the loop that code elsewhere reads is one too, as in TensorFlow's AutoGraph:
the body is traced once to learn the type it gives the name, the loop starts it from zeros
of that type (TensorFlow's ``_placeholder_value``; an unknown size is 0 there and None in
the loop variable's static shape), and its value after the loop is checked
when the program runs: a loop that ran zero times never set it, and ``CheckTripCount``
raises InvalidArgumentError "loop must iterate at least once to initialize t". A name the
body leaves undefined (assigned on one path only) or sets to what cannot be a loop variable
is undefined after the loop; reading it raises TensorFlow's ValueError "must be defined
before the loop" (``undefined_after_loop``).
"""
import linecache
import re
import sys
import weakref

import numpy as np

from .. import _nest
from ..ops import creation, math
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable
from .context import DecisionLimitError, LoopError, current, predicate
from .control import _with_shape, loop
from .loop_lists import ListShapes, Zero, lists, reshaped, shaped_lists, size_lists
from .symbolic_tensor import SymbolicTensor, TracingError

_UNDEFINED = object()
_undefined_after = weakref.WeakKeyDictionary()   # code -> {name: (loop's "file:line", why)}
_trips = []     # per while_stmt being entered: its static trip count, if its test tells one
_options = []   # per traced loop body running: what set_loop_options gave (_LoopOptions)


class _LoopOptions:
    """What ``set_loop_options`` gave in one traced body: (value, shape) pairs, and a bound."""

    def __init__(self):
        self.pairs, self.maximum_iterations = [], None


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """``tf.autograph.experimental.set_loop_options``, called in a converted loop's body:
    ``shape_invariants`` is a list of (loop variable, TensorShape) pairs, as
    ``tf.while_loop``'s, naming the variable by its value at the start of the body; a None
    in a shape lets that size change across iterations. ``maximum_iterations`` (an int, or
    a tensor from before the loop) stops the loop after that many iterations, as
    ``tf.while_loop``'s. Elsewhere (eagerly, in a Python loop) it does nothing, as in
    TensorFlow; the other options do nothing here."""
    if _options:
        if shape_invariants:
            _options[-1].pairs.extend(shape_invariants)
        if maximum_iterations is not None:
            _options[-1].maximum_iterations = maximum_iterations


def note_trip_count(n):
    """Called by a loop's test (``pyfor.TensorIter.more``): the loop runs ``n`` times (an int),
    known while tracing; a dynamic-size TensorArray carried by the loop is sized to it."""
    if _trips:
        _trips[-1] = n


def while_stmt(test, body, cells_fn, names, temps, lineno, test_names=(), returns=False):
    """Run ``while test(): body()``: as Python, or as a While node when the first test is a
    symbolic tensor. ``cells_fn`` owns the cells of ``names``, the names the loop assigns;
    ``temps`` of them are temporaries, ``test_names`` assigned by the test (``:=``);
    ``returns``: the body has a ``return`` (return_rewrite.py), which a While cannot hold."""
    caller = sys._getframe(1).f_code
    ctx = current()
    state = None if ctx is None else (dict(ctx.var_state), dict(ctx.assigned))
    _trips.append(None)
    try:
        first = test()
    except NameError as e:
        if ctx is None or _name_of(e) not in names:
            raise
        raise _UnboundInTest(f"{_name_of(e)!r} must be defined before the loop: the test of "
                             f"the `while` at {_where(caller, lineno)} reads it") from e
    finally:
        trips = _trips.pop()
    if not isinstance(first, SymbolicTensor):
        def rest(state, pred):  # the iterations left, once the test has become a tensor
            if ctx is not None:
                ctx.var_state, ctx.assigned = state
            _traced_loop(test, body, cells_fn, names, temps, test_names, caller, lineno,
                         pred=pred)
        _python_loop(test, body, first, caller, lineno,
                     None if returns or ctx is None else rest)
    elif returns:       # per path, as before conversion; TensorFlow rejects this loop
        try:
            value = first
            while value:
                body()
                value = test()
        except DecisionLimitError as e:
            if getattr(e, "_noted", False):
                raise
            err = DecisionLimitError(
                f"{e}\nThe `while` at {_where(caller, lineno)} is not converted to a While node "
                f"because its body has a `return` (TensorFlow: \"a return statement cannot be "
                f"placed inside this TensorFlow loop\"); it runs per path.")
            err._noted = True
            raise err.with_traceback(e.__traceback__) from None
    else:
        # the While's condition evaluates the test again, variable assignments included
        ctx.var_state, ctx.assigned = state
        for vid, (_, value) in ctx.var_inputs.items():   # captured by the first test
            ctx.var_state.setdefault(vid, value)
        _traced_loop(test, body, cells_fn, names, temps, test_names, caller, lineno, trips,
                     first)


def _python_loop(test, body, value, caller, lineno, rest=None):
    """``while value: body(); value = test()``. When a later test is a symbolic tensor (a
    ``break`` on a tensor, made a flag by while_rewrite.py, or a counter that became a
    tensor), ``rest`` runs the remaining iterations as one While node from the loop's
    variables as they are. AutoGraph raises NotImplementedError there ("the condition of
    while loop started as non-Tensor, then changed to Tensor"); deciding per iteration
    instead would trace a path per way out of the loop, and two such loops in sequence
    multiply them."""
    symbolic = False
    try:
        while value:
            body()
            ctx = current()
            state = None if ctx is None else (dict(ctx.var_state), dict(ctx.assigned))
            value = test()
            if rest is not None and isinstance(value, SymbolicTensor):
                rest(state, value)
                return
            symbolic = symbolic or isinstance(value, SymbolicTensor)
    except DecisionLimitError as e:
        if not symbolic or getattr(e, "_noted", False):
            raise
        err = DecisionLimitError(
            f"{e}\nThe `while` at {_where(caller, lineno)} runs as a Python loop: its test was a "
            f"Python value at its first evaluation, and a `while` is converted to a While node "
            f"only when its first test is a symbolic tensor (as TensorFlow's AutoGraph decides). "
            f"Make the first test a tensor computed from the function's tensor inputs (e.g. "
            f"`while tf.reduce_sum(x) < 10.0:` rather than `while True:` and a `break` on a "
            f"tensor).")
        err._noted = True
        raise err.with_traceback(e.__traceback__) from None


class unconverted:
    """Context of a ``while`` left as Python: names the reason if it loops on a tensor."""

    def __init__(self, reason, lineno):
        self.reason, self.lineno = reason, lineno

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if not isinstance(e, DecisionLimitError) or getattr(e, "_noted", False):
            return False
        caller = sys._getframe(1).f_code
        err = DecisionLimitError(f"{e}\nThe `while` at {_where(caller, self.lineno)} is not "
                                 f"converted to a While node because {self.reason}.")
        err._noted = True
        raise err.with_traceback(e.__traceback__) from None


# -- the While node ------------------------------------------------------------------------------

class _Cells:
    """The variables of one loop, by name, through the cells of the function that owns them."""

    def __init__(self, cells_fn):
        self.cells = dict(zip(cells_fn.__code__.co_freevars, cells_fn.__closure__ or ()))

    def get(self, name):
        try:
            return self.cells[name].cell_contents
        except ValueError:
            return _UNDEFINED

    def set(self, name, value):
        if value is _UNDEFINED:
            try:
                del self.cells[name].cell_contents
            except ValueError:
                pass
        else:
            self.cells[name].cell_contents = value


def _traced_loop(test, body, cells_fn, names, temps, test_names, caller, lineno, trips=None,
                 pred=None):
    """The While node; ``trips``: its trip count if the trace knows it; ``pred``: its first
    test, a tensor of the trace (what a TensorArray it grows takes its run-time size from)."""
    where = _where(caller, lineno)
    zero = Zero(lambda: pred)
    cells = _Cells(cells_fn)
    entry = {n: cells.get(n) for n in names}
    # a name the test assigns is the test's value in each iteration, not carried across
    carried = [n for n in names if entry[n] is not _UNDEFINED and n not in temps
               and n not in test_names]
    # no value before the loop, read elsewhere: carried from a placeholder once the first
    # traced iteration has given it a type (``_Staged``)
    late = [n for n in names if entry[n] is _UNDEFINED and n not in temps and n not in test_names]
    init = [_check_value(n, entry[n], where, "before the loop") for n in carried]
    init = [size_lists(v, trips, zero) for v in init]
    staging = bool(late)
    why_undefined = {}

    def bind(values):
        for n in scratch:           # each iteration starts with the temporaries as at entry
            cells.set(n, entry[n])
        for n, v in zip(carried, values, strict=True):
            cells.set(n, v)

    def run(fn):
        try:
            return fn()
        except NameError as e:
            err = _name_error(e, undefined, where)
            if err is e:
                raise
            raise err from e

    def cond_fn(*values):
        bind(values)
        return run(test)

    def body_fn(*values):
        bind(values)
        if test_names:
            run(test)               # the body sees what the test assigned in its iteration
        _options.append(_LoopOptions())
        try:
            run(body)
        finally:
            options = _options.pop()
        found = _invariants(options.pairs, carried, values, where)
        bound = options.maximum_iterations
        if any(n not in invariants or invariants[n] != s for n, s in found.items()) \
                or (bound is not None and not _same_bound(bound, limit[0])):
            raise _Invariants(found, bound)
        if staging:                 # one run per path of the body (traced per path)
            runs.append({n: cells.get(n) for n in late})
        new = [_check_value(n, cells.get(n), where, "after an iteration") for n in carried]
        if reshaped(init, new):
            raise ListShapes(new)
        return new

    invariants = {}                 # name -> shape, from set_loop_options in the body
    limit = [None]                  # its maximum_iterations
    checked = []                    # the late names carried: checked after the loop
    runs = []                       # while staging: per path of the body, the late names' values

    def traced():
        if staging:
            raise _Staged(runs)

    try:
        while True:
            scratch = [n for n in names if n not in carried]
            undefined = {n for n in scratch if entry[n] is _UNDEFINED}
            runs.clear()            # per path of the body in this attempt
            labels = []             # one per flat loop variable, for the While's errors
            for n, value in zip(carried, init):
                k = len(_leaves(value))
                labels += [n] if k == 1 else [f"{n}[{i}]" for i in range(k)]
            try:
                shapes = None if not invariants else [invariants.get(n) for n in carried]
                outs, count = loop(cond_fn, body_fn, init, limit[0], var_names=labels,
                                   with_count=True, traced=traced, shape_invariants=shapes)
                break
            except _Invariants as e:     # traced again, the loop variables relaxed, bounded
                invariants.update(e.shapes)
                limit[0] = e.maximum_iterations if e.maximum_iterations is not None else limit[0]
            except ListShapes as e:      # traced again, the TensorArrays' tensors made
                init = shaped_lists(init, e.values, zero)   # here, not in the body
            except _Staged as e:         # traced again, carrying the late names it could
                staging = False
                for n in late:
                    values = [r[n] for r in e.runs]
                    start, why_undefined[n] = _placeholder(
                        _UNDEFINED if any(v is _UNDEFINED for v in values) else values[0])
                    if start is not None:
                        carried.append(n)
                        init.append(start)
                        checked.append(n)
    finally:
        for n in names:
            cells.set(n, entry[n])
    if checked:
        message = f"loop must iterate at least once to initialize {', '.join(checked)}"
        k = len(carried) - len(checked)
        outs = list(outs[:k]) + [_nest.pack_sequence_as(v, [
            apply("CheckTripCount", [x, count], {"message": message}) for x in _leaves(v)])
            for v in outs[k:]]
    for n, v in zip(carried, outs, strict=True):
        cells.set(n, v)
    if test_names:
        test()                      # what the last, failing, test assigned
    if undefined:
        _undefined_after.setdefault(caller, {}).update(
            {n: (where, why_undefined.get(n)) for n in undefined})


def _same_bound(a, b):
    """Whether bound ``a`` is the bound ``b`` the loop was traced with (a tensor: itself)."""
    if isinstance(a, (Tensor, SymbolicTensor)) or isinstance(b, (Tensor, SymbolicTensor)):
        return a is b
    return b is not None and int(a) == int(b)


class _Invariants(Exception):
    """The body called set_loop_options with shape invariants or a bound not yet applied."""

    def __init__(self, shapes, maximum_iterations=None):
        super().__init__("internal: a loop's shape invariants became known")
        self.shapes, self.maximum_iterations = shapes, maximum_iterations


def _invariants(pairs, carried, values, where):
    """{name: shape} for set_loop_options' (value, shape) pairs: each value must be a loop
    variable as the body received it."""
    out = {}
    for pair in pairs:
        value, shape = pair
        k = next((k for k, v in enumerate(values) if v is value), None)
        if k is None:
            raise ValueError(f"set_loop_options(shape_invariants=...) in the `while` on a tensor "
                             f"at {where} names a value that is not one of its loop variables as "
                             f"the body starts ({', '.join(carried) or 'none'}): give the "
                             f"variable itself, before the body assigns it")
        out[carried[k]] = shape
    return out


class _Staged(Exception):
    """The body has been traced: per path of it, the values it gave the names with no value
    before the loop (their placeholders are made from them, and the loop traced again)."""

    def __init__(self, runs):
        super().__init__("internal: the first iteration of a loop was staged")
        self.runs = runs


def _placeholder(value):
    """(start, why not): TensorFlow's ``_placeholder_value``, zeros of the type of ``value``
    (the name's value after the first traced iteration; 0 where a size is unknown while
    tracing), or (None, why it cannot be carried)."""
    if value is _UNDEFINED:
        return None, "the body does not assign it on every path"
    if lists(value):
        return None, "it holds a TensorArray made in the body"
    leaves = []
    for leaf in _leaves(value):
        if isinstance(leaf, (Tensor, SymbolicTensor)) and not isinstance(leaf, Variable):
            shape = tuple(leaf.aval.shape)
            zeros = creation.zeros([0 if d is None else d for d in shape], dtype=leaf.dtype)
            # a size unknown while tracing is 0 in the placeholder, None in its static shape
            leaves.append(zeros if None not in shape else _with_shape(zeros, shape))
        elif isinstance(leaf, (bool, int, float, np.number)):
            leaves.append(type(leaf)(0))
        else:
            return None, f"it holds a {type(leaf).__name__}, which cannot be a loop variable"
    return _nest.pack_sequence_as(value, leaves), None


def _leaves(value):
    return _nest.flatten(value)


def _check_value(name, value, where, when):
    """A loop variable's value: tensors (Python numbers are converted), or nested lists of them."""
    if value is _UNDEFINED:
        raise TracingError(f"{name!r} has no value {when} in the `while` on a tensor at {where} "
                           f"(deleted?): a loop variable needs one")
    for leaf in _leaves(value):
        if not isinstance(leaf, (Tensor, SymbolicTensor, Variable, bool, int, float, np.number,
                                 np.ndarray)):
            raise TracingError(
                f"{name!r} is a loop variable of the `while` on a tensor at {where} (the loop "
                f"assigns it and it has a value {when}) but holds a {type(leaf).__name__}; loop "
                f"variables of a While node must be tensors or Python numbers")
    return value


def _name_error(e, undefined, where):
    """TensorFlow's message for a loop variable with no value before the loop, else ``e``."""
    inner = undefined_after_loop(e)
    if inner is not None:
        return inner
    name = _name_of(e)
    if name in undefined:
        return LoopError(
            f"{name!r} must be defined before the loop: the `while` on a tensor at {where} reads "
            f"it before assigning it in an iteration, so it is a loop variable, and a While node "
            f"needs the value of every loop variable before its first iteration")
    return e


def _name_of(e):
    name = getattr(e, "name", None)
    if name is None:
        m = re.search(r"'([^']+)'", str(e))
        name = m.group(1) if m else None
    return name


def undefined_after_loop(e):
    """For a NameError raised reading a name that a ``while`` on a tensor left undefined:
    TensorFlow's "must be defined before the loop" error naming both lines; else None."""
    tb = e.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    found = _undefined_after.get(tb.tb_frame.f_code, {}).get(_name_of(e))
    if found is None:
        return None
    where, why = found
    why = why or "it is assigned only inside the loop"
    return LoopError(
        f"{_name_of(e)!r} must be defined before the loop: the `while` on a tensor at {where} "
        f"cannot carry it as a loop variable from a placeholder ({why}), so it has no value "
        f"after the loop (read at {_where(tb.tb_frame.f_code, tb.tb_lineno)})")


class _UnboundInTest(TracingError, UnboundLocalError):
    """A loop's first test reads a name with no value yet (TensorFlow: UnboundLocalError)."""


def _where(code, lineno):
    text = linecache.getline(code.co_filename, lineno).strip()
    return f"{code.co_filename}:{lineno}" + (f": {text}" if text else "")


# -- `and`, `or`, `not` in a loop test --------------------------------------------------------------

def _pred(x):
    return predicate(x, "the test of a `while`")


def and_(*thunks):
    """``a and b and ...``: Python's for Python values, ``logical_and`` from a symbolic tensor on."""
    value = thunks[0]()
    if len(thunks) == 1:
        return value
    if isinstance(value, SymbolicTensor):
        return math.logical_and(_pred(value), _pred(and_(*thunks[1:])))
    return and_(*thunks[1:]) if value else value


def or_(*thunks):
    """``a or b or ...``: Python's for Python values, ``logical_or`` from a symbolic tensor on."""
    value = thunks[0]()
    if len(thunks) == 1:
        return value
    if isinstance(value, SymbolicTensor):
        return math.logical_or(_pred(value), _pred(or_(*thunks[1:])))
    return value if value else or_(*thunks[1:])


def not_(value):
    """``not a``: ``logical_not`` of a symbolic tensor, Python's ``not`` otherwise."""
    if isinstance(value, SymbolicTensor):
        return math.logical_not(_pred(value))
    return not value


__all__ = ["while_stmt", "unconverted", "undefined_after_loop", "and_", "or_", "not_"]
