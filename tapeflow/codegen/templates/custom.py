"""CustomGradient (runtime/kernels/custom.py): the forward outputs pass through unchanged.

Its ``grad`` graph matters only to autodiff; in a compiled program the node is a rename.
"""
from .registry import stmt_op


@stmt_op("CustomGradient")
def _custom_gradient(em, node, grad, n_in, n_cap, mask):
    for x, y in zip(node.inputs[n_in + n_cap:], node.outputs, strict=True):
        em.bind(y, em.ref(x))
