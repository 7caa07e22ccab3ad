"""WhileGrad (runtime/kernels/loops.py) in one jitted function. The trip count is known when
it starts, so the plan is made once: ``k`` iterations per segment (``k = n`` when ``n`` rows
fit the memory budget: plain stacks), a first loop keeping the state at each segment's start
(no iterations when ``k = n``), then per segment, last first, a loop writing each iteration's
values into stack buffers of ``k`` rows and a reverse loop running the backward body on them.
WhileWithGrad (the While and its WhileGrad fused, passes/share_loops.py) stacks the rows as
its one forward loop runs. WhileStacks runs that loop and returns its buffers cut to the trip
count (a loop variable's history cut to the states its rows use); WhileGradStacks runs the
backward over such stacks, given as inputs (passes/keep_stacks.py).

Three things make the loops as fast as hand-written backpropagation through time: a loop
variable whose values are rows (``h`` and the new ``h``) is kept once, as its history
(``_Rows``), weight gradients accumulated by small products (``dW += h.T @ dz``) are
added a block of iterations at a time as one large product (``_Hoisted``), and the rows of a
gathered input's gradient are added into its carry in place (``_scatter``).
"""
from ...passes.dce import dce
from ...ir.graph import Graph, use_counts
from ...ir.opdef import OPS
from ...runtime.kernels.loops import (counter_index, history_spans, row_states, stacked_rows,
                                      trip_bounds)
from ..emitter import Unsupported, np_type, shape_lit
from ..shape_free import run_time
from .control import _assign
from .lists import loop_lists, own_loop_lists
from .registry import stmt_op


# Bytes of stacked rows per hoisted product (_Hoisted.block): half an L2 cache, measured best
# on W8 (128 KB to 1 MB within 8%; one product over all iterations was 1.3x slower at T=800).
BLOCK_BYTES = 512 << 10


def _nbytes(avals, names=None):
    """Source text of the bytes of values of ``avals``: sizes read from the inputs stay
    expressions (shape_free.py), so the memory plan does not fix the program to one size.
    A value whose size only the run knows is measured where it is (``names``), else not
    counted: a row of a list the loop grows is not there before the loop, whose plan then
    budgets the other rows (the kernel measures the first iteration's; either plan gives
    the same values)."""
    terms = []
    for k, a in enumerate(avals):
        if run_time(a):
            if names is not None:
                terms.append(f"{names[k]}.nbytes")
            continue
        dims = [f"{d}" for d in a.shape if f"{d}" != "1"]
        terms.append(" * ".join(dims + [str(a.dtype.size)]))
    return " + ".join(terms) or "0"


def _row_bytes(em, fwd_graph, n_vars):
    """A name holding the bytes one iteration stacks (runtime/kernels/loops.row_bytes)."""
    name = em.fresh("rb")
    outs = fwd_graph.outputs[n_vars:]
    em.line(f"{name} = {_nbytes([outs[r].aval for r in stacked_rows(fwd_graph, n_vars)])}")
    return name


def _buffer(em, rows, aval, name=None):
    name = name or em.fresh("stack")
    dims = ", ".join([rows] + [str(d) for d in aval.shape])     # sizes as read (shape_free.py)
    em.line(f"{name} = np.empty(({dims},), dtype={np_type(aval.dtype)})")
    em.line(f"rt.hugepages({name})")         # stacks are often megabytes (emitter.alloc)
    return name


