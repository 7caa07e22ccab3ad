"""The source builder every template writes through: names, typed literals, indented lines.

Each value gets the name the IR printer gives it, prefixed with ``v`` (``c`` -> ``vc``), so
the generated source reads side by side with ``print_graph``; every line emitted while a
node is current carries that node's printed form as a trailing comment, and the line -> node
map lets a Numba error be reported against the IR node it came from.
"""
import itertools
import re
import sys
from contextlib import contextmanager

import numpy as np

from ..ir import dtypes as D
from ..ir.graph import _names, aval_str, node_line
from ..ir.shapes import num_elements
from .sizeclass import choose
from .shape_free import Dim, current, display


_TOKEN = re.compile(r"\$(\d+)\$")


def _check_line(text):
    return f'if not ({text}): raise rt.SizeCheck("a size this program assumed does not hold")'


class _NodeStart:
    """Where the lines of the node being emitted begin: a decision on a size only the run knows,
    taken while its code is written (``symbolic._Scope.check``), is checked there, once, so
    no check lands inside the loops the node's code opens."""

    def __init__(self, em):
        self.em, self.at, self.depth, self.seen = em, len(em.lines), em.depth, set()

    def size_check(self, text):
        if text in self.seen:
            return
        self.seen.add(text)
        line = _TOKEN.sub(self.em._holder, _check_line(text))
        self.em.lines.insert(self.at, (self.depth, line, self.em.owner))
        self.at += 1


class Note:
    """A line comment that is not one node's printed form (a fused loop names its members)."""

    def __init__(self, text, node):
        self.text, self.node = text, node


class Unsupported(Exception):
    """A template cannot compile this node; the program falls back to the interpreter."""


# Types Numba keeps as they are under arithmetic; narrower results are cast back explicitly.
_NATIVE = {"float64", "int64", "bool"}


def np_type(dtype):
    """The NumPy constructor spelling of a dtype in generated code (``np.float32``)."""
    dtype = D.as_dtype(dtype)
    return "np.bool_" if dtype.name == "bool" else f"np.{dtype.name}"


def cast(expr, dtype):
    """``expr`` converted to ``dtype`` (Numba promotes float32*int, int8+int8 ... to wider types)."""
    dtype = D.as_dtype(dtype)
    return expr if dtype.name in _NATIVE else f"{np_type(dtype)}({expr})"


# Arrays this big are allocated with transparent huge pages asked for, as NumPy does for its
# own (see rt.hugepages): a fresh multi-megabyte buffer otherwise takes one page fault per
# 4 KB page on every call that allocates it.
HUGEPAGE_BYTES = (4 << 20) if sys.platform.startswith("linux") else None

# A loop nest goes parallel (``prange`` on its outer loop) only from this much estimated
# work: elements x (sum of per-element costs + 1 + arrays read), an add costing 1 and a
# transcendental 8, so about a millisecond of serial work. Two threads beat one from far
# shorter loops on a quiet machine, but these machines are shared: when the other core is
# busy, a parallel region waits for its worker to get a time slice, milliseconds against
# the microseconds a short loop could save. Only loops long enough to pay for such a stall
# run in parallel (figures: benchmarks/README.md, "Evidence behind codegen choices").
PARALLEL_WORK = 25_000_000


def parallel_condition(work):
    """The condition (for ``sizeclass.choose``) on which a loop nest of estimated ``work``
    runs in parallel: ``work >= PARALLEL_WORK``, read when called (tests lower it)."""
    return ("work", work, ">=", PARALLEL_WORK, "PARALLEL_WORK")


def lit(value, dtype):
    """A literal of ``dtype`` with exactly ``value`` (as NumPy would store it)."""
    dtype = D.as_dtype(dtype)
    v = np.asarray(value).astype(dtype.np).item()
    if dtype.is_bool:
        return "True" if v else "False"
    if dtype.is_floating:
        if np.isnan(v):
            text = "np.nan"
        elif np.isinf(v):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(float(v))
        return text if dtype.name == "float64" else f"{np_type(dtype)}({text})"
    if dtype.name == "int64":
        # -9223372036854775808 would parse as the negation of a uint64 constant
        return "(-9223372036854775807 - 1)" if v == np.iinfo(np.int64).min else str(int(v))
    return f"{np_type(dtype)}({int(v)})"


