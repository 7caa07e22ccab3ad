"""Split a joint forward+backward graph into a forward and a backward program, saving the
fewest bytes between them (a min-cut, after AOTAutograd's ``min_cut_rematerialization_partition``).

The joint graph takes the primal inputs then the output cotangents, and returns the primal
outputs then the gradients. Every node is one of:

- *tangent* (depends on a cotangent): runs in the backward program;
- *primal*: depends on primal inputs and constants only. It runs in the forward program if
  a primal output needs it. If the backward needs it too, it is either **saved** (a
  residual: an extra forward output and backward input, costing its bytes of memory
  held between the two calls) or **recomputed** in the backward from other residuals,
  which is allowed only for cheap ops (``recomputable``). A primal node that only the
  backward needs is simply moved there when that saves memory.

Which values to save is a minimum s-t cut. Each primal value v becomes an edge
``v_in -> v_out`` whose capacity is the cost of saving v; the source feeds the primal
inputs and every forward-needed value that may not be recomputed; every value the
backward reads feeds the sink; a node's inputs feed its outputs with infinite capacity.
A finite cut is then exactly a set of saved values from which the backward can
recompute all it needs, and the minimum cut is the cheapest such set. Because the cut
picks *edges of values*, a value read by several backward nodes (relu's output, read by
ReluGrad and by the next MatMul's weight gradient) is saved once.

Costs are integers ordered lexicographically: bytes first, then a small tie-break that
prefers values closer to the backward (saving relu's output rather than its input, when
both cost the same, avoids recomputing the relu). The tie-breaks of a whole graph sum to
less than one byte's weight, so the cut always has the minimum number of bytes.
Primal inputs cost 0 bytes: the caller holds them anyway, they are only passed along.
Constants are never saved: the backward program has its own copy.
"""
from dataclasses import dataclass, field
from typing import NamedTuple

from ..ir.graph import Graph, Value, aval_str, is_constant, value_names
from ..ir.opdef import OPS, AVal
from .rewrite import copy_node, is_pure, nbytes

# A dimension unknown at trace time counts as this many elements when weighing residuals.
UNKNOWN_DIM = 1024


def recomputable(node):
    """May the backward recompute this node instead of having its result saved?

    Elementwise ops and data movement (``OpDef.moves_data``): yes (a fused backward loop
    recomputes them for about the cost of reading a saved value). Reductions only when they
    shrink their input by less than 4x (AOTAutograd's rule: saving a small reduction result
    is cheaper than re-reading its big input). Contractions, linear algebra, softmax and
    scatters: never; nor an impure op (``OpDef.pure``), which would not give the same value
    twice.
    """
    opdef = OPS.get(node.op)
    if opdef is None or not is_pure(node):
        return False
    if opdef.kind == "elementwise" or opdef.moves_data:
        return True
    if opdef.kind == "reduction":
        read = sum(_weight_bytes(v.aval) for v in node.inputs)
        return 4 * sum(_weight_bytes(v.aval) for v in node.outputs) >= read
    return False


def _weight_bytes(aval):
    """Bytes of ``aval``, counting each unknown dimension as ``UNKNOWN_DIM``."""
    n = nbytes(aval)
    if n is None:
        n = aval.dtype.size
        for d in aval.shape:
            n *= UNKNOWN_DIM if d is None else d
    return n


class Residual(NamedTuple):
    """One saved value: its printed name in the joint graph, type, bytes, and whether it is
    a primal ``"input"`` (passed along, no extra memory) or ``"computed"`` by the forward."""
    name: str
    aval: AVal
    nbytes: int | None
    kind: str


@dataclass
class ResidualInfo:
    """What the forward hands the backward, for dumps and memory accounting.

    Iterating gives the ``Residual`` tuples in forward-output order. ``computed_bytes`` is
    the memory the forward allocates and keeps alive for the backward (the min-cut's
    objective); ``input_bytes`` is the primal inputs the backward reads; ``total_bytes``
    both (None if a dimension is unknown). ``recomputed`` lists the primal values computed
    in both programs. Names are those ``print_graph`` gives in the *joint* graph.
    """
    residuals: list = field(default_factory=list)
    recomputed: list = field(default_factory=list)

    def __iter__(self):
        return iter(self.residuals)

    def __len__(self):
        return len(self.residuals)

    def _sum(self, kinds):
        sizes = [r.nbytes for r in self.residuals if r.kind in kinds]
        return None if None in sizes else sum(sizes)

    @property
    def computed_bytes(self):
        return self._sum(("computed",))

    @property
    def input_bytes(self):
        return self._sum(("input",))

    @property
    def total_bytes(self):
        return self._sum(("input", "computed"))

    def __str__(self):
        lines = [f"residuals: {len(self)} values, {_size(self.computed_bytes)} computed + "
                 f"{_size(self.input_bytes)} primal inputs"]
        for r in self.residuals:
            lines.append(f"  {r.name}:{aval_str(r.aval)}  {_size(r.nbytes)}  {r.kind}")
        if self.recomputed:
            lines.append("recomputed in backward: " + " ".join(self.recomputed))
        return "\n".join(lines)