class _Rows:
    """Where the forward keeps each iteration's rows for the backward. A row that is a loop
    variable's value before or after the iteration (``h`` and the new ``h`` of a recurrence)
    is read from that variable's history, one buffer of ``cap + 1`` states (``[i]`` before
    iteration ``i``, ``[i + 1]`` after it), so a state is stored once, not twice; every
    other row has a stack of ``cap`` rows. ``shared``: a ``_SharedList`` whose history is
    the list's own buffer while its ``alias`` holds."""

    def __init__(self, em, fwd_graph, n_vars, cap, shared=None):
        self.em, self.n_vars, self.shared = em, n_vars, shared
        self.avals = [v.aval for v in fwd_graph.outputs[n_vars:]]
        self.history, self.stacks, self.where = {}, {}, []
        for r, state in enumerate(row_states(fwd_graph, n_vars)):
            if state is None:
                self.stacks[r] = _stack(em, cap, self.avals[r], run_time(self.avals[r]))
                self.where.append((self.stacks[r], 0))
            else:
                j, offset = state
                if j not in self.history:
                    aval = fwd_graph.inputs[j].aval
                    name = shared.allocate(em, cap, aval) if shared and shared.state == j \
                        else _stack(em, f"{cap} + 1", aval, run_time(aval))
                    self.history[j] = (name, aval)
                self.where.append((self.history[j][0], offset))

    def start(self, state):
        """Before the first iteration: the state it starts from."""
        for j, (h, _) in self.history.items():
            _put(self.em, h, 0, state[j], copy=True)

    def write(self, i, outs):
        """After iteration ``i`` computed ``outs`` (the forward body's outputs)."""
        for r, s in self.stacks.items():
            _put(self.em, s, i, outs[self.n_vars + r], copy=True)
        for j, (h, _) in self.history.items():
            # also where the list is the history: its write lands there only if the body
            # wrote the list in place (not when the body copies it: a reader that keeps a
            # view, a body emitted as a shared function); then this puts the same row again
            _put(self.em, h, f"{i} + 1", outs[j], copy=True)

    def grow(self, n, cap):
        """Copy the first ``n`` iterations' rows into buffers of ``cap`` (the doubled size)."""
        for r, s in self.stacks.items():
            self._regrow(s, cap, self.avals[r], n)
        for h, aval in self.history.values():
            self._regrow(h, f"{cap} + 1", aval, f"{n} + 1")
        if self.shared:                     # the list stays where it is: a history of its own
            self.em.line(f"{self.shared.alias} = False")

    def _regrow(self, name, rows, aval, used):
        if isinstance(name, _Ragged):
            self.em.line(f"{name}.extend([{name.empty} for _ in range({rows} - len({name}))])")
            return
        grown = _buffer(self.em, rows, aval)
        self.em.line(f"{grown}[:{used}] = {name}[:{used}]")
        self.em.line(f"{name} = {grown}")

    def row(self, i, r):
        name, offset = self.where[r]
        return f"{name}[{i} + 1]" if offset else f"{name}[{i}]"

    def rows(self, i):
        return [self.row(i, r) for r in range(len(self.where))]

    def slab(self, r, lo, hi):
        """Row ``r`` of iterations ``lo .. hi-1`` as one ``[hi - lo, ...]`` array (contiguous)."""
        name, offset = self.where[r]
        return f"{name}[{lo} + 1:{hi} + 1]" if offset else f"{name}[{lo}:{hi}]"


class _SharedList:
    """A list loop variable (a TensorArray the loop writes in place, ``loop_lists``) written
    at row ``i`` in iteration ``i`` with the new value of the loop variable ``state`` (``h =
    tanh(...); ta = ta.write(t, h)``): its rows are that variable's history from row 1 on. So
    the history buffer is the list's, one row longer (row 0 holds the initial state) and the
    forward keeps ``h`` once, not in the list and again in a stack. Whether the index is
    ``i`` is known when the loop starts (``counter_index``: slope 1 and the first row 0), so
    the generated code checks it there (``alias``), and keeps a history of its own if not, or
    once a doubling buffer moves the history away from the list. The forward still puts
    each new state into the history (``_Rows.write``): the list's write put the same row
    there only if the body wrote the list in place. Only a body emitted in place shares
    (``_inlined``). Where the body reads the list only to write it (``read`` False), the
    rows the loop writes are not copied in first: the others get their initial values after
    the loop (``finish``)."""

    def __init__(self, em, list_var, state, index, read, names, operands, n_vars):
        self.list_var, self.state, self.read, self.names = list_var, state, read, names
        self.alias, self.holds, self.initial = em.fresh("alias"), em.fresh("holds"), None

        def product(factors):
            return " * ".join([str(f) if isinstance(f, int) else
                               f"np.int64({operands[f[1] - n_vars]})" for f in factors]) or "1"
        slope = product(index.slope)
        first = " ".join([f"{slope} * np.int64({names[index.counter]})"] +
                         [f"{'+' if sign > 0 else '-'} {product(t)}" for sign, t in index.offset])
        em.line(f"{self.alias} = {slope} == 1 and {first} == 0")

    @staticmethod
    def find(cond_graph, fwd_graph, n_vars, own):
        """(list variable, state variable, ``CounterIndex``, whether the loop reads the list
        other than to write it) of a list the loop may share with a state's history (the
        class docstring), or None."""
        after = {v.id: j for j, v in enumerate(fwd_graph.outputs[:n_vars])}
        kept = {s[0] for s in row_states(fwd_graph, n_vars) if s is not None}
        for j in own:
            write = fwd_graph.outputs[j].node
            lst, index, item = write.inputs
            h = after.get(item.id)
            if lst is not fwd_graph.inputs[j] or h is None or h == j or h not in kept \
                    or run_time(lst.aval):      # a list the loop grows moves (list_growth.py)
                continue            # (the item has the list's element type: SetItem's rule)
            at = counter_index(fwd_graph, n_vars, index)
            if at is not None:
                uses = use_counts(cond_graph)
                read = use_counts(fwd_graph)[lst.id] > 1 or uses.get(cond_graph.inputs[j].id)
                return j, h, at, bool(read)
        return None

    def allocate(self, em, cap, aval):
        """The state's history buffer: the list's rows after its first (``alias``), else
        ``cap + 1`` rows of its own and the list copied as ``own_loop_lists`` does."""
        name, lst = em.fresh("stack"), self.names[self.list_var]
        rows = f"{lst}.shape[0]"
        if not self.read:               # (``alias`` may change as the loop runs)
            self.initial = em.fresh("initial")
            em.line(f"{self.holds} = {self.alias}")
            em.line(f"{self.initial} = {lst}")
        with em.block(f"if {self.alias}:"):
            _buffer(em, f"max({cap}, {rows}) + 1", aval, name)
            if self.read:
                em.line(f"{name}[1:{rows} + 1] = {lst}")
            em.line(f"{lst} = {name}[1:{rows} + 1]")
        with em.block("else:"):
            _buffer(em, f"{cap} + 1", aval, name)
            em.line(f"{lst} = rt.fresh_copy({lst})")
        return name

    def finish(self, em, n):
        """After the loop's ``n`` iterations: the rows it did not write get their initial
        values, where the list holds the history and was not copied in first."""
        if not self.read:
            with em.block(f"if {self.holds}:"):
                lst = self.names[self.list_var]
                em.line(f"{lst}[{n}:] = {self.initial}[{n}:]")


