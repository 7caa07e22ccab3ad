"""Shape-free source: every size the program derives from its inputs is read from them at run time.

A program generated for inputs of shapes [128, 784] and one for [104, 784] must be the
same text, so they share one cache entry and one Numba compile. While a program is
generated (``symbolic(graph)``), each array input's dimension is a ``Dim``: an int with its
traced value that also carries an expression reading it (``va.shape[0]``). The graph's
shapes are inferred again from those (``OPS[op].infer``), so derived sizes are expressions
too (``va.shape[0] * va.shape[1]`` after a flattening reshape), and templates write a
``Dim`` into the source as its expression. A size that cannot be followed (an infer rule that
converts to a plain int) stays a literal: that costs a compile per size, never a wrong value.

Every decision taken on a ``Dim`` is recorded as a guard, a condition on the input shapes:
an equality an op relies on (the inner dimensions of a matmul, broadcasting operands), a
comparison (``n == 1``), or a size used as a plain number (``range(n)`` unrolled). The
program checks all its guards on entry, so it runs only on shapes it was generated for, and
equal source means equal guards. Equal dimensions are unified: the source writes one
expression for all of them (the first input's), checked equal on entry.

Decisions that only change speed, not results (parallel loops, where a program is cut into
parts, huge pages) read ``value(d)`` and record nothing: different sizes may then generate
different source (a size class), each correct.
"""
import re
import threading
from contextlib import contextmanager

import numpy as np

from ..ir.opdef import OPS, AVal
from ..ir.shapes import broadcast_shapes

_STATE = threading.local()
_GENERATING = threading.RLock()


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


_LITERAL = re.compile(r"-?\d+")
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
        return str(value(self)) if s is None else _paren(_expr(self))

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
        return v if _LITERAL.fullmatch(e) else Dim(v, e)

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
            s.guard(text if r else f"not ({text})")
        return r

    def __lt__(self, o): return self._compare(o, "<", lambda a, b: a < b)
    def __le__(self, o): return self._compare(o, "<=", lambda a, b: a <= b)
    def __gt__(self, o): return self._compare(o, ">", lambda a, b: a > b)
    def __ge__(self, o): return self._compare(o, ">=", lambda a, b: a >= b)


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


def plain_aval(aval):
    """``aval`` with plain int sizes."""
    return AVal(tuple(value(d) if d is not None else None for d in aval.shape), aval.dtype)


def _same(a, b):
    """Whether inferred aval ``a`` has exactly the traced aval ``b``'s shape and dtype."""
    return (len(a.shape) == len(b.shape) and a.dtype == b.dtype
            and all(value(x) == value(y) for x, y in zip(a.shape, b.shape)))


def uniform(array):
    """Whether every element of ``array`` has the same bits (and there is one)."""
    if array.size == 0:
        return False
    bits = array.view(f"u{array.dtype.itemsize}") if array.dtype.itemsize in (1, 2, 4, 8) else array
    return bool((bits == bits.flat[0]).all())


def _broadcast_only_constants(graph):
    """Array constants of one repeated value that only elementwise ops read, where the other
    operands alone give the result its shape (a folded ``-1/n`` seeding a mean's gradient, as
    big as the batch). Generated as if their shape were all 1s, they do not tie the input
    sizes to their own."""
    uses = {}
    for node in graph.nodes:
        for x in node.inputs:
            uses.setdefault(x.id, []).append(node)
    outputs = {v.id for v in graph.outputs}
    found = []
    for node in graph.nodes:
        if node.op != "Const":
            continue
        (v,) = node.outputs
        value_ = np.asarray(node.attrs["value"])
        if (not v.aval.shape or v.id in outputs or v.id not in uses or value_.ndim != len(v.aval.shape)
                or not (value_.size == 0 or uniform(value_))):
            continue
        ones = (1,) * len(v.aval.shape)
        if all(OPS[n.op].kind == "elementwise" and len(n.outputs) == 1
               and _broadcast([ones if x is v else x.aval.shape for x in n.inputs]) == tuple(n.outputs[0].aval.shape)
               for n in uses[v.id]):
            found.append(v)
    return found


def _broadcast(shapes):
    try:
        return tuple(broadcast_shapes(*[tuple(value(d) for d in s) for s in shapes]))
    except Exception:  # noqa: BLE001 - not broadcastable: not a candidate
        return None


@contextmanager
def symbolic(graph, input_names):
    """Within: ``graph``'s values carry ``Dim`` shapes (inputs ``input_names[k].shape[j]``,
    the rest re-inferred), and Dim decisions are recorded; yields the scope, whose ``guards``
    the program must check on entry. The graph's own avals are restored on exit."""
    saved, consts = [], []
    scope = _Scope()
    _GENERATING.acquire()       # the graph's avals are swapped: one generation at a time
    _STATE.scope = scope
    try:
        for v, name in zip(graph.inputs, input_names, strict=True):
            if v.aval.shape and all(d is not None for d in v.aval.shape):
                saved.append((v, v.aval))
                v.aval = AVal(tuple(Dim(d, f"{name}.shape[{j}]") for j, d in enumerate(v.aval.shape)),
                              v.aval.dtype)
        for v in _broadcast_only_constants(graph):
            ones = (1,) * len(v.aval.shape)
            saved.append((v, v.aval))
            v.aval = AVal(ones, v.aval.dtype)
            attrs = v.node.attrs
            consts.append((attrs, attrs["value"]))
            old = np.asarray(attrs["value"])
            attrs["value"] = (old.flat[:1] if old.size else np.zeros(1, old.dtype)).reshape(ones)
            scope.shrunk.add(v.id)
        scope.inferring = True
        for node in graph.nodes:
            if node.op == "Const" or not any(isinstance(d, Dim) for x in node.inputs for d in x.aval.shape):
                continue
            try:
                out = OPS[node.op].infer([x.aval for x in node.inputs], **node.attrs)
            except Exception:  # noqa: BLE001 - a rule that cannot take Dims: keep the literal shapes
                continue
            out = list(out) if OPS[node.op].multi_output else [out]
            if len(out) != len(node.outputs) or not all(
                    isinstance(a, AVal) and _same(a, v.aval) for a, v in zip(out, node.outputs)):
                continue
            for a, v in zip(out, node.outputs, strict=True):
                saved.append((v, v.aval))
                v.aval = AVal(tuple(a.shape), v.aval.dtype)
        scope.inferring = False
        yield scope
    finally:
        _STATE.scope = None
        for v, aval in reversed(saved):
            v.aval = aval
        for attrs, val in consts:
            attrs["value"] = val
        _GENERATING.release()


@contextmanager
def quiet():
    """Within: Dim decisions are not recorded (speed-only decisions; see the module docstring)."""
    s = _scope()
    if s is None:
        yield
        return
    prev, s.recording = s.recording, False
    try:
        yield
    finally:
        s.recording = prev
