"""ParallelConcat: each [1, ...] input copied into its row of a fresh array."""
from .array import copy_loops
from .registry import stmt_op


@stmt_op("ParallelConcat")
def _parallel_concat(em, node, shape):
    (y,) = node.outputs
    out = em.alloc(y)
    for k, x in enumerate(node.inputs):
        copy_loops(em, x.aval.shape, out, lambda i, k=k: [str(k)] + i[1:],
                   lambda i, x=x: em.read(x, i))