class _Hoisted:
    """Carry updates of the backward body of the form ``c = c + matmul(p, q, transpose_a)``
    (a weight's gradient in a recurrence: ``dW += h.T @ dz``). Instead of one small product
    per iteration, the backward stacks ``p`` and ``q`` (or reads them from the forward's rows)
    and adds ``P.T @ Q`` over all iterations as one large product after the loop: the same
    sum, in another order, at the speed of one big GEMM."""

    def __init__(self, bwd_graph, n_rows, n_extra):
        nodes = set(map(id, bwd_graph.nodes))
        uses = use_counts(bwd_graph)
        rows = {v.id: r for r, v in enumerate(bwd_graph.inputs[:n_rows])}
        extras = {v.id for v in bwd_graph.inputs[n_rows:n_rows + n_extra]}
        carry_in = bwd_graph.inputs[n_rows + n_extra:]
        self.terms = {}       # carry index -> (p, q): each a row index (int) or a stacked value
        self.scatters = {}    # carry index -> (data, ids): added into the carry in place
        outputs = list(bwd_graph.outputs)
        stacked = []
        for c, out in enumerate(bwd_graph.outputs):
            add = out.node
            if add is None or id(add) not in nodes or add.op != "Add" or uses[out.id] != 1:
                continue
            cin = carry_in[c]
            others = [x for x in add.inputs if x is not cin]
            if len(others) != 1 or uses.get(cin.id, 0) != 1 or not cin.aval.dtype.is_floating:
                continue
            (z,) = others
            if _scatter(z, cin, out, nodes, uses):
                self.scatters[c] = tuple(z.node.inputs)
                outputs[c] = cin
                continue
            mm = z.node
            if (mm is None or id(mm) not in nodes or not _gemm(mm) or uses[z.id] != 1
                    or not mm.attrs["transpose_a"] or mm.attrs["transpose_b"]
                    or any(run_time(x.aval) for x in (cin, *mm.inputs))    # no slabs of lists
                    or z.aval != cin.aval or out.aval != cin.aval
                    or any(len(x.aval.shape) != 2 or x.id in extras for x in mm.inputs)):
                continue
            pq = []
            for x in mm.inputs:
                if x.id in rows:
                    pq.append(rows[x.id])
                else:
                    if all(x is not s for s in stacked):
                        stacked.append(x)
                    pq.append(x)
            self.terms[c] = tuple(pq)
            outputs[c] = cin
        self.stacked = stacked
        scattered = [x for pair in self.scatters.values() for x in pair]
        self.graph = dce(Graph(bwd_graph.inputs, bwd_graph.nodes, outputs + stacked + scattered)) \
            if self.terms or self.scatters else bwd_graph
        self.n_out = len(bwd_graph.outputs)

    def block(self, em, rows):
        """A name holding the iterations per product: a block's rows (about 512 KB, half an
        L2 cache) are still in cache when the product reads them, and the stacks hold only a
        block's rows. Computed at run time from the sizes (one program for any of them)."""
        avals = [rows.avals[x] if isinstance(x, int) else x.aval
                 for p_q in self.terms.values() for x in p_q]
        name = em.fresh("blk")
        em.line(f"{name} = max(1, {BLOCK_BYTES} // max({_nbytes(avals)}, 1))")
        return name

    def run(self, em, i, args, bufs, lo, private=()):
        """The backward body at iteration ``i``: its carry expressions (hoisted ones
        unchanged), having written the stacked values' rows (row ``i - lo`` of the block)."""
        outs = em.inline(self.graph, args, private)
        k = self.n_out + len(self.stacked)
        for b, e in zip(bufs, outs[self.n_out:k], strict=True):
            em.line(f"{b}[{i} - {lo}] = {e}")
        carry = args[len(args) - self.n_out:]
        for c, (data, ids) in self.scatters.items():
            _scatter_add(em, carry[c], self.graph.inputs[len(args) - self.n_out + c].aval,
                         outs[k], data.aval, outs[k + 1], ids.aval)
            k += 2
        return outs[:self.n_out]

    def own(self, em, carry):
        """The carries updated in place (``scatters``) start as copies of their own: the
        initial value may be an input or a constant of the program."""
        for c in self.scatters:
            em.line(f"{carry[c]} = rt.fresh_copy({carry[c]})")

    def flush(self, em, lo, hi, carry, fwd_rows, bufs):
        """Add each hoisted product over the block of iterations ``lo .. hi-1``."""
        for c, (p, q) in self.terms.items():
            a, b = (self._flat(em, x, lo, hi, fwd_rows, bufs) for x in (p, q))
            em.line(f"{carry[c]} = {carry[c]} + rt.dot({a}.T, {b})")

    def _flat(self, em, x, lo, hi, fwd_rows, bufs):
        if isinstance(x, int):
            slab, (rows, cols) = fwd_rows.slab(x, lo, hi), fwd_rows.avals[x].shape
        else:
            k = next(k for k, s in enumerate(self.stacked) if s is x)
            slab, (rows, cols) = f"{bufs[k]}[:{hi} - {lo}]", x.aval.shape
        return f"{slab}.reshape((({hi} - {lo}) * {rows}, {cols}))"