def _size(n):
    if n is None:
        return "? bytes"
    if n < 2**10:
        return f"{n} B"
    return f"{n / 2**10:.1f} KiB" if n < 2**20 else f"{n / 2**20:.2f} MiB"



# -- the pass ----------------------------------------------------------------------------------

def partition(joint, num_primal_inputs, num_primal_outputs, budget=None):
    """``(forward, backward, residual_info)`` for a joint graph (see the module docstring).

    forward: primal inputs -> primal outputs + residuals.
    backward: residuals + cotangents -> gradients.
    Running the backward on the forward's residuals gives exactly the joint graph's results.
    ``budget`` (bytes): when the cut keeps more computed bytes, the backward may recompute
    contractions too (``_Plan.fit``: convolutions, matmuls, pools), largest outputs first.
    """
    plan = _Plan(joint, num_primal_inputs, num_primal_outputs)
    saved = plan.min_cut() if budget is None else plan.fit(budget)
    backward, used, copied = plan.backward(saved)
    residuals = [v for v in saved if v.id in used]
    forward = plan.forward(residuals)
    names = value_names(joint)
    in_forward = set(forward.nodes)
    info = ResidualInfo(
        residuals=[Residual(names[v.id], v.aval, nbytes(v.aval),
                            "input" if v.id in plan.primal_input_ids else "computed")
                   for v in residuals],
        recomputed=[names[o.id] for n in copied if n in in_forward and not is_constant(n)
                    for o in n.outputs])
    return forward, backward, info


