"""NumPy kernels of the reductions."""
import numpy as np

from ..registry import kernel


def _axes(axis):
    if axis is None:
        return None
    return (axis,) if isinstance(axis, int) else tuple(axis)


def _count(x, axis):
    return x.size if axis is None else int(np.prod([x.shape[a] for a in _axes(axis)], dtype=np.int64))


@kernel("Sum")
def _sum(x, axis=None, keepdims=False):
    return np.sum(x, axis=_axes(axis), keepdims=keepdims, dtype=np.asarray(x).dtype)


@kernel("Mean")
def _mean(x, axis=None, keepdims=False):
    """Sum then divide, as TensorFlow does; integer means truncate toward zero (C division)."""
    x = np.asarray(x)
    total = np.sum(x, axis=_axes(axis), keepdims=keepdims, dtype=x.dtype)
    n = _count(x, axis)
    if x.dtype.kind == "f":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(total / n).astype(x.dtype)
    if n == 0:
        raise ValueError("mean of an empty integer reduction is undefined")
    floor = total // n
    return floor + ((total % n != 0) & (total < 0)).astype(x.dtype)


@kernel("Prod")
def _prod(x, axis=None, keepdims=False):
    return np.prod(x, axis=_axes(axis), keepdims=keepdims, dtype=np.asarray(x).dtype)


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


@kernel("Max")
def _max(x, axis=None, keepdims=False):
    """An empty reduction gives the dtype's lowest value, like TensorFlow (NumPy would raise)."""
    x = np.asarray(x)
    return np.max(x, axis=_axes(axis), keepdims=keepdims, initial=_lowest(x.dtype))


@kernel("Min")
def _min(x, axis=None, keepdims=False):
    x = np.asarray(x)
    return np.min(x, axis=_axes(axis), keepdims=keepdims, initial=_highest(x.dtype))


kernel("Any")(lambda x, axis=None, keepdims=False: np.any(x, axis=_axes(axis), keepdims=keepdims))
kernel("All")(lambda x, axis=None, keepdims=False: np.all(x, axis=_axes(axis), keepdims=keepdims))
kernel("ArgMax")(lambda x, axis, output_type: np.argmax(x, axis=axis).astype(output_type.np))
kernel("ArgMin")(lambda x, axis, output_type: np.argmin(x, axis=axis).astype(output_type.np))


@kernel("UnsortedSegmentSum")
def _unsorted_segment_sum(data, ids, num_segments):
    """Negative ids are dropped (TensorFlow's rule); ids past the end are an error."""
    data, ids = np.asarray(data), np.asarray(ids)
    bad = ids >= num_segments
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        raise IndexError(f"segment_ids{list(pos)} = {ids[pos]} is out of range [0, {num_segments})")
    out = np.zeros((num_segments,) + data.shape[ids.ndim:], data.dtype)
    keep = ids >= 0
    np.add.at(out, ids[keep], data[keep])
    return out


kernel("DynamicUnsortedSegmentSum")(
    lambda data, ids, n, num_segments: _unsorted_segment_sum(data, ids, int(n)))
