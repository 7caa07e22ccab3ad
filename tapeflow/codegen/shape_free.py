"""Shape-free source: every size the program derives from its inputs is read from them at run time.

A program generated for inputs of shapes [128, 784] and one for [104, 784] must be the
same text, so they share one cache entry and one Numba compile. While a program is
generated (``symbolic(graph)``), each array input's dimension is a ``Dim``: an int with its
traced value that also carries an expression reading it (``va.shape[0]``); so is each
dimension of an array constant passed as an argument (a loop's zero initial state, as big as
the batch). The graph's shapes are inferred again from those (``OPS[op].infer``), so derived
sizes are expressions too (``va.shape[0] * va.shape[1]`` after a flattening reshape), and
templates write a ``Dim`` into the source as its expression. The graphs nested in If, While
and the loop gradients are inferred again the same way, their inputs given the avals the node
feeds them (their OpDef's ``graph_inputs``), so a loop body's code reads the sizes too. A size that cannot
be followed (an infer rule that converts to a plain int, a body that returns a literal size
for a loop variable) stays a literal: that costs a compile per size, never a wrong value.

Every decision taken on a ``Dim`` is recorded as a guard, a condition on the input shapes:
an equality an op relies on (the inner dimensions of a matmul, broadcasting operands), a
comparison (``n == 1``), or a size used as a plain number (``range(n)`` unrolled). The
program checks all its guards on entry, so it runs only on shapes it was generated for, and
equal source means equal guards. Equal dimensions are unified: the source writes one
expression for all of them (the first input's), checked equal on entry.

Decisions that only change speed, not results (parallel loops, where a program is cut into
parts, huge pages) record no guard but a size class (``sizeclass.choose``, in ``decisions``):
sizes across such a threshold generate another source, each correct, and
``Program.size_classes`` says which sizes those are.

A size no input gives (a TensorArray a loop of run-time trip count grows, a loop variable
whose size changes: None in the graph) is a ``RunDim``, read from the array that holds it
(``held``). Nothing about it can be checked on entry: a decision on one is assumed and
checked where the program relies on it (``_Scope.check``), and a call that fails such a
check runs on the interpreter; so one program serves every trip count.
"""
import re
import threading
from contextlib import contextmanager

import numpy as np

from ..ir.graph import Graph, Value, constant_of, is_constant
from ..ir.opdef import OPS, AVal
from .broadcast_only import broadcast_only, uniform  # noqa: F401  (uniform: generate.py's)
from .slices import sliced_shape

_STATE = threading.local()


class _Scope:
    """Unification and guards of one generation (thread-local, so a graph printed in another
    thread meanwhile sees plain ints)."""

    def __init__(self):
        self.parent = {}       # expr -> expr (union-find)
        self.order = {}        # expr -> first-seen index (the earliest is a class's name)
        self.guards = []       # code expressions that must be True on entry, in order
        self.recording = True
        self.inferring = False   # re-inferring the graph's shapes (see Dim.__eq__)
        self.shrunk = set()    # ids of constants generated with all-1 shapes (_broadcast_only_constants)
        self.bound = {}        # id(graph) -> graph: nested graphs whose inputs took Dims
        self.small = set()     # ids of values generated smaller than traced (_broadcast_only)
        self.display = False   # Dims print as ``?`` (``display``)
        self.decisions = []    # speed-only choices taken on sizes (sizeclass.choose)
        self.sizes = {}        # expression reading an input size -> its traced value
        # run-time sizes (``RunDim``): the checks decisions on them rely on, per node (made
        # while its shapes are inferred, emitted before its code), the node being inferred,
        # the emitters writing code (a decision taken there is checked there)
        self.pending = {}      # id(node) -> [condition, ...]
        self.node = None
        self.emitters = []
        self.assume = False    # a nested node's own rule: run-time sizes decide nothing there
        self.made = []         # nodes given an output size read from their own array

    def find(self, e):
        while self.parent.get(e, e) != e:
            e = self.parent[e]
        return e

    def seen(self, e):
        self.order.setdefault(e, len(self.order))

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self.seen(ra)
        self.seen(rb)
        # a literal names the class; else the expression seen first
        if _LITERAL.fullmatch(rb) or (not _LITERAL.fullmatch(ra) and self.order[rb] < self.order[ra]):
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.guard(f"{_paren(a)} == {_paren(b)}")

    def guard(self, text):
        if self.recording and ".shape[" in text and text not in self.guards:
            self.guards.append(text)

    def check(self, text):
        """A decision on a run-time size holds only if ``text`` does when the program runs:
        checked before the node being inferred, or where the code being emitted took it."""
        if self.assume or not self.recording:
            return
        if self.node is not None:
            pending = self.pending.setdefault(id(self.node), [])
            if text not in pending:
                pending.append(text)
        elif self.emitters:
            self.emitters[-1].size_check(text)
        else:
            raise SizeUnknown(f"a decision on a size only the run knows ({text}) outside any node")


