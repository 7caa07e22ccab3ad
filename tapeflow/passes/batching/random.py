"""Batching rules of the stateless random ops: with an unbatched key and counter they run as
they are (vectorize emits such nodes unchanged); a batched seed, key or counter gives each
row its own stream, which needs the op once per row: no rule, so vectorize loops over the
batch, as TensorFlow's pfor does for them."""
from ...runtime.kernels.random import OPS
from .registry import batching


@batching(*OPS)
def _per_row(b, node, inputs, batched):
    return None