class _Plan:
    """The joint graph, classified: tangent values, what each program needs, the flow network."""

    def __init__(self, joint, num_primal_inputs, num_primal_outputs):
        n_in, n_out = len(joint.inputs), len(joint.outputs)
        if not 0 <= num_primal_inputs <= n_in or not 0 <= num_primal_outputs <= n_out:
            raise ValueError(f"joint graph has {n_in} inputs and {n_out} outputs; cannot take "
                             f"{num_primal_inputs} primal inputs and {num_primal_outputs} primal outputs")
        self.joint = joint
        self.primal_inputs = joint.inputs[:num_primal_inputs]
        self.cotangents = joint.inputs[num_primal_inputs:]
        self.primal_outputs = joint.outputs[:num_primal_outputs]
        self.grads = joint.outputs[num_primal_outputs:]
        self.primal_input_ids = {v.id for v in self.primal_inputs}
        self.producer = {o.id: n for n in joint.nodes for o in n.outputs}

        self.tangent = {v.id for v in self.cotangents}
        for node in joint.nodes:
            if any(v.id in self.tangent for v in node.inputs):
                self.tangent.update(o.id for o in node.outputs)
        for i, v in enumerate(self.primal_outputs):
            if v.id in self.tangent:
                raise ValueError(f"primal output {i} depends on a cotangent input; a joint graph's "
                                 f"primal outputs must be computable from the primal inputs alone")

        # Primal values the backward reads: inputs of the tangent nodes the gradients need,
        # and gradients that are primal values themselves (zeros, or an input returned as is).
        self.bw_reads = {}
        for node in self._ancestors(self.grads, lambda v: v.id not in self.tangent):
            for v in node.inputs:
                if v.id not in self.tangent:
                    self.bw_reads[v.id] = v
        for v in self.grads:
            if v.id not in self.tangent:
                self.bw_reads[v.id] = v
        self.fw_nodes = set(self._ancestors(self.primal_outputs))

    def _ancestors(self, values, stop=lambda v: False):
        """Nodes (in graph order) on which ``values`` depend, not walking past ``stop`` values."""
        marked, stack = set(), [v for v in values if not stop(v)]
        while stack:
            v = stack.pop()
            node = self.producer.get(v.id)
            if node is None or node in marked:
                continue
            marked.add(node)
            stack.extend(u for u in node.inputs if not stop(u))
        return [n for n in self.joint.nodes if n in marked]

    # -- the cut -------------------------------------------------------------------------------

    def fit(self, budget):
        """The values to save within ``budget`` computed bytes if it can be done: the minimum
        cut, re-cut with one more forward node the backward may recompute (pure, not cheap:
        a convolution, a matmul, a pool), the one with the largest outputs first, until the
        saved bytes fit. Time traded for memory, as ``tf.recompute_grad`` does by hand."""
        released = set()
        saved = self.min_cut()
        candidates = sorted((n for n in self.fw_nodes if not is_constant(n) and n.op in OPS
                             and is_pure(n) and not recomputable(n)),
                            key=lambda n: -sum(_weight_bytes(o.aval) for o in n.outputs))
        for node in candidates:
            if self._computed_bytes(saved) <= budget:
                break
            released.add(node)
            saved = self.min_cut(released)
        return saved

    def _computed_bytes(self, saved):
        return sum(_weight_bytes(v.aval) for v in saved if v.id not in self.primal_input_ids)

    def min_cut(self, released=frozenset()):
        """The values to save, in joint-graph order: a minimum cut of the flow network;
        ``released`` nodes may be recomputed in the backward whatever ``recomputable`` says."""
        import networkx as nx  # lazily: only compiling a gradient needs it

        primal_nodes = self._ancestors(list(self.bw_reads.values()))
        values = list(self.primal_inputs) + [o for n in primal_nodes if not is_constant(n)
                                             for o in n.outputs]
        if not self.bw_reads:
            return []
        dist = self._distance_to_backward(primal_nodes)
        tie = {v.id: 1 + min(dist.get(v.id, len(values)), len(values)) for v in values}
        byte_weight = sum(tie.values()) + 1  # all tie-breaks together weigh less than one byte

        g = nx.DiGraph()
        g.add_nodes_from(("source", "sink"))
        for v in values:
            cost = 0 if v.id in self.primal_input_ids else _weight_bytes(v.aval)
            g.add_edge(("in", v.id), ("out", v.id), capacity=cost * byte_weight + tie[v.id])
            if v.id in self.bw_reads:
                g.add_edge(("out", v.id), "sink")  # no capacity attribute: infinite
        for v in self.primal_inputs:
            g.add_edge("source", ("in", v.id))
        for node in primal_nodes:
            if is_constant(node):
                continue
            pinned = node in self.fw_nodes and not recomputable(node) and node not in released
            for o in node.outputs:
                if pinned:
                    g.add_edge("source", ("in", o.id))
                for u in node.inputs:
                    if not is_constant(self.producer.get(u.id)):
                        g.add_edge(("out", u.id), ("in", o.id))
        _, (source_side, _) = nx.minimum_cut(g, "source", "sink")
        return [v for v in values
                if ("in", v.id) in source_side and ("out", v.id) not in source_side]

    def _distance_to_backward(self, primal_nodes):
        """{value id: fewest primal ops between it and a value the backward reads}."""
        dist = {vid: 0 for vid in self.bw_reads}
        for node in reversed(primal_nodes):
            d = min((dist[o.id] for o in node.outputs if o.id in dist), default=None)
            if d is None:
                continue
            for u in node.inputs:
                dist[u.id] = min(dist.get(u.id, d + 1), d + 1)
        return dist

    # -- the two programs ------------------------------------------------------------------------

    def backward(self, saved):
        """The backward Graph reading ``saved`` and the cotangents; the ids of the residuals it
        reads; the joint nodes it copies (tangent nodes, constants and recomputed primal nodes)."""
        env = {v.id: v for v in self.cotangents}
        residual_inputs = {}
        for v in saved:
            env[v.id] = v if v.id in self.primal_input_ids else Value(v.aval)
            residual_inputs[v.id] = env[v.id]
        used = {v.id for v in self.grads if v.id in residual_inputs}

        def stop(v):
            if v.id in residual_inputs:
                used.add(v.id)
            return v.id in env

        out = Graph()
        copied = self._ancestors(self.grads, stop)
        for node in copied:
            missing = [u for u in node.inputs if u.id not in env]
            if missing:  # the cut guarantees this never happens; say so loudly if it does
                raise AssertionError(f"partition: {node.op} in the backward lacks {missing}")
            new = copy_node(node, [env[u.id] for u in node.inputs])
            out.nodes.append(new)
            env.update((o.id, n) for o, n in zip(node.outputs, new.outputs, strict=True))
        for v in self.grads:
            if v.id not in env:
                raise AssertionError(f"partition: gradient {v} is not computable in the backward")
        out.inputs = [residual_inputs[v.id] for v in saved if v.id in used] + list(self.cotangents)
        out.outputs = [env[v.id] for v in self.grads]
        return out, used, copied

    def forward(self, residuals):
        """The forward Graph: primal inputs -> primal outputs + residuals (nodes reused as they are)."""
        nodes = self._ancestors(list(self.primal_outputs) + list(residuals))
        return Graph(inputs=self.primal_inputs, nodes=nodes,
                     outputs=list(self.primal_outputs) + list(residuals))