_LITERAL = re.compile(r"-?\d+")
_REMAINDER = re.compile(r" % [^ ]+$")
_SIMPLE = re.compile(r"-?\d+|[A-Za-z_]\w*(\.shape\[\d+\])?")


def _paren(e):
    return e if _SIMPLE.fullmatch(e) else f"({e})"


def current():
    """The scope of the generation running in this thread, or None."""
    return _scope()


def _scope():
    return getattr(_STATE, "scope", None)


def value(d):
    """The plain int of a size (a Dim's traced value), recording nothing."""
    return int.__add__(d, 0) if isinstance(d, Dim) else d


def code(x):
    """The code of size ``x`` (a Dim or an int) in the current generation (sizeclass.py)."""
    return _expr(x)


def _expr(x):
    """The code of ``x`` (a Dim or an int) within the current scope."""
    if isinstance(x, Dim):
        s = _scope()
        return s.find(x.expr) if s is not None else str(value(x))
    return str(int(x))


class Dim(int):
    """A dimension: its traced value (as an int) and the expression computing it at run time."""

    def __new__(cls, val, expr):
        d = int.__new__(cls, val)
        d.expr = expr
        return d

    def __reduce__(self):          # copies and pickles are plain ints
        return (int, (value(self),))

    # -- text: the expression, inside a generation ------------------------------------------
    def __str__(self):
        s = _scope()
        if s is None:
            return str(value(self))
        e = _expr(self)
        return "?" if s.display and not _LITERAL.fullmatch(e) else _paren(e)

    __repr__ = __str__

    def __format__(self, spec):
        if spec:
            return format(self._fixed(), spec)
        return str(self)

    # -- arithmetic: new expressions -------------------------------------------------------
    def _arith(self, other, op, fn, reflected=False):
        if not isinstance(other, int):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        v = fn(value(a), value(b))
        s = _scope()
        if s is None:
            return v
        ea, eb = _expr(a), _expr(b)
        if op == "*" and (ea == "1" or eb == "1"):
            e = eb if ea == "1" else ea
        elif op in "+-" and eb == "0":
            e = ea
        elif op == "+" and ea == "0":
            e = eb
        elif op == "//" and eb == "1":
            e = ea
        else:
            e = f"{_paren(ea)} {op} {_paren(eb)}"
        if _LITERAL.fullmatch(e):
            return v
        return (RunDim if isinstance(a, RunDim) or isinstance(b, RunDim) else Dim)(v, e)

    def __add__(self, o): return self._arith(o, "+", int.__add__)
    def __radd__(self, o): return self._arith(o, "+", int.__add__, True)
    def __sub__(self, o): return self._arith(o, "-", int.__sub__)
    def __rsub__(self, o): return self._arith(o, "-", int.__sub__, True)
    def __mul__(self, o): return self._arith(o, "*", int.__mul__)
    def __rmul__(self, o): return self._arith(o, "*", int.__mul__, True)
    def __floordiv__(self, o): return self._arith(o, "//", int.__floordiv__)
    def __rfloordiv__(self, o): return self._arith(o, "//", int.__floordiv__, True)
    def __mod__(self, o): return self._arith(o, "%", int.__mod__)
    def __rmod__(self, o): return self._arith(o, "%", int.__mod__, True)

    def __neg__(self):
        return 0 - self

    def __pos__(self):
        return self

    # -- decisions: guards ----------------------------------------------------------------
    def _fixed(self):
        """The value used as a plain number: the program is for this size only."""
        v = value(self)
        s = _scope()
        if s is not None and s.recording:
            s.union(_expr(self), str(v))
        return v

    def __index__(self):
        return self._fixed()

    def __int__(self):
        return self._fixed()

    def __float__(self):
        return float(self._fixed())

    def __bool__(self):
        return self != 0

    def __hash__(self):
        return hash(value(self))

    def __eq__(self, other):
        if not isinstance(other, int):
            return NotImplemented
        s = _scope()
        v = value(self) == value(other)
        if s is None or not s.recording:
            return v
        ea, eb = _expr(self), _expr(other)
        if ea == eb:
            return True
        if s.inferring and eb == "1":
            # a size read from the inputs is never taken for a broadcast 1 by shape inference,
            # so a batch of one gets the same program; ``symbolic`` checks the shapes it then
            # infers equal the traced ones (and keeps the traced ones where they are not)
            return False
        if isinstance(self, RunDim) or isinstance(other, RunDim):
            return _assumed_equal(s, ea, eb)
        if v:
            s.union(ea, eb)
        else:
            s.guard(f"{_paren(ea)} != {_paren(eb)}")
        return v

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def _compare(self, other, op, fn, reflected=False):
        if not isinstance(other, (int, float)):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        r = fn(value(a), value(b))
        s = _scope()
        if s is not None and s.recording:
            ea = _expr(a) if isinstance(a, int) else repr(a)
            eb = _expr(b) if isinstance(b, int) else repr(b)
            text = f"{_paren(ea)} {op} {_paren(eb)}"
            if isinstance(a, RunDim) or isinstance(b, RunDim):
                s.check(text if r else f"not ({text})")
            else:
                s.guard(text if r else f"not ({text})")
        return r

    def __lt__(self, o): return self._compare(o, "<", lambda a, b: a < b)
    def __le__(self, o): return self._compare(o, "<=", lambda a, b: a <= b)
    def __gt__(self, o): return self._compare(o, ">", lambda a, b: a > b)
    def __ge__(self, o): return self._compare(o, ">=", lambda a, b: a >= b)


