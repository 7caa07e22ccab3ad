"""Reductions over axes, with ``keepdims``; arg-reductions; segment sums."""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, INTS, NUMERIC, check_dtype, defop
from ..shapes import reduced_shape, shapes_compatible


def reduction_axes(axis, rank):
    """Sorted non-negative axes for ``axis`` (None: all), rejecting what TensorFlow rejects.

    Stricter than ``shapes.normalize_axes``: like TF, a scalar has no axis 0 and a
    repeated axis (``[0, -2]`` on a matrix) is an error, not silently merged.
    """
    if axis is None:
        return tuple(range(rank))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int) or not -rank <= a < rank:
            raise InferError(f"Invalid reduction dimension {a!r} for input with {rank} dimension(s)")
        if a % rank in out:
            raise InferError(f"Axes contains duplicate dimension: {a % rank}")
        out.append(a % rank)
    return tuple(sorted(out))


def reduction(allowed=NUMERIC):
    """Shape inference for ``op(x, axis=None|int|tuple, keepdims=bool)``."""
    def infer(avals, axis=None, keepdims=False):
        x = avals[0]
        check_dtype(x, allowed)
        return AVal(reduced_shape(x.shape, reduction_axes(axis, len(x.shape)), keepdims), x.dtype)
    return infer


def _reduction_keeps_rows(attrs, flags, in_avals, out_avals):
    """Rows stay apart unless the batch axis is reduced."""
    return 0 not in reduction_axes(attrs.get("axis"), len(in_avals[0].shape))


_REDUCTION = dict(attrs={"axis": "axis", "keepdims": "bool"}, kind="reduction",
                  keeps_rows=_reduction_keeps_rows)
for _name in ("Sum", "Mean", "Prod", "Max", "Min"):
    defop(_name, reduction(), **_REDUCTION)
for _name in ("Any", "All"):
    defop(_name, reduction((D.bool_,)), **_REDUCTION)


def _arg_reduction(avals, axis, output_type):
    x = avals[0]
    check_dtype(x, NUMERIC)
    if D.as_dtype(output_type) not in (D.int32, D.int64):
        raise InferError(f"output_type must be int32 or int64, got {D.as_dtype(output_type).name}")
    (ax,) = reduction_axes(axis, len(x.shape))
    if x.shape[ax] == 0:
        raise InferError(f"Reduction axis {ax} is empty in shape {list(x.shape)}")
    return AVal(x.shape[:ax] + x.shape[ax + 1:], D.as_dtype(output_type))


defop("ArgMax", _arg_reduction, attrs={"axis": "axis", "output_type": "dtype"})
defop("ArgMin", _arg_reduction, attrs={"axis": "axis", "output_type": "dtype"})


def _unsorted_segment_sum(avals, num_segments):
    data, ids = avals
    check_dtype(data, NUMERIC, "data")
    check_dtype(ids, INTS, "segment_ids")
    k = len(ids.shape)
    if not shapes_compatible(data.shape[:k], ids.shape):
        raise InferError(f"segment_ids.shape = {list(ids.shape)} does not prefix data.shape = "
                         f"{list(data.shape)}")
    if num_segments < 0:
        raise InferError(f"num_segments must be non-negative, got {num_segments}")
    return AVal((num_segments,) + data.shape[k:], data.dtype)


defop("UnsortedSegmentSum", _unsorted_segment_sum, arity=2, attrs={"num_segments": "int"})


def _dynamic_unsorted_segment_sum(avals, num_segments):
    """UnsortedSegmentSum with ``num_segments`` a scalar tensor (TensorFlow's third input), for a
    count known only at run time; the attribute holds it if known while tracing, else None."""
    data, ids, n = avals
    check_dtype(n, (D.int32, D.int64), "num_segments")
    if n.shape != ():
        raise InferError(f"num_segments must be a scalar, got shape {list(n.shape)}")
    out = _unsorted_segment_sum([data, ids], 0)
    return AVal((num_segments,) + out.shape[1:], out.dtype)


defop("DynamicUnsortedSegmentSum", _dynamic_unsorted_segment_sum, arity=3,
      attrs={"num_segments": "int_or_none"})
