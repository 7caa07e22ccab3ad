"""NumPy kernels of TopKV2 and InTopKV2 (ties: the lower index first, as TF's)."""
import numpy as np

from ..registry import kernel


@kernel("TopKV2")
def _top_k(x, k, sorted=True, index_type=None):
    x = np.asarray(x)
    n = x.shape[-1]
    # a stable ascending sort of the reversed row, read backwards: descending, ties by index
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    idx = (n - 1 - order)
    values = np.take_along_axis(x, idx, axis=-1)
    return np.ascontiguousarray(values), idx.astype(index_type.np if index_type else np.int32)


@kernel("InTopKV2")
def _in_top_k(predictions, targets, k):
    """True where fewer than k predictions beat the target's (ties all count as in); False
    for a non-finite target prediction or a target out of range."""
    p, t = np.asarray(predictions), np.asarray(targets)
    ok = (t >= 0) & (t < p.shape[1])
    target = p[np.arange(len(t)), np.where(ok, t, 0)]
    better = (p > target[:, None]).sum(axis=1)
    return ok & np.isfinite(target) & (better < k)