class SizeUnknown(Exception):
    """A size only the run knows is needed as a plain number (or no code can read it): the
    program cannot be generated and runs on the interpreter (program.py says why)."""


# The stand-in value of a run-time size: large, so that decisions taken on it assume what
# holds for most sizes (not 0, not 1, bigger than a literal bound), each checked at run time.
NOMINAL = 1 << 40


class RunDim(Dim):
    """A size no input gives and only the run knows (a TensorArray grown in a loop of run-time
    trip count, a loop variable whose size changes): its expression reads the array that holds
    it (``vz.shape[0]``), or is arithmetic on such reads. It has no traced value, so no entry
    check can hold a decision on it: a decision is assumed (equal sizes are equal, a size is
    not 0 or 1, comparisons as for a large size) and checked where the program relies on it
    (``_Scope.check``); a failed check runs the call on the interpreter (failures.py). It is
    never a plain number (``SizeUnknown``), and never hashed: a set of sizes would decide
    equalities silently."""

    __hash__ = None
    run_time = True         # (ir/defs/control.agree asks without importing this module)

    def _fixed(self):
        raise SizeUnknown(f"a size only the run knows ({_expr(self)}) is used as a plain number")


def run_time(aval):
    """Whether ``aval`` has a size only the run knows."""
    return any(isinstance(d, RunDim) for d in aval.shape)