def _backward(em, m, rows, hoisted, extra, carry):
    """The backward body over iterations ``m-1 .. 0`` of ``rows``, updating ``carry``; the
    hoisted products are added a block of iterations at a time, the scattered rows in place."""
    i = em.fresh("i")
    em.line(f"{i} = {m}")
    own = own_loop_lists(em, hoisted.graph, carry)    # list cotangents: written in place
    private = [len(hoisted.graph.inputs) - len(carry) + c for c in own]
    hoisted.own(em, carry)
    if not hoisted.terms:
        with em.block(f"while {i} > 0:"):
            em.line(f"{i} -= 1")
            _assign(em, carry, hoisted.run(em, i, rows.rows(i) + extra + carry, [], i, private),
                    simultaneous=True)
        return
    blk = hoisted.block(em, rows)
    bufs = [_buffer(em, blk, x.aval) for x in hoisted.stacked]
    lo, hi = em.fresh("lo"), em.fresh("hi")
    em.line(f"{hi} = {m}")
    em.line(f"{lo} = max({hi} - {blk}, 0)")
    with em.block(f"while {i} > 0:"):
        em.line(f"{i} -= 1")
        _assign(em, carry, hoisted.run(em, i, rows.rows(i) + extra + carry, bufs, lo, private),
                simultaneous=True)
        with em.block(f"if {i} == {lo}:"):
            hoisted.flush(em, lo, hi, carry, rows, bufs)
            em.line(f"{hi} = {lo}")
            em.line(f"{lo} = max({hi} - {blk}, 0)")


