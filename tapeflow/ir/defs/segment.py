"""Segment max, min and product (TensorFlow's SegmentMax... and UnsortedSegmentMax...).

The sums and means are in ``reduce.py``/``ops/counting.py``. The sorted ops here take the
count of segments as an attribute (``max(segment_ids) + 1``, known while tracing, as
``segment_sum``'s): TensorFlow's sorted and unsorted kernels differ in what an empty segment
holds (0 sorted, the reduction's identity unsorted) and in the max's identity (-inf sorted,
the lowest finite value unsorted), so each is its own op.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, NUMERIC, check_dtype, defop
from ..shapes import shapes_compatible

SEGMENT_IDS = (D.int32, D.int64)
SORTED = ("SegmentMax", "SegmentMin", "SegmentProd")
UNSORTED = ("UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd")


def _sorted(avals, num_segments):
    data, ids = avals
    check_dtype(data, NUMERIC, "data")
    check_dtype(ids, SEGMENT_IDS, "segment_ids")
    if len(ids.shape) != 1:
        raise InferError("segment_ids should be a vector.")
    if not data.shape:
        raise InferError("input must be at least rank 1")
    if not shapes_compatible(data.shape[:1], ids.shape):
        raise InferError("segment_ids should be the same size as dimension 0 of input.")
    if num_segments < 0:
        raise InferError(f"num_segments must be non-negative, got {num_segments}")
    return AVal((num_segments,) + data.shape[1:], data.dtype)


def _unsorted(avals, num_segments):
    data, ids = avals
    check_dtype(data, NUMERIC, "data")
    check_dtype(ids, SEGMENT_IDS, "segment_ids")
    k = len(ids.shape)
    if len(data.shape) < k or not shapes_compatible(data.shape[:k], ids.shape):
        shape = ",".join(str(d) for d in data.shape)
        ids_shape = ",".join(str(d) for d in ids.shape)
        raise InferError(f"data.shape = [{shape}] does not start with segment_ids.shape = "
                         f"[{ids_shape}]")
    if num_segments < 0:
        raise InferError(f"Input num_segments == {num_segments} must not be negative.")
    return AVal((num_segments,) + data.shape[k:], data.dtype)


for _name in SORTED:
    defop(_name, _sorted, arity=2, attrs={"num_segments": "int"})
for _name in UNSORTED:
    defop(_name, _unsorted, arity=2, attrs={"num_segments": "int"})