def held(v, axis):
    """Dimension ``axis`` of value ``v`` as a size read from the array holding it at run time:
    ``$id$`` stands for the variable the emitter binds ``v`` to (``Emitter.line`` substitutes
    it, so one graph inlined twice reads its own variables each time)."""
    return RunDim(NOMINAL, f"${v.id}$.shape[{axis}]")


def read_at_run_time(d):
    """A size as a ``Dim``: code (a variable a template computed) as a size only the run
    knows, so size arithmetic and decisions take it like any other."""
    return RunDim(NOMINAL, d) if isinstance(d, str) else d


def reads(d, v):
    """Whether size ``d`` is ``v``'s own run-time size (``held(v, _)``): the op making ``v``
    must compute it from its data, not read it from ``v``."""
    return isinstance(d, RunDim) and d.expr.startswith(f"${v.id}$.")


def _assumed_equal(s, ea, eb):
    """``ea == eb`` where one is a run-time size: assumed (checked at run time) unless the other
    is the literal 0 or 1 (an empty or broadcast test: assumed not, checked too), but a
    remainder is assumed 0 (a reshape's divisibility). Never unified: each keeps reading its
    own array, valid wherever it is in scope."""
    if s.assume:
        return True
    equal = not any(e in ("0", "1") for e in (ea, eb)) or \
        any(e == "0" and _REMAINDER.search(o) for e, o in ((ea, eb), (eb, ea)))
    s.check(f"{_paren(ea)} {'==' if equal else '!='} {_paren(eb)}")
    return equal


