"""Batching rules of the stateless samplers: none (vectorize loops over the batch, one call per
row), as for the other stateless random ops (passes/batching/random.py): a sampler's stream
is laid out over its whole output, so a batched parameter or seed needs the op once per row."""
from ...runtime.kernels.samplers import OPS
from .registry import batching


@batching(*OPS)
def _per_row(b, node, inputs, batched):
    return None
