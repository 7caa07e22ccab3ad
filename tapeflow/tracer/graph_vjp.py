"""Autodiff of a graph by tracing its own gradient rules, and the forward/backward split.

``vjp_graph`` replays a graph symbolically under a GradientTape inside a fresh
trace and asks the tape for the gradient, with symbolic cotangents as output
gradients: the reverse graph is built by exactly the rules eager code uses, so
compiled and eager gradients agree by construction (values, None pattern).
``split`` then cuts the joint graph into a forward program (outputs + residuals)
and a backward program (residuals + cotangents -> gradients).
"""
from ..errors import InternalError
from ..ir.graph import Graph
from ..autodiff.backprop import forward_lines
from ..autodiff.custom_gradient import GradientCountError
from ..runtime.interpret import replay
from ..autodiff.tape import GradientTape
from ..ops.indexed_slices import IndexedSlices, dense
from ..runtime.tensor import convert_to_tensor
from .context import TraceContext


class Joint:
    """A joint forward+backward graph and which inputs got a gradient.

    ``graph.inputs`` = primal inputs, then one cotangent per differentiable output;
    ``graph.outputs`` = primal outputs, then one gradient per input in ``grad_inputs``.
    """

    def __init__(self, graph, n_primals, n_outputs, ct_outputs, grad_inputs, n_forward_nodes,
                 slices=None):
        self.graph, self.n_primals, self.n_outputs = graph, n_primals, n_outputs
        self.n_forward_nodes = n_forward_nodes  # graph.nodes[:n] came from the forward replay
        self.ct_outputs = ct_outputs      # indices of outputs that take a cotangent
        self.grad_inputs = grad_inputs    # indices of inputs that have a gradient
        # k -> (i, j): gradient k is an IndexedSlices, its output the values, its indices and
        # dense_shape gradient outputs i and j (after the len(grad_inputs) gradients)
        self.slices = slices or {}

    def gradients(self, outs):
        """The gradients from the gradient outputs ``outs``, IndexedSlices rebuilt."""
        n = len(self.grad_inputs)
        grads = list(outs[:n])
        for k, (i, j) in self.slices.items():
            grads[k] = IndexedSlices(grads[k], outs[i], outs[j])
        return grads


def vjp_graph(graph, wrt_mask=None, keep_slices=False):
    """The Joint of ``graph``: gradients of all float outputs w.r.t. all float inputs (those
    ``wrt_mask`` marks True, if given: the inputs a tape tracks). With ``keep_slices`` a
    gradient TensorFlow's backward function returns as an IndexedSlices stays one (three
    outputs: ``Joint.slices``); else every gradient is dense."""
    ctx = TraceContext()
    with ctx:
        primals = [ctx.input(v.aval) for v in graph.inputs]
        ct_outputs = [i for i, v in enumerate(graph.outputs) if v.aval.dtype.is_floating]
        cts = [ctx.input(graph.outputs[i].aval) for i in ct_outputs]
        wrt = [i for i, v in enumerate(graph.inputs) if v.aval.dtype.is_floating
               and (wrt_mask is None or wrt_mask[i])]
        lines = {}   # forward tensor id -> its node's user line, for the gradient ops' lines
        with GradientTape() as tape:
            for i in wrt:
                tape.watch(primals[i])
            outs = replay(graph, primals, lines)
        out_values = [ctx.value_of(o) for o in outs]  # before the gradient phase begins
        n_forward_nodes = len(ctx.graph.nodes)
        targets = [outs[i] for i in ct_outputs]
        try:
            with forward_lines(lines):
                grads = (tape.gradient(targets, [primals[i] for i in wrt], output_gradients=cts)
                         if targets else [None] * len(wrt))
        except InternalError as e:
            # a custom_gradient returning the wrong number of gradients: TensorFlow's gradient
            # of a function graph raises ValueError, its tape inside a function InternalError
            if isinstance(e.__cause__, GradientCountError):
                raise e.__cause__ from None
            raise
        if not keep_slices:
            grads = [dense(gr) for gr in grads]
        parts = [(gr.values, convert_to_tensor(gr.indices), convert_to_tensor(gr.dense_shape))
                 if isinstance(gr, IndexedSlices) else gr for gr in grads]
    g = ctx.graph
    g.outputs = out_values
    grad_inputs, extra, slices = [], [], {}
    for i, gr in zip(wrt, parts, strict=True):
        if gr is None:
            continue
        if isinstance(gr, tuple):      # an IndexedSlices: values here, the rest at the end
            slices[len(grad_inputs)] = gr[1:]
            gr = gr[0]
        grad_inputs.append(i)
        g.outputs.append(ctx.value_of(gr))
    n = len(grad_inputs)
    for k, (indices, shape) in slices.items():
        slices[k] = (n + len(extra), n + len(extra) + 1)
        extra += [ctx.value_of(indices), ctx.value_of(shape)]
    g.outputs += extra
    return Joint(g, len(primals), len(outs), ct_outputs, grad_inputs, n_forward_nodes, slices)


def split(joint):
    """(forward, backward, n_residuals), split where TensorFlow splits a function's gradient.

    forward: primal inputs -> primal outputs + residuals; backward: residuals + cotangents
    -> gradients. The backward is exactly the ops the gradient rules created; its residuals
    are the forward values those ops read, constants included. Which float values are
    residuals decides None versus zeros at second order through a function, so this split
    is TensorFlow's, not a memory-optimal one.
    """
    g, n_p, n_f = joint.graph, joint.n_primals, joint.n_forward_nodes
    fwd_nodes, bwd_nodes = g.nodes[:n_f], g.nodes[n_f:]
    backward_ids = {v.id for v in g.inputs[n_p:]} | {v.id for n in bwd_nodes for v in n.outputs}
    grad_outs = g.outputs[joint.n_outputs:]
    residuals, seen = [], set()
    for v in [i for n in bwd_nodes for i in n.inputs] + grad_outs:
        if v.id not in backward_ids and v.id not in seen:
            seen.add(v.id)
            residuals.append(v)
    forward = Graph(g.inputs[:n_p], fwd_nodes, g.outputs[:joint.n_outputs] + residuals)
    backward = Graph(residuals + g.inputs[n_p:], bwd_nodes, grad_outs)
    return forward, backward, len(residuals)