def same_shape(a, b):
    """Whether shapes ``a`` and ``b`` are equal whatever the input sizes (the same literals,
    sizes unified with each other), recording nothing: for choices where "no" is always
    correct (fusing two loops), so sizes equal by chance change nothing."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, Dim) or isinstance(y, Dim):
            if _expr(x) != _expr(y):
                return False
        elif x != y:
            return False
    return True


def nonzero(d):
    """Whether size ``d`` may be other than 0 (code adding it can skip a literal 0): a guard
    on a size read from the inputs, as any decision; none on one only the run knows, which
    code adds whatever it is."""
    return True if isinstance(d, RunDim) else bool(d)


def broadcasts(d, full):
    """Whether an operand's dimension ``d`` is broadcast along a result dimension ``full``:
    never when both are one size read from the inputs (no decision: a batch of one gets the
    same program), else ``d == 1`` (a guard when ``d`` is read from the inputs)."""
    if isinstance(d, Dim) and isinstance(full, Dim) and _expr(d) == _expr(full):
        return False
    if isinstance(d, RunDim):
        # the op's shape inference checked it equal to the result's size (broadcast_shapes
        # compares every operand size that is not a literal 1): it broadcasts only along a 1
        return _expr(full) == "1"
    return d == 1


def plain_aval(aval):
    """``aval`` with plain int sizes (None where only the run knows the size)."""
    return AVal(tuple(None if d is None or isinstance(d, RunDim) else value(d) for d in aval.shape),
                aval.dtype)


def _same(a, b, checked=()):
    """Whether inferred aval ``a`` has exactly the traced aval ``b``'s shape and dtype. Where
    the traced size is unknown, a size only the run knows will do, or a literal, or a size
    read from the inputs that the node checks against one only the run knows (``checked``:
    its checks' texts), but not an unchecked input size (inference takes one for no
    broadcast 1, a batch of one, and the traced size cannot confirm it) nor a literal derived
    from a stand-in value read as a number in C (``slices.py``). A size only the run knows
    will do where the traced one is known: the inference checked it against the sizes that
    made the traced one."""
    return (len(a.shape) == len(b.shape) and a.dtype == b.dtype
            and all(_unknown_fits(x, checked) if y is None else
                    isinstance(x, RunDim) or (x is not None and value(x) == value(y))
                    for x, y in zip(a.shape, b.shape)))


def _unknown_fits(x, checked):
    if x is None or isinstance(x, RunDim):
        return True
    if isinstance(x, Dim):
        e = _expr(x)
        return any(e in text for text in checked)
    return abs(x) < NOMINAL // 2


@contextmanager
def symbolic(graph, input_names, const_names=None):
    """Within: ``graph``'s values carry ``Dim`` shapes (inputs ``input_names[k].shape[j]``,
    array constants passed as arguments ``const_names[value id].shape[j]``, the rest
    re-inferred, the graphs nested in If/While nodes too), and Dim decisions are recorded;
    yields the scope, whose ``guards`` the program must check on entry. The avals are
    restored on exit. ``graph`` is edited in place: give it a private copy
    (``ir.graph.private_copy``, as ``generate`` does), never a graph another thread may run."""
    saved = []                  # what to undo on exit: see _undo
    scope = _Scope()
    _STATE.scope = scope
    try:
        for v, name in zip(graph.inputs, input_names, strict=True):
            _read_sizes(v, name, saved)
        _shrink(graph, scope, saved)
        for node in graph.nodes:
            # an array constant is an argument of the program: its sizes are read from it too
            if is_constant(node) and node.outputs[0].id in (const_names or {}) \
                    and node.outputs[0].id not in scope.shrunk:
                _read_sizes(node.outputs[0], const_names[node.outputs[0].id], saved)
        _reinfer(graph, scope, saved)
        yield scope
    finally:
        _STATE.scope = None
        for entry in reversed(saved):
            _undo(entry)


def _undo(entry):
    """Undo one change ``symbolic`` made: (a value, its aval), (a node's attributes, (name,
    value)) or (a graph, the scope that bound it: ``_reinfer_nested``)."""
    obj, old = entry
    if isinstance(obj, Value):
        obj.aval = old
    elif isinstance(obj, dict):
        obj[old[0]] = old[1]
    else:
        old.bound.pop(id(obj), None)


def _shrink(graph, scope, saved):
    """The values ``broadcast_only.py`` finds take their smaller shapes (constants their first
    element, a BroadcastTo its shape attribute, so the node's comment says what the code
    does); re-inference keeps them (``scope.small``)."""
    for v, small in broadcast_only(graph).values():
        saved.append((v, v.aval))
        v.aval = AVal(small, v.aval.dtype)
        scope.small.add(v.id)
        old = constant_of(v)
        if old is not None:
            _set_attr(v.node, "value", (old.flat[:1] if old.size else np.zeros(1, old.dtype)).reshape(small),
                      saved)
            scope.shrunk.add(v.id)
        elif v.node.op == "BroadcastTo":
            _set_attr(v.node, "shape", small, saved)


def _set_attr(node, name, value_, saved):
    saved.append((node.attrs, (name, node.attrs[name])))
    node.attrs[name] = value_


def _read_sizes(v, name, saved):
    """``v``'s dimensions become Dims reading ``name.shape[j]`` (all sizes known, rank >= 1)."""
    if v.aval.shape and all(d is not None for d in v.aval.shape):
        saved.append((v, v.aval))
        v.aval = AVal(tuple(Dim(value(d), f"{name}.shape[{j}]") for j, d in enumerate(v.aval.shape)),
                      v.aval.dtype)
        _scope().sizes.update((d.expr, value(d)) for d in v.aval.shape)


def _reinfer(graph, scope, saved):
    """Each node's output avals inferred again from its inputs' (Dims where they are), in
    order; a node carrying graphs has them re-inferred first (``_reinfer_nested``). A size
    still unknown after that is one only the run knows: read from the array (``held``)."""
    for node in graph.nodes:
        _reinfer_node(node, scope, saved)
        _hold_unknown(node, scope, saved)