def size_lit(n, dtype):
    """A size ``n`` (an int, or a ``symbolic.Dim`` read at run time) as a value of ``dtype``."""
    if isinstance(n, Dim):
        return f"{np_type(dtype)}({n})"
    return lit(n, dtype)


def node_texts(graph, names):
    """{id(node): its line in ``print_graph`` form} (graph-valued attributes elided; a size
    read at run time is ``?``: symbolic.display)."""
    with display():
        return {id(node): node_line(node, lambda v: names[v.id], elide_graphs=True) for node in graph.nodes}


def value_names(graph):
    """The printer's names: inputs, then node outputs, in order (a, b, ..., z, aa, ...)."""
    gen, names = _names(), {}
    for v in graph.inputs:
        names[v.id] = next(gen)
    for node in graph.nodes:
        for v in node.outputs:
            names[v.id] = next(gen)
    return names


def shape_lit(shape):
    """A shape tuple in source: literal sizes, and expressions for sizes read from the inputs
    (``symbolic.Dim``)."""
    shape = [str(d) for d in shape]
    return f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(shape) + ")"


def index(idx):
    return ", ".join(idx)


class Emitter:
    """Accumulates the body of one generated function."""

    def __init__(self, graph, emit_graph=None):
        self.graph = graph
        # emit_graph(em, graph, inputs) -> output expressions: the code generator's own, running
        # a nested graph at the current position (see ``inline``; templates cannot import it)
        self.emit_graph = emit_graph
        self.parent = None      # the emitter of the enclosing graph (a nested If/While graph)
        self.extra_consts = []  # (name, aval, array): nested graphs' array constants (outermost only)
        self._name_source = None
        self.names = value_names(graph)
        self.all_names = dict(self.names)   # with every nested graph's (outermost only)
        self.node_text = node_texts(graph, self.names)
        self.expr = {}          # value id -> expression (a variable or an inlined literal)
        self.lines = []         # (indent, text, owner node or None)
        self.depth = 1
        self.owner = None
        self.parallel = False   # any prange emitted
        self.uniform = set()    # ids of array values bound to one scalar literal (loops only)
        self.owned = set()      # variables holding a fresh C-contiguous buffer of the program's own
        # ids of values whose array only this graph holds (a loop's list variable, a list
        # written here): their last reader may write into it (TensorListSetItem)
        self.private = set()
        self._counter = 0
        self.uses = {}          # value id -> consuming nodes
        for node in graph.nodes:
            for v in node.inputs:
                self.uses.setdefault(v.id, []).append(node)
        self.output_ids = {v.id for v in graph.outputs}
        self.view_base = {}     # variable -> variable it is a reshape view of
        self.const_args = set()   # ids of constants passed as arguments (generate.bind_consts; outermost only)
        # a loop's own list variable of run-time size -> (its capacity buffer, the lines it is
        # in scope for): templates/list_growth.py (outermost only)
        self.capacity = {}

    # -- names --------------------------------------------------------------------------
    def var(self, v):
        """The variable that holds value ``v`` (defined or not yet)."""
        return "v" + self.names[v.id]

    def ref(self, v):
        """An expression reading value ``v`` (a variable, or the literal of an inlined constant)."""
        return self.expr[v.id]

    def fresh(self, prefix):
        """A new temporary name, unique across the whole generated function."""
        top = self.outermost()
        top._counter += 1
        return f"{prefix}{top._counter}"

    def bind(self, v, expr=None):
        self.expr[v.id] = self.var(v) if expr is None else expr
        return self.expr[v.id]

    # -- lines --------------------------------------------------------------------------
    def line(self, text):
        if "$" in text:
            text = _TOKEN.sub(self._holder, text)
        self.lines.append((self.depth, text, self.owner))

    def _holder(self, match):
        """The expression of the value whose size a run-time ``Dim`` reads (``symbolic.held``:
        ``$id$``), as bound by this emitter or an enclosing one."""
        vid, em = int(match.group(1)), self
        while em is not None:
            if vid in em.expr:
                e = em.expr[vid]
                return e if re.fullmatch(r"[\w.]+(\[[\w, +-]*\])?", e) else f"({e})"
            em = em.parent
        raise Unsupported("a size only the run knows is read where its array is not in scope")

    def size_check(self, text):
        """A line raising ``rt.SizeCheck`` unless ``text`` holds: a decision taken on a size
        only the run knows (``symbolic.RunDim``); the call then runs on the interpreter."""
        self.line(_check_line(text))

    def checks_from_here(self):
        """Checks the current node's code takes from now on go here, not where its lines
        begin: they may read the sizes it has just computed from its data."""
        s = current()
        if s is not None and s.emitters and s.emitters[-1].em is self:
            s.emitters[-1].at, s.emitters[-1].depth = len(self.lines), self.depth

    def pending_checks(self, nodes):
        """The size checks the shape inference of ``nodes`` relied on (``symbolic``), where
        the current node's lines begin (``_NodeStart``)."""
        s = current()
        if s is None or not s.emitters:
            return
        for node in nodes:
            for text in s.pending.get(id(node), ()):
                s.emitters[-1].size_check(text)

    @contextmanager
    def block(self, header):
        self.line(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    @contextmanager
    def node(self, node):
        """Lines emitted inside carry ``node``'s printed form as their comment; they start with
        the size checks its shape inference relied on, and a decision taken on a run-time size
        while they are emitted is checked where it is taken (``symbolic.RunDim``)."""
        prev, self.owner = self.owner, node
        s = current()
        if s is not None:
            s.emitters.append(_NodeStart(self))
        try:
            if not isinstance(node, Note):
                self.pending_checks([node])
            yield
        finally:
            if s is not None:
                s.emitters.pop()
            self.owner = prev

    @contextmanager
    def note(self, text, node):
        """Lines emitted inside carry ``text``; errors on them are reported against ``node``."""
        with self.node(Note(_TOKEN.sub(self._shown, text), node)):
            yield

    def _shown(self, match):
        """``_holder`` for a comment: ``?`` where the value is not bound."""
        try:
            return self._holder(match)
        except Unsupported:
            return "?"

    def define(self, v, expr):
        """``v = expr`` as a new variable."""
        name = self.bind(v)
        self.line(f"{name} = {expr}")
        m = re.match(r"(v[a-z]+)\.reshape\(", expr)
        if m:                                   # a view: remember whose memory it is
            self.view_base[name] = self.root(m.group(1))
        elif expr.startswith("rt.dot("):        # GEMM results are new C arrays
            self.owned.add(name)
        return name

    def root(self, name):
        """The variable whose memory ``name`` is (itself unless it is a reshape view)."""
        return self.view_base.get(name, name)

    def alloc(self, v, fill=None, name=None, shape=None):
        """A new C-contiguous array for ``v``: empty, or filled with the literal ``fill``;
        ``shape``: its sizes (code or Dims), where its aval reads them from ``v`` itself
        (a size only the run knows, computed from the op's data: ``data_sizes``)."""
        shape = shape_lit(v.aval.shape if shape is None else shape)
        name = name or self.bind(v)
        self.owned.add(name)
        dt = np_type(v.aval.dtype)
        if fill is None:
            self.line(f"{name} = np.empty({shape}, dtype={dt})")
            if self._hugepages(v, name):    # before the first write: its pages fault in 2 MB at a time
                self.line(f"rt.hugepages({name})")
        elif self._hugepages(v, name):      # huge pages asked for before the fill writes
            self.line(f"{name} = np.empty({shape}, dtype={dt})")
            self.line(f"rt.hugepages({name})")
            self.line(f"{name}.fill({fill})")
        else:
            self.line(f"{name} = np.full({shape}, {fill}, dtype={dt})")
        return name

    def _hugepages(self, v, name):
        """Whether a fresh array ``name`` for ``v`` asks for huge pages: from ``HUGEPAGE_BYTES``,
        or for a size read at run time from a sixteenth of it, since ``rt.hugepages`` checks
        the size itself (a speed choice: a size class, no guard; sizeclass.py)."""
        if HUGEPAGE_BYTES is None:
            return False
        nbytes = v.aval.dtype.size * num_elements(v.aval.shape)
        if not isinstance(nbytes, Dim):
            return nbytes >= HUGEPAGE_BYTES
        return choose(lambda: f"new array {self.names.get(v.id, name)}: {aval_str(v.aval)}",
                      [("bytes", nbytes, ">=", HUGEPAGE_BYTES // 16, "HUGEPAGE_BYTES/16", "B")],
                      "asks for huge pages", "no huge pages")

    def read(self, v, idx):
        """``v`` at index expressions ``idx`` (a scalar value is read as itself)."""
        if not v.aval.shape:
            return self.ref(v)
        return f"{self.ref(v)}[{index(idx)}]"

    def as_array(self, v):
        """An array expression for ``v``; a scalar becomes a 1-element array."""
        if v.aval.shape:
            return self.ref(v)
        name = self.fresh("a")
        self.line(f"{name} = np.full((1,), {self.ref(v)}, dtype={np_type(v.aval.dtype)})")
        return name

    def scalar_of(self, v):
        """The single element of a size-1 value."""
        return self.read(v, ["0"] * len(v.aval.shape))

    @contextmanager
    def loops(self, shape, parallel=False):
        """Nested loops over ``shape``; yields the index variable names (outermost first)."""
        idx = [self.fresh("i") for _ in shape]
        opened = 0
        try:
            for k, (i, d) in enumerate(zip(idx, shape)):
                rng = "prange" if (parallel and k == 0) else "range"
                if rng == "prange":
                    self.parallel = True
                self.line(f"for {i} in {rng}({d}):")
                self.depth += 1
                opened += 1
            yield idx
        finally:
            self.depth -= opened

    # -- nested graphs ------------------------------------------------------------------
    def outermost(self):
        """The emitter of the program's own graph (itself unless this one is nested)."""
        return self if self.parent is None else self.parent.outermost()

    def child(self, graph):
        """An emitter for ``graph`` nested at the current position (an If branch, a While body).

        It writes into the same lines at the current depth; its values' names continue the
        program's sequence and its temporaries share one counter, so every generated name is
        unique and reads like the others. Its array constants go to the outermost emitter's
        ``extra_consts``: parameters of the program, never globals, so the on-disk cache works.
        """
        top = self.outermost()
        if top._name_source is None:
            top._name_source = itertools.islice(_names(), len(top.names), None)
        child = Emitter(graph, self.emit_graph)
        child.parent = self
        child.names = {vid: next(top._name_source) for vid in child.names}
        child.node_text = node_texts(graph, child.names)
        top.node_text.update(child.node_text)
        top.all_names.update(child.names)
        child.lines, child.depth, child.owner = self.lines, self.depth, self.owner
        return child

    def inline(self, graph, inputs, private=()):
        """``graph`` run at the current position with its inputs bound to the expressions
        ``inputs``: emitted here, or called as a function the generator emitted once (its
        ``emit_graph`` decides); returns the expressions of its outputs. ``private``: positions
        of inputs whose arrays only this use holds (a loop's own list variables)."""
        if self.emit_graph is None:
            raise RuntimeError("Emitter.inline: this emitter was made without emit_graph")
        return self.emit_graph(self, graph, inputs, private)

    def inline_here(self, graph, inputs, emit_steps, private=()):
        """``graph``'s lines emitted at the current position by ``emit_steps(child, graph)``
        through a child emitter; returns the expressions of its outputs."""
        child = self.child(graph)
        for v, expr in zip(graph.inputs, inputs, strict=True):
            child.bind(v, expr)
        child.private = {graph.inputs[k].id for k in private}
        emit_steps(child, graph)
        return [child.ref(v) for v in graph.outputs]

    def add_extra_const(self, name, aval, value):
        """A nested graph's array constant: a parameter of the whole program."""
        self.outermost().extra_consts.append((name, aval, value))

    def used_outside(self, v, members):
        """Whether ``v`` is a graph output or read by a node not in ``members`` (node ids)."""
        if v.id in self.output_ids:
            return True
        return any(id(n) not in members for n in self.uses.get(v.id, ()))

    # -- output -------------------------------------------------------------------------
    def render(self, first_line, start=0, end=None, lines=None):
        """(text lines, {source line number: node}) of lines[start:end] (of ``lines``, a
        function's own body, else this emitter's). A node's printed form (or a note) is the
        comment of its first line only: a loop's dozens of lines would otherwise each repeat
        it, burying the code; every line still maps to its node for error reports."""
        out, owners, commented = [], {}, set()
        for k, (depth, text, owner) in enumerate((self.lines if lines is None else lines)[start:end]):
            s = "    " * depth + text
            if owner is not None:
                owners[first_line + k] = owner.node if isinstance(owner, Note) else owner
                key = (owner.text, id(owner.node)) if isinstance(owner, Note) else id(owner)
                if key not in commented:    # (a fused loop's note is made at each of its blocks)
                    commented.add(key)
                    s += "  # " + (owner.text if isinstance(owner, Note) else self.node_text[id(owner)])
            out.append(s)
        return out, owners