@stmt_op("WhileGrad")
def _while_grad(em, node, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    ins = [em.ref(v) for v in node.inputs[1:]]
    state = [em.fresh("s") for _ in range(n_vars)]
    extra = ins[n_vars:n_vars + n_extra]
    carry = [em.var(v) for v in node.outputs]
    _assign(em, state, ins[:n_vars])
    _assign(em, carry, ins[n_vars + n_extra:])
    n = em.fresh("n")
    em.line(f"{n} = np.int64({em.ref(node.inputs[0])})")
    hoisted = _Hoisted(bwd_graph, len(fwd_graph.outputs) - n_vars, n_extra)
    _segments(em, n, state, extra, carry, fwd_graph, hoisted, n_vars, memory_budget)
    for v in node.outputs:
        em.bind(v)


def _segments(em, n, state, extra, carry, fwd_graph, hoisted, n_vars, memory_budget):
    """WhileGrad's loops for trip count ``n`` from the loop state ``state`` (names the code
    reassigns), updating the ``carry`` names by the backward body ``hoisted``."""
    k, segs, i = em.fresh("k"), em.fresh("segs"), em.fresh("i")
    rb, sb = _row_bytes(em, fwd_graph, n_vars), em.fresh("sb")
    em.line(f"{sb} = {_nbytes([v.aval for v in fwd_graph.inputs[:n_vars]], state)}")
    # runtime/kernels/loops.segment_length, inline
    with em.block(f"if {n} * {rb} <= {int(memory_budget)} or {n} <= 1:"):
        em.line(f"{k} = max({n}, 1)")
    with em.block("else:"):
        em.line(f"{k} = min({n}, max(1, np.int64(np.ceil(np.sqrt({n} * {sb} / max({rb}, 1))))))")
    em.line(f"{segs} = ({n} + {k} - 1) // {k}")
    checkpoints = [_stack(em, f"max({segs}, 1)", v.aval, run_time(v.aval))
                   for v in fwd_graph.inputs[:n_vars]]
    rows = _Rows(em, fwd_graph, n_vars, k)
    step = dce(Graph(fwd_graph.inputs, fwd_graph.nodes, fwd_graph.outputs[:n_vars]))
    own_step = own_loop_lists(em, step, state)      # list variables: written in place
    own = loop_lists(fwd_graph, n_vars)             # copied as each segment restores them
    em.line(f"{i} = 0")
    with em.block(f"while {i} < ({segs} - 1) * {k}:"):      # checkpoints only
        with em.block(f"if {i} % {k} == 0:"):
            for c, s in zip(checkpoints, state, strict=True):
                _put(em, c, f"{i} // {k}", s, copy=True)
        _assign(em, state, em.inline(step, state + extra, own_step), simultaneous=True)
        em.line(f"{i} += 1")
    with em.block(f"if {segs} > 0:"):
        for c, s in zip(checkpoints, state, strict=True):
            _put(em, c, f"{segs} - 1", s, copy=True)
    with em.block(f"while {segs} > 0:"):
        em.line(f"{segs} -= 1")
        _assign(em, state, [f"rt.fresh_copy({c}[{segs}])" if j in own else f"{c}[{segs}]"
                            for j, c in enumerate(checkpoints)])
        m = em.fresh("m")
        em.line(f"{m} = min({k}, {n} - {segs} * {k})")
        rows.start(state)
        em.line(f"{i} = 0")
        with em.block(f"while {i} < {m}:"):
            outs = em.inline(fwd_graph, state + extra, own)
            rows.write(i, outs)
            _assign(em, state, outs[:n_vars], simultaneous=True)
            em.line(f"{i} += 1")
        _backward(em, m, rows, hoisted, extra, carry)


def _inlined(em, graph):
    """Whether ``em.inline`` emits ``graph`` in place, where a list it owns (``private``) is
    written in place; a graph the program uses from several places (a loop body its
    second-order gradient recomputes) is a function of its own (nested.py) that copies the
    list at each write, so the list would never be the history's buffer."""
    keys = getattr(em.outermost(), "graph_keys", None)
    return keys is None or not keys.shared(graph)


def _stacking_loop(em, cond_graph, fwd_graph, n_vars, ins, state, extra, memory_budget,
                   share_lists=False):
    """The While's loop over the names ``state``, writing each iteration's rows into buffers
    up to the memory budget, past which they are dropped: sized up front when the condition
    bounds the trip count (``trip_bounds``: a counted loop, ``maximum_iterations``), else
    doubling as they fill (the trip count is known only at the end). ``share_lists``: a
    list written at row ``i`` with a state's new value may hold that state's history
    (``_SharedList``; only where nothing but this op's backward reads the history). Returns
    the names of the trip count, whether the rows were kept, and the ``_Rows``."""
    fit, n, cap, keep = em.fresh("fit"), em.fresh("n"), em.fresh("cap"), em.fresh("keep")
    em.line(f"{fit} = max({int(memory_budget)} // max({_row_bytes(em, fwd_graph, n_vars)}, 1), 1)")
    bounds = trip_bounds(cond_graph, fwd_graph, n_vars)
    if not bounds:
        em.line(f"{cap} = min({fit}, 16)")
    else:   # its trip count (``for i in tf.range``) or its bound (``maximum_iterations``) up front
        most = ", ".join(f"np.int64({ins[j]}) - np.int64({ins[i]})" for i, j in bounds)
        em.line(f"{cap} = max(1, min({fit}, {most}))")
    found = _SharedList.find(cond_graph, fwd_graph, n_vars, loop_lists(fwd_graph, n_vars)) \
        if share_lists and _inlined(em, fwd_graph) else None
    shared = None if found is None else _SharedList(em, *found, state, extra, n_vars)
    own = own_loop_lists(em, fwd_graph, state, but=found[:1] if found else ())
    rows = _Rows(em, fwd_graph, n_vars, cap, shared)   # copies the shared list (allocate)
    rows.start(state)
    em.line(f"{keep} = True")
    em.line(f"{n} = 0")
    with em.block("while True:"):
        (pred,) = em.inline(cond_graph, state + extra)
        with em.block(f"if not {pred}:"):
            em.line("break")
        outs = em.inline(fwd_graph, state + extra, own)
        with em.block(f"if {keep} and {n} >= {cap}:"):
            with em.block(f"if {n} < {fit}:"):       # double the buffers, up to the budget
                em.line(f"{cap} = min(2 * {cap}, {fit})")
                rows.grow(n, cap)
            with em.block("else:"):
                em.line(f"{keep} = False")
        with em.block(f"if {keep}:"):
            rows.write(n, outs)
        _assign(em, state, outs[:n_vars], simultaneous=True)
        em.line(f"{n} += 1")
    if shared:
        shared.finish(em, n)
    return n, keep, rows


def _forward(em, node, cond_graph, fwd_graph, n_vars, ins, extra, memory_budget,
             share_lists=False):
    """The forward loop WhileWithGrad and WhileStacks share, from the node's initial loop
    variables: its outputs' loop variables and trip count bound; returns (state names, trip
    count, whether the rows were kept, the ``_Rows``)."""
    state = [em.var(v) for v in node.outputs[:n_vars]]
    _assign(em, state, ins[:n_vars])
    n, keep, rows = _stacking_loop(em, cond_graph, fwd_graph, n_vars, ins, state, extra,
                                   memory_budget, share_lists)
    for v in node.outputs[:n_vars]:
        em.bind(v)
    em.define(node.outputs[n_vars], f"np.int32({n})")
    return state, n, keep, rows


@stmt_op("WhileWithGrad")
def _while_with_grad(em, node, cond_graph, fwd_graph, bwd_graph, seed_graph, n_vars, n_extra,
                     memory_budget):
    """runtime/kernels/loops.py's WhileWithGrad: the While's loop writing each iteration's
    rows into buffers (``_stacking_loop``), up to the memory budget; past it the rows are
    dropped and WhileGrad's loops run (``_segments``)."""
    ins = [em.ref(v) for v in node.inputs]
    init, extra, seeds = ins[:n_vars], ins[n_vars:n_vars + n_extra], ins[n_vars + n_extra:]
    state, n, keep, rows = _forward(em, node, cond_graph, fwd_graph, n_vars, ins, extra,
                                    memory_budget, share_lists=True)
    carry = [em.var(v) for v in node.outputs[n_vars + 1:]]
    _assign(em, carry, em.inline(seed_graph, state + [em.ref(node.outputs[n_vars])] + seeds))
    hoisted = _Hoisted(bwd_graph, len(fwd_graph.outputs) - n_vars, n_extra)
    with em.block(f"if {keep}:"):
        _backward(em, n, rows, hoisted, extra, carry)
    with em.block("else:"):                          # past the budget: WhileGrad's plan
        again = [em.fresh("s") for _ in range(n_vars)]
        _assign(em, again, init)
        _segments(em, f"np.int64({n})", again, extra, carry, fwd_graph, hoisted, n_vars,
                  memory_budget)
    for v in node.outputs[n_vars + 1:]:
        em.bind(v)


@stmt_op("WhileStacks")
def _while_stacks(em, node, cond_graph, body_graph, fwd_graph, n_vars, memory_budget):
    """runtime/kernels/loops.py's WhileStacks: WhileWithGrad's forward loop (``_stacking_loop``,
    up to the budget), whose buffers, cut to the trip count, are outputs: the
    stacks (no rows when the budget dropped them). Their leading size is the trip count, a
    size only the run knows: the program's one output of unknown size (``stack_output``)."""
    ins = [em.ref(v) for v in node.inputs]
    _, n, keep, rows = _forward(em, node, cond_graph, fwd_graph, n_vars, ins, ins[n_vars:],
                                memory_budget)
    if any(isinstance(name, _Ragged) for name, _ in rows.where):
        raise Unsupported("WhileStacks: a stack of rows whose size changes is no tensor")
    states, spans = row_states(fwd_graph, n_vars), history_spans(fwd_graph, n_vars)
    for v, r in zip(node.outputs[n_vars + 1:], stacked_rows(fwd_graph, n_vars), strict=True):
        if states[r] is None:
            em.define(v, f"{rows.stacks[r]}[:{n} if {keep} else 0]")
        else:
            lo, hi = spans[states[r][0]]
            em.define(v, f"{rows.history[states[r][0]][0]}[{lo}:({n} + {hi}) if {keep} else {lo}]")


class _Given:
    """``_Rows``' reading side over stacks the program was given (WhileStacks' outputs): row
    ``r`` of iteration ``i`` is ``stack[i]``, or ``history[i]`` / ``history[i + 1]``."""

    def __init__(self, fwd_graph, n_vars, stacks):
        self.avals = [v.aval for v in fwd_graph.outputs[n_vars:]]
        picked, states = stacked_rows(fwd_graph, n_vars), row_states(fwd_graph, n_vars)
        history = {states[r][0]: s for s, r in zip(stacks, picked, strict=True)
                   if states[r] is not None}
        named, spans = dict(zip(picked, stacks, strict=True)), history_spans(fwd_graph, n_vars)
        self.where = [(named[r], 0) if state is None else
                      (history[state[0]], state[1] - spans[state[0]][0])
                      for r, state in enumerate(states)]

    row, rows, slab = _Rows.row, _Rows.rows, _Rows.slab


@stmt_op("WhileGradStacks")
def _while_grad_stacks(em, node, fwd_graph, bwd_graph, n_vars, n_extra, memory_budget):
    """WhileGrad's backward over the stacks it is given; over stacks of no rows (the forward
    was past its budget) WhileGrad's own loops (``_segments``: checkpoints)."""
    k = len(stacked_rows(fwd_graph, n_vars))
    ins = [em.ref(v) for v in node.inputs[1:len(node.inputs) - k]]
    stacks = [em.ref(v) for v in node.inputs[len(node.inputs) - k:]]
    extra = ins[n_vars:n_vars + n_extra]
    carry = [em.var(v) for v in node.outputs]
    _assign(em, carry, ins[n_vars + n_extra:])
    n = em.fresh("n")
    em.line(f"{n} = np.int64({em.ref(node.inputs[0])})")
    hoisted = _Hoisted(bwd_graph, len(fwd_graph.outputs) - n_vars, n_extra)
    if not stacks:
        _backward(em, n, _Given(fwd_graph, n_vars, []), hoisted, extra, carry)
    else:
        with em.block(f"if {n} == 0 or {stacks[0]}.shape[0] > 0:"):
            _backward(em, n, _Given(fwd_graph, n_vars, stacks), hoisted, extra, carry)
        with em.block("else:"):
            state = [em.fresh("s") for _ in range(n_vars)]
            _assign(em, state, ins[:n_vars])
            _segments(em, n, state, extra, carry, fwd_graph, hoisted, n_vars, memory_budget)
    for v in node.outputs:
        em.bind(v)


def _zero(aval):
    if not aval.shape:
        return f"{np_type(aval.dtype)}(0)"
    dims = "".join(f"{d}, " for d in aval.shape)      # sizes as read (shape_free.py)
    return f"np.zeros(({dims.rstrip()}), dtype={np_type(aval.dtype)})"


def _accumulate(em, names, avals, exprs):
    """``name = name + expr`` for the float ones (integers have no cotangent: they stay 0)."""
    for name, aval, e in zip(names, avals, exprs, strict=True):
        if aval.dtype.is_floating:
            em.line(f"{name} = {name} + {e}")


@stmt_op("WhileGradGrad")
def _while_grad_grad(em, node, fwd_graph, bwd_graph, fwd_vjp, bwd_vjp, n_vars, n_extra):
    """runtime/kernels/loops.py's four passes, each a ``while`` over stacks of ``n`` rows."""
    nc = len(node.outputs) - n_vars - n_extra
    ins = [em.ref(v) for v in node.inputs[1:]]
    avals = [v.aval for v in node.inputs[1:]]
    extra = ins[n_vars:n_vars + n_extra]
    state = [em.fresh("s") for _ in range(n_vars)]
    carry = [em.fresh("c") for _ in range(nc)]
    ct = [em.fresh("ct") for _ in range(nc)]
    _assign(em, state, ins[:n_vars])
    _assign(em, carry, ins[n_vars + n_extra:n_vars + n_extra + nc])
    _assign(em, ct, ins[n_vars + n_extra + nc:])
    n, i = em.fresh("n"), em.fresh("i")
    em.line(f"{n} = np.int64({em.ref(node.inputs[0])})")
    rows = [v.aval for v in fwd_graph.outputs[n_vars:]]
    # a state, row or carry whose size changes across iterations is a list (``_Ragged``)
    varying = [run_time(v.aval) for v in fwd_graph.inputs[:n_vars]]
    states_st = [_stack(em, f"max({n}, 1)", a, r) for a, r in zip(avals[:n_vars], varying, strict=True)]
    rows_st = [_stack(em, f"max({n}, 1)", a, run_time(a)) for a in rows]
    carry_st = [_stack(em, f"max({n}, 1)", a, run_time(v.aval)) for a, v in
                zip(avals[n_vars + n_extra:n_vars + n_extra + nc], bwd_graph.inputs[-nc:] if nc else (),
                    strict=True)]
    rows_ct_st = [_stack(em, f"max({n}, 1)", a, run_time(a)) for a in rows]
    em.line(f"{i} = 0")
    with em.block(f"while {i} < {n}:"):
        outs = em.inline(fwd_graph, state + extra)
        for b, s in zip(states_st, state, strict=True):
            _put(em, b, i, s)
        for b, e in zip(rows_st, outs[n_vars:], strict=True):
            _put(em, b, i, e)
        _assign(em, state, outs[:n_vars], simultaneous=True)
        em.line(f"{i} += 1")
    row = [f"{b}[{i}]" for b in rows_st]
    with em.block(f"while {i} > 0:"):
        em.line(f"{i} -= 1")
        for b, c in zip(carry_st, carry, strict=True):
            _put(em, b, i, c)
        _assign(em, carry, em.inline(bwd_graph, row + extra + carry), simultaneous=True)
    extra_ct = [em.fresh("ea") for _ in range(n_extra)]
    _assign(em, extra_ct, [_zero(a) for a in avals[n_vars:n_vars + n_extra]])
    nr = len(rows)
    with em.block(f"while {i} < {n}:"):
        outs = em.inline(bwd_vjp, row + extra + [f"{b}[{i}]" for b in carry_st] + ct)
        for b, e in zip(rows_ct_st, outs[:nr], strict=True):
            _put(em, b, i, e)
        _accumulate(em, extra_ct, avals[n_vars:n_vars + n_extra], outs[nr:nr + n_extra])
        _assign(em, ct, outs[nr + n_extra:], simultaneous=True)
        em.line(f"{i} += 1")
    state_ct = [em.fresh("sa") for _ in range(n_vars)]
    # the last state's cotangent: zeros shaped as that state (a list the loop grew is longer)
    _assign(em, state_ct, [f"np.zeros_like({s})" if r else _zero(a)
                           for s, a, r in zip(state, avals[:n_vars], varying, strict=True)])
    with em.block(f"while {i} > 0:"):
        em.line(f"{i} -= 1")
        outs = em.inline(fwd_vjp, [f"{b}[{i}]" for b in states_st] + extra + state_ct
                         + [f"{b}[{i}]" for b in rows_ct_st])
        _accumulate(em, extra_ct, avals[n_vars:n_vars + n_extra], outs[n_vars:])
        floats = [k for k, a in enumerate(avals[:n_vars]) if a.dtype.is_floating]
        _assign(em, [state_ct[k] for k in floats], [outs[k] for k in floats], simultaneous=True)
    _assign(em, [em.var(v) for v in node.outputs], state_ct + extra_ct + ct)
    for v in node.outputs:
        em.bind(v)


# -- loop states whose sizes only the run knows (codegen/shape_free.py, ``RunDim``) ------------


class _Ragged(str):
    """The name of a stack of values whose size changes across iterations (a TensorArray the
    loop grows, its cotangent): rows of different shapes cannot share one buffer, so it is a
    list of arrays, one per row, stored where written (``_put``)."""


def _stack(em, rows, aval, ragged):
    """A stack of ``rows`` values of ``aval``: a buffer, or a ``_Ragged`` list when the size
    changes across iterations (its slots start as empty arrays of the rank and dtype)."""
    if not ragged:
        return _buffer(em, rows, aval)
    name = _Ragged(em.fresh("stack"))
    name.empty = f"np.empty(({'0, ' * len(aval.shape)}), dtype={np_type(aval.dtype)})"
    em.line(f"{name} = [{name.empty} for _ in range({rows})]")
    return name


def _put(em, stack, at, value, copy=False):
    """Row ``at`` of ``stack`` holds ``value`` (``copy``: a value the loop may write in place
    later, a checkpointed list variable)."""
    if isinstance(stack, _Ragged):
        em.line(f"{stack}[{at}] = {'rt.fresh_copy' if copy else 'np.ascontiguousarray'}({value})")
    else:
        em.line(f"{stack}[{at}] = {value}")


def _gemm(node):
    return node.op in OPS and OPS[node.op].gemm


def _scatter(z, cin, out, nodes, uses):
    """Whether the carry update ``out = cin + z`` adds one iteration's rows at its ids,
    ``z = UnsortedSegmentSum(data, ids, num_segments)`` over the whole carry (the gradient of
    ``tf.gather(xs, t)`` in a loop body): then ``data`` is added into the carry in place,
    not as a zeroed carry-sized array per iteration (quadratic in the trip count)."""
    seg = z.node
    if seg is None or id(seg) not in nodes or seg.op != "UnsortedSegmentSum" or uses[z.id] != 1:
        return False
    data, ids = seg.inputs
    return (z.aval == cin.aval == out.aval and cin.aval.shape
            and seg.attrs["num_segments"] == cin.aval.shape[0]
            and data.aval.dtype == cin.aval.dtype
            and not any(run_time(x.aval) for x in (cin, data, ids)))


def _scatter_add(em, carry, aval, data, data_aval, ids, ids_aval):
    """``carry[ids] += data`` in place, in index order (templates/reduce.py's
    UnsortedSegmentSum: negative ids are dropped, ids past the end raise)."""
    n = aval.shape[0]       # num_segments (_scatter)
    m = 1
    for d in ids_aval.shape:
        m *= d
    q = 1
    for d in aval.shape[1:]:
        q *= d
    ov, dv, iv, i, s, j = (em.fresh(x) for x in ("ov", "dv", "iv", "i", "s", "j"))
    em.line(f"{ov} = {carry}.reshape({shape_lit((n, q))})")
    em.line(f"{dv} = {_array(data, data_aval)}.reshape({shape_lit((m, q))})")
    em.line(f"{iv} = {_array(ids, ids_aval)}.reshape({shape_lit((m,))})")
    with em.block(f"for {i} in range({m}):"):
        em.line(f"{s} = {iv}[{i}]")
        with em.block(f"if {s} >= {n}:"):
            em.line(f'raise IndexError("UnsortedSegmentSum: a segment id is out of range '
                    f'[0, {n})")')
        with em.block(f"if {s} >= 0:"):
            with em.block(f"for {j} in range({q}):"):
                em.line(f"{ov}[{s}, {j}] += {dv}[{i}, {j}]")


def _array(expr, aval):
    return expr if aval.shape else f"np.full((1,), {expr}, dtype={np_type(aval.dtype)})"