def _reinfer_node(node, scope, saved):
    follows = any(isinstance(d, Dim) for x in node.inputs for d in x.aval.shape)
    if OPS[node.op].graph_inputs is not None:
        if follows or _unknown_inside(node):
            _reinfer_nested(node, scope, saved)
        return
    if not follows and not any(None in v.aval.shape for v in node.outputs):
        return
    if node.op == "BroadcastTo" and node.outputs[0].id in scope.small:
        # kept at its input's dims (``broadcast_only.py``), whatever sizes they read
        (y,), x = node.outputs, node.inputs[0].aval.shape
        saved.append((y, y.aval))
        y.aval = AVal((1,) * (len(y.aval.shape) - len(x)) + tuple(x), y.aval.dtype)
        _set_attr(node, "shape", y.aval.shape, saved)
        return
    checks = list(scope.pending.get(id(node), ()))
    ins = [x.aval for x in node.inputs]
    rule = RUN_TIME_RULES.get(node.op) if any(run_time(a) for a in ins) else None
    scope.inferring, scope.node = True, node
    try:
        out = (rule or OPS[node.op].infer)(ins, **node.attrs)
    except Exception:  # noqa: BLE001 - a rule that cannot take Dims: keep the literal shapes
        scope.pending[id(node)] = checks        # what it assumed before failing is void
        return
    finally:
        scope.inferring, scope.node = False, None
    if not _set_outputs(node, out, saved):
        scope.pending[id(node)] = checks


def _hold_unknown(node, scope, saved):
    """``node``'s output sizes still unknown (None) become sizes read from the output's own
    array at run time (``held``): the op computes them from its data (a shape tensor, a
    loop's state); ``scope.made`` lists such nodes, for the code generator to check that
    its template can (generate.py)."""
    for v in node.outputs:
        if None in v.aval.shape:
            saved.append((v, v.aval))
            v.aval = AVal(tuple(held(v, j) if d is None else d for j, d in enumerate(v.aval.shape)),
                          v.aval.dtype)
            scope.made.append(node)


def _unknown_inside(node):
    """Whether ``node``'s outputs or the graphs it carries hold sizes not known (None)."""
    if any(None in v.aval.shape for v in node.outputs):
        return True
    return any(_unknown_in(g, set()) for g in node.attrs.values() if isinstance(g, Graph))


def _unknown_in(graph, seen):
    if id(graph) in seen:
        return False
    seen.add(id(graph))
    if any(None in v.aval.shape for v in graph.inputs):
        return True
    for node in graph.nodes:
        if any(None in v.aval.shape for v in node.outputs):
            return True
        if any(_unknown_in(g, seen) for g in node.attrs.values() if isinstance(g, Graph)):
            return True
    return False


def _set_outputs(node, out, saved, hold=False):
    """Give ``node`` the inferred avals ``out`` if they have the traced values; False if not.
    ``hold``: a size the traced graph leaves unknown stays unknown, to be read from the output
    (``_hold_unknown``), whatever the rule says (a loop variable's size changes across
    iterations)."""
    out = list(out) if OPS[node.op].multi_output else [out]
    if len(out) != len(node.outputs) or not all(isinstance(a, AVal) and len(a.shape) == len(v.aval.shape)
                                                for a, v in zip(out, node.outputs)):
        return False
    if hold:
        out = [AVal(tuple(None if t is None else d for d, t in zip(a.shape, v.aval.shape)), a.dtype)
               for a, v in zip(out, node.outputs)]
    checked = _scope().pending.get(id(node), ())
    if not all(_same(a, v.aval, checked) for a, v in zip(out, node.outputs)):
        return False
    for a, v in zip(out, node.outputs, strict=True):
        saved.append((v, v.aval))
        v.aval = AVal(tuple(a.shape), v.aval.dtype)      # None: ``_hold_unknown``
    return True


