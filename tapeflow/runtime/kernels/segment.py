"""NumPy kernels of the segment max, min and product (ir/defs/segment.py).

TensorFlow folds each row into its segment in index order with ``acc = acc if x < acc
else x`` (max; ``>`` for min), so a NaN is kept only until a later number replaces it:
``[nan, 1]`` gives 1 and ``[1, nan]`` gives NaN. ``np.maximum.at`` propagates every NaN, so
it serves only data without NaN; the rest folds row by row.
"""
import numpy as np

from ..registry import kernel

_UFUNC = {"Max": np.maximum, "Min": np.minimum, "Prod": np.multiply}


def lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max


def _fold(reduction, out, ids, rows):
    """Fold ``rows[i]`` into ``out[ids[i]]`` in index order (ids already in range)."""
    if reduction == "Prod" or rows.dtype.kind != "f" or not np.isnan(rows).any():
        _UFUNC[reduction].at(out, ids, rows)
        return
    for s, x in zip(ids.tolist(), rows):
        acc = out[s]
        keep = (x < acc) if reduction == "Max" else (x > acc)
        out[s] = np.where(keep, acc, x)


def _check_range(ids, num_segments):
    bad = ids >= num_segments
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        raise IndexError(f"segment_ids{list(pos)} = {ids[pos]} is out of range "
                         f"[0, {num_segments})")


def unsorted_segment(reduction, data, ids, num_segments):
    """Rows with a negative id are dropped; an empty segment holds the identity (the lowest
    finite value for a max, the highest for a min, 1 for a product)."""
    data, ids = np.asarray(data), np.asarray(ids)
    _check_range(ids, num_segments)
    init = {"Max": lowest, "Min": highest}.get(reduction, lambda dt: 1)(data.dtype)
    out = np.full((num_segments,) + data.shape[ids.ndim:], init, data.dtype)
    keep = ids >= 0
    _fold(reduction, out, ids[keep], data[keep])
    return out


def sorted_segment(reduction, data, ids, num_segments):
    """Ids must be sorted and in [0, num_segments); an empty segment holds 0 (1 for a
    product), and the max of floats starts from -inf (TensorFlow's Eigen reducers)."""
    data, ids = np.asarray(data), np.asarray(ids)
    if ids.size and np.any(np.diff(ids) < 0):
        raise ValueError("segment ids are not increasing")
    if ids.size and (ids[0] < 0 or ids[-1] >= num_segments):
        bad = ids[0] if ids[0] < 0 else ids[-1]
        raise IndexError(f"Segment id {bad} out of range [0, {num_segments}), possibly "
                         "because 'segment_ids' input is not sorted.")
    floats = data.dtype.kind == "f"
    init = {"Max": -np.inf if floats else lowest(data.dtype),
            "Min": np.inf if floats else highest(data.dtype), "Prod": 1}[reduction]
    out = np.full((num_segments,) + data.shape[1:], init, data.dtype)
    _fold(reduction, out, ids, data)
    if reduction != "Prod":
        empty = np.bincount(ids, minlength=num_segments) == 0
        out[empty] = 0
    return out


for _r in ("Max", "Min", "Prod"):
    kernel("Segment" + _r)(lambda data, ids, num_segments, _r=_r:
                           sorted_segment(_r, data, ids, num_segments))
    kernel("UnsortedSegment" + _r)(lambda data, ids, num_segments, _r=_r:
                                   unsorted_segment(_r, data, ids, num_segments))
