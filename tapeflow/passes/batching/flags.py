"""The batch flags of values being vectorized (``passes.vectorize``), beyond True and False.

Here, below both, so the batching rules (``diag``, ``scaled``) and ``vectorize`` share them
without importing each other; ``passes.vectorize`` documents what they mean.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Identity:
    """Batch flag of a seed input: row j is one-hot at row-major position ``offset + j``
    over ``axes`` (None: all axes) of the input, broadcast over its other axes."""
    axes: tuple = None
    offset: int = 0


@dataclass(frozen=True)
class Diag:
    """Flag of a diagonal batched value (see ``passes.vectorize``): non-unit ``axes``."""
    axes: tuple
    offset: int = 0


@dataclass(frozen=True)
class Scaled:
    """Flag of a batched value kept as ``base * coef``: the env value is the dense base
    [B, *shape], ``coef`` an unbatched Value broadcasting to shape. Multiplying by shared
    values then costs only the small coefficient (``passes.batching.scaled``)."""
    coef: object


def structured(flag):
    return isinstance(flag, (Diag, Scaled))