def _nested_shape(v, given):
    """The shape a nested graph's input ``v`` takes from the aval ``given`` for it: its sizes,
    except where the traced graph leaves the size unknown or only the run knows it: the
    input's own array is read (``held``), as a loop variable's size may change and a size
    of the enclosing graph may not be in scope (a nested graph emitted as a function)."""
    return tuple(held(v, j) if t is None or g is None or isinstance(g, RunDim) else g
                 for j, (g, t) in enumerate(zip(given.shape, v.aval.shape, strict=True)))


def _reinfer_nested(node, scope, saved):
    """A node running graphs (If branches, a While's condition and body, the loop gradients'
    bodies): each graph's inputs take the avals of what the node feeds them (``graph_inputs``:
    its operands, a loop variable the operand's Dims, since a loop variable keeps its shape
    from one iteration to the next, unless the traced graph says it may change:
    ``_nested_shape``), the graph is re-inferred, then the node's own rule checks it,
    recording as guards the equalities it relies on (a body returning a literal size for a
    loop variable read from the inputs fixes that size; sizes only the run knows decide
    nothing there: the traced graph allowed them). A graph reached again (one graph object
    used by several nodes) keeps its first binding, and the rule records the equalities with
    the second. If the rule fails or gives other values, the graphs get their traced avals
    back and the operands' sizes are fixed: a program per size, never a wrong one."""
    ins = [x.aval for x in node.inputs]
    mark = len(saved)
    try:
        for name, avals in OPS[node.op].graph_inputs(ins, **node.attrs):
            sub = node.attrs[name]
            if id(sub) in scope.bound:
                continue
            scope.bound[id(sub)] = sub
            saved.append((sub, scope))
            for v, a in zip(sub.inputs, avals, strict=True):
                saved.append((v, v.aval))
                v.aval = AVal(_nested_shape(v, a), v.aval.dtype)
            _shrink(sub, scope, saved)
            _reinfer(sub, scope, saved)
        # equality, not broadcasting: a size of 1 read from the inputs is 1 here (a guard)
        scope.assume = True
        try:
            out = OPS[node.op].infer(ins, **node.attrs)
        finally:
            scope.assume = False
        ok = _set_outputs(node, out, saved, hold=True)
    except SizeUnknown:
        raise
    except Exception:  # noqa: BLE001 - a graph that cannot follow the Dims: literal shapes
        ok = False
    if not ok:
        for entry in reversed(saved[mark:]):
            _undo(entry)
        del saved[mark:]
        if _unknown_inside(node):
            raise SizeUnknown(f"the graphs of {node.op} cannot follow sizes only the run knows")
        for a in ins:
            for d in a.shape:
                if isinstance(d, RunDim) or d is None:
                    raise SizeUnknown(f"the graphs of {node.op} cannot follow sizes only the run knows")
                if isinstance(d, Dim):
                    d.__index__()       # the program is for this size only (a guard)


# Infer rules that read a size as a plain number in C (``slice.indices``), which for a size
# only the run knows would silently be its stand-in value: their form for such sizes.
RUN_TIME_RULES = {
    "StridedSlice": lambda ins, spec: AVal(sliced_shape(ins[0].shape, spec), ins[0].dtype),
}


def display():
    """Within: a Dim prints as ``?`` (a size read at run time, as the dump writes it), unless
    it is fixed to a literal: for the comments and the header of the source, which would
    otherwise repeat each expression at every node (the code itself holds them)."""
    return _scope_flag("display", True)


def quiet():
    """Within: Dim decisions record no guard (speed-only ones; see the module docstring)."""
    return _scope_flag("recording", False)


@contextmanager
def _scope_flag(name, value):
    """Within: the current generation's scope (if any) has flag ``name`` set to ``value``."""
    s = _scope()
    if s is None:
        yield
        return
    prev = getattr(s, name)
    setattr(s, name, value)
    try:
        yield
    finally:
        setattr(s, name, prev)
