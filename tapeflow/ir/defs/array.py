"""Shape-manipulating ops: reshape, transpose, stacking, slicing, gathering...

Attributes are plain hashable values. A slice key is a ``spec``: a tuple whose
items are an int (index), a ``(start, stop, step)`` triple of ints or None
(slice), None (new axis) or Ellipsis, as ``ops.array.getitem`` builds it.
"""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import INTS, NUMERIC, AVal, check_dtype, check_same_dtype, defop
from ..shapes import (broadcast_shapes, merge_shapes, normalize_axis, num_elements,
                      shapes_compatible)


def _same_shapes(avals, what):
    """The shape all inputs share (unknown dims: compatible ones, the known size wins)."""
    shape = avals[0].shape
    for i, a in enumerate(avals[1:], 1):
        if not shapes_compatible(a.shape, shape):
            raise InferError(f"{what}: input #{i} has shape {list(a.shape)}, input #0 has {list(shape)}")
        shape = merge_shapes(shape, a.shape)
    return shape


# -- reshaping ---------------------------------------------------------------------

def _reshape(avals, shape):
    x = avals[0]
    shape = tuple(shape)
    if shape.count(-1) > 1:
        raise InferError(f"only one dimension of the new shape {list(shape)} can be -1")
    if any(d < -1 for d in shape):
        raise InferError(f"dimensions of the new shape {list(shape)} must be non-negative or -1")
    n = num_elements(x.shape)
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if -1 in shape:
        if n is None:
            return AVal(tuple(None if d == -1 else d for d in shape), x.dtype)
        if known == 0 or n % known:
            raise InferError(f"Input to reshape is a tensor with {n} values, but the requested shape "
                             f"requires a multiple of {known}")
        shape = tuple(n // known if d == -1 else d for d in shape)
    elif n is not None and n != known:
        raise InferError(f"Input to reshape is a tensor with {n} values, but the requested shape "
                         f"{list(shape)} has {known}")
    return AVal(shape, x.dtype)


def _rank(in_avals):
    return len(in_avals[0].shape)


# Row rules (``OpDef.keeps_rows``) are asked only when every output leads with the batch axis.
def _keeps_leading_axis(attrs, flags, in_avals, out_avals):
    """In C order, a reshape whose input also leads with the batch keeps each row in its row."""
    return in_avals[0].shape[0] == out_avals[0].shape[0]


defop("Reshape", _reshape, attrs={"shape": "shape"}, shape_noop=True, moves_data=True,
      keeps_rows=_keeps_leading_axis)


def _transpose(avals, perm):
    x = avals[0]
    if sorted(perm) != list(range(len(x.shape))):
        raise InferError(f"perm {list(perm)} is not a permutation of the {len(x.shape)} axes")
    return AVal(tuple(x.shape[p] for p in perm), x.dtype)


defop("Transpose", _transpose, attrs={"perm": "ints"}, moves_data=True,
      keeps_rows=lambda attrs, flags, in_avals, out_avals: attrs["perm"][0] == 0)


def _expand_dims(avals, axis):
    x = avals[0]
    rank = len(x.shape)
    if not -rank - 1 <= axis <= rank:
        raise InferError(f"Tried to expand dim index {axis} for tensor with {rank} dimensions.")
    axis %= rank + 1
    return AVal(x.shape[:axis] + (1,) + x.shape[axis:], x.dtype)


def _new_axis_not_first(attrs, flags, in_avals, out_avals):
    return attrs["axis"] % (_rank(in_avals) + 1) != 0


defop("ExpandDims", _expand_dims, attrs={"axis": "axis"}, moves_data=True,
      keeps_rows=_new_axis_not_first)


def _squeeze(avals, axis):
    """``axis`` None squeezes every dimension of size 1; else a tuple of axes that must be 1."""
    x = avals[0]
    rank = len(x.shape)
    if axis is None:
        if None in x.shape:   # TensorFlow's result has an unknown rank; tapeflow's ranks are known
            raise InferError(f"squeezing every dimension of size 1 of shape {list(x.shape)}, "
                             f"whose sizes are known only at run time, gives an unknown rank; "
                             f"name the axes to squeeze (axis=...)")
        return AVal(tuple(d for d in x.shape if d != 1), x.dtype)
    axes = set()
    for a in axis:
        if not -rank <= a < rank:
            raise InferError(f"Tried to squeeze dim index {a} for tensor with {rank} dimensions.")
        if x.shape[a] not in (1, None):
            raise InferError(f"Can not squeeze dim[{a % rank}], expected a dimension of 1, "
                             f"got {x.shape[a]}")
        axes.add(a % rank)
    return AVal(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


def _squeeze_rows(attrs, flags, in_avals, out_avals):
    return attrs["axis"] is not None and all(a % _rank(in_avals) != 0 for a in attrs["axis"])


defop("Squeeze", _squeeze, attrs={"axis": "axis"}, shape_noop=True, moves_data=True,
      keeps_rows=_squeeze_rows)


def _broadcast_to(avals, shape):
    x = avals[0]
    shape = tuple(shape)
    if len(x.shape) > len(shape):
        raise InferError(f"cannot broadcast a tensor of shape {list(x.shape)} to {list(shape)}")
    out = broadcast_shapes(x.shape, shape)
    if not shapes_compatible(out, shape) or any(d == 1 and e not in (1, None)
                                                for d, e in zip(shape, out[len(out) - len(shape):])):
        raise InferError(f"cannot broadcast a tensor of shape {list(x.shape)} to {list(shape)}")
    # an unknown target dim where the input's is known (not 1) can only be that size
    return AVal(merge_shapes(shape, out), x.dtype)


defop("BroadcastTo", _broadcast_to, attrs={"shape": "shape"}, shape_noop=True, moves_data=True,
      broadcasts_to=True,
      keeps_rows=lambda attrs, flags, in_avals, out_avals: len(attrs["shape"]) == _rank(in_avals))


def _tile(avals, multiples):
    x = avals[0]
    if len(multiples) != len(x.shape):
        raise InferError(f"Expected multiples argument to be a vector of length {len(x.shape)} "
                         f"but got length {len(multiples)}")
    if any(m < 0 for m in multiples):
        raise InferError(f"Expected multiples to be non-negative, got {list(multiples)}")
    return AVal(tuple(None if d is None else d * m for d, m in zip(x.shape, multiples, strict=True)),
                x.dtype)


defop("Tile", _tile, attrs={"multiples": "ints"}, shape_noop=True, moves_data=True,
      keeps_rows=lambda attrs, flags, in_avals, out_avals: attrs["multiples"][0] == 1)


def _pad(avals, paddings, constant_values=0):
    x = avals[0]
    if len(paddings) != len(x.shape) or any(len(p) != 2 for p in paddings):
        raise InferError(f"paddings must be a matrix of shape [{len(x.shape)}, 2], got {list(paddings)}")
    if any(b < 0 or e < 0 for b, e in paddings):
        raise InferError(f"paddings must be non-negative, got {list(paddings)}")
    return AVal(tuple(None if d is None else d + b + e for d, (b, e) in zip(x.shape, paddings)), x.dtype)


defop("Pad", _pad, attrs={"paddings": "pairs", "constant_values": "number"}, shape_noop=True,
      moves_data=True,
      keeps_rows=lambda attrs, flags, in_avals, out_avals: tuple(attrs["paddings"][0]) == (0, 0))

# -- joining and splitting ------------------------------------------------------------


def _concat(avals, axis):
    if not avals:
        raise InferError("concat needs at least one tensor")
    dt = check_same_dtype(avals)
    rank = len(avals[0].shape)
    if rank == 0:
        raise InferError("Can't concatenate scalars (use tf.stack instead)")
    ax = normalize_axis(axis, rank)
    first = avals[0].shape
    for i, a in enumerate(avals[1:], 1):
        if len(a.shape) != rank or any(not (d is None or e is None or d == e)
                                       for j, (d, e) in enumerate(zip(a.shape, first)) if j != ax):
            raise InferError(f"ConcatOp : Dimension mismatch in axis {ax}: input #{i} has shape "
                             f"{list(a.shape)}, input #0 has {list(first)}")
        first = tuple(e if j == ax else merge_shapes((e,), (d,))[0]
                      for j, (d, e) in enumerate(zip(a.shape, first)))
    sizes = [a.shape[ax] for a in avals]
    total = None if None in sizes else sum(sizes)
    return AVal(first[:ax] + (total,) + first[ax + 1:], dt)


def _axis_not_first(attrs, flags, in_avals, out_avals):
    return attrs["axis"] % _rank(in_avals) != 0


defop("ConcatV2", _concat, arity=None, attrs={"axis": "axis"}, moves_data=True,
      keeps_rows=_axis_not_first)


def _pack(avals, axis):
    if not avals:
        raise InferError("stack needs at least one tensor")
    dt = check_same_dtype(avals)
    shape = _same_shapes(avals, "all inputs to stack must have the same shape")
    ax = normalize_axis(axis, len(shape) + 1)
    return AVal(shape[:ax] + (len(avals),) + shape[ax:], dt)


defop("Pack", _pack, arity=None, attrs={"axis": "axis"}, moves_data=True,
      keeps_rows=_new_axis_not_first)


def _unpack(avals, num, axis):
    x = avals[0]
    ax = normalize_axis(axis, len(x.shape))
    if x.shape[ax] is not None and x.shape[ax] != num:
        raise InferError(f"Input shape axis {ax} must equal {num}, got shape {list(x.shape)}")
    return (AVal(x.shape[:ax] + x.shape[ax + 1:], x.dtype),) * num


defop("Unpack", _unpack, attrs={"num": "int_or_none", "axis": "axis"}, multi_output=True,
      moves_data=True, keeps_rows=_axis_not_first)


def split_sizes(dim, sizes, axis=0):
    """Resolve ``sizes`` (an int count, or a tuple with at most one -1) against ``dim``."""
    if isinstance(sizes, int):
        if sizes <= 0 or dim % sizes:
            raise InferError(f"Number of ways to split should evenly divide the split dimension, "
                             f"but got split_dim {axis} (size = {dim}) and num_split {sizes}")
        return (dim // sizes,) * sizes
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise InferError(f"size_splits {list(sizes)} may hold only one -1 and no other negative size")
    rest = dim - sum(s for s in sizes if s != -1)
    if (-1 in sizes and rest < 0) or (-1 not in sizes and rest != 0):
        raise InferError(f"Determined shape must either match input shape along split_dim exactly if "
                         f"fully specified, or be less than the size of the input along split_dim if "
                         f"not fully specified.  Got: {sum(s for s in sizes if s != -1)} vs. {dim}")
    return tuple(rest if s == -1 else s for s in sizes)


def _split(avals, sizes, axis):
    x = avals[0]
    ax = normalize_axis(axis, len(x.shape))
    if x.shape[ax] is None:   # the parts' sizes are known at run time (the -1 one, or all)
        if isinstance(sizes, int):
            if sizes <= 0:
                raise InferError(f"Number of ways to split should be positive, got {sizes}")
            parts = (None,) * sizes
        else:
            if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
                raise InferError(f"size_splits {list(sizes)} may hold only one -1 and no other "
                                 f"negative size")
            parts = tuple(None if s == -1 else s for s in sizes)
        return tuple(AVal(x.shape[:ax] + (s,) + x.shape[ax + 1:], x.dtype) for s in parts)
    return tuple(AVal(x.shape[:ax] + (s,) + x.shape[ax + 1:], x.dtype)
                 for s in split_sizes(x.shape[ax], sizes, ax))


defop("Split", _split, attrs={"sizes": "int_or_ints", "axis": "axis"}, multi_output=True, moves_data=True,
      keeps_rows=_axis_not_first)


def _split_v(avals, sizes, axis):
    """TensorFlow's SplitV with its sizes a tensor: ``sizes`` (the attribute) holds those known
    while tracing (None for the others), one per output."""
    x, s = avals
    check_dtype(s, (D.int32, D.int64), "size_splits")
    if len(s.shape) != 1 or s.shape[0] not in (None, len(sizes)):
        raise InferError(f"size_splits must be a vector of {len(sizes)} sizes, got shape "
                         f"{list(s.shape)}")
    ax = normalize_axis(axis, len(x.shape))
    known = [d for d in sizes if d is not None]
    if x.shape[ax] is not None and None not in sizes and sum(known) != x.shape[ax]:
        raise InferError(f"size_splits {list(sizes)} do not add up to dimension {ax} of shape "
                         f"{list(x.shape)}")
    return tuple(AVal(x.shape[:ax] + (d,) + x.shape[ax + 1:], x.dtype) for d in sizes)


defop("SplitV", _split_v, arity=2, attrs={"sizes": "shape", "axis": "axis"}, multi_output=True,
      moves_data=True, keeps_rows=_axis_not_first)

# -- gathering -------------------------------------------------------------------------


def _gather(avals, axis, batch_dims=0):
    params, indices = avals
    check_dtype(indices, INTS, "indices")
    if batch_dims:
        raise InferError(f"batch_dims={batch_dims} is not supported (only 0)")
    if not params.shape:
        raise InferError("params must be at least 1 dimensional")
    ax = normalize_axis(axis, len(params.shape))
    return AVal(params.shape[:ax] + tuple(indices.shape) + params.shape[ax + 1:], params.dtype)


def _gather_rows(attrs, flags, in_avals, out_avals):
    """Rows of the params gathered along another axis, by indices the same for every row."""
    return flags == [True, False] and attrs["axis"] % _rank(in_avals) != 0


defop("GatherV2", _gather, arity=2, attrs={"axis": "axis", "batch_dims": "int"}, moves_data=True,
      keeps_rows=_gather_rows)

# -- slicing ---------------------------------------------------------------------------


def expand_spec(spec, rank):
    """``spec`` with its Ellipsis (explicit, or implied at the end) replaced by full slices."""
    if sum(1 for s in spec if s is Ellipsis) > 1:
        raise InferError("Multiple ellipses in slice spec not allowed")
    consumed = sum(1 for s in spec if s is not None and s is not Ellipsis)
    if consumed > rank:
        raise InferError(f"Index out of range using input dim {rank}; input has only {rank} dims")
    if Ellipsis not in spec:
        spec = tuple(spec) + (Ellipsis,)
    i = spec.index(Ellipsis)
    return spec[:i] + ((None, None, None),) * (rank - consumed) + spec[i + 1:]


def sliced_shape(shape, spec):
    """Output shape of ``x[spec]``; out-of-range indices and zero steps raise InferError."""
    out, dim = [], 0
    for s in expand_spec(spec, len(shape)):
        if s is None:
            out.append(1)
            continue
        d = shape[dim]
        if isinstance(s, int):
            if d is not None and not -d <= s < d:
                raise InferError(f"slice index {s} of dimension {dim} out of bounds.")
        else:
            if s[2] == 0:
                raise InferError(f"strides[{dim}] must be non-zero")
            out.append(None if d is None else len(range(*slice(*s).indices(d))))
        dim += 1
    return tuple(out)


def _strided_slice(avals, spec):
    x = avals[0]
    return AVal(sliced_shape(x.shape, spec), x.dtype)


def _strided_slice_grad(avals, spec, shape):
    g = avals[0]
    want = sliced_shape(tuple(shape), spec)
    if not shapes_compatible(want, g.shape):
        raise InferError(f"gradient of shape {list(g.shape)} does not match the slice shape {list(want)}")
    return AVal(tuple(shape), g.dtype)


def _slice_rows(attrs, flags, in_avals, out_avals):
    """Only a full slice of the leading axis keeps every row where it was."""
    first = expand_spec(tuple(attrs["spec"]), _rank(in_avals))[0]
    return tuple(first) == (None, None, None) if isinstance(first, tuple) else False


def _dynamic_strided_slice_grad(avals, spec, shape):
    g, s = avals
    _shape_input(s, shape, "DynamicStridedSliceGrad")
    return _strided_slice_grad([g], spec, shape)


defop("StridedSlice", _strided_slice, attrs={"spec": "spec"}, moves_data=True,
      keeps_rows=_slice_rows)
defop("StridedSliceGrad", _strided_slice_grad, attrs={"spec": "spec", "shape": "shape"},
      moves_data=True)
defop("DynamicStridedSliceGrad", _dynamic_strided_slice_grad, arity=2,
      attrs={"spec": "spec", "shape": "shape"}, moves_data=True)

# -- shapes given as tensors (unknown dims inside a trace) ------------------------------
# Inside a function traced with None dims, a size known only when the program runs is a
# tensor: ``tf.shape(x)`` (the Shape op), parts of it, or a Pack of such scalars. These ops
# take the shape as an int32/int64 vector input; their ``shape`` attribute is what is known
# while tracing (an int per known dim, None per unknown one), which gives the output's
# static shape. Called with a shape known while tracing they become their static forms
# (Reshape, BroadcastTo, Sum) in dispatch (``runtime.registry.STATIC_FORMS``), so a graph
# specialised to concrete shapes holds none of them.


def _shape_input(aval, template, what):
    check_dtype(aval, (D.int32, D.int64), f"{what} shape")
    if len(aval.shape) != 1 or aval.shape[0] not in (None, len(template)):
        raise InferError(f"{what}: the shape must be a vector of {len(template)} sizes, got a "
                         f"tensor of shape {list(aval.shape)}")


def _dynamic_reshape(avals, shape):
    x, s = avals
    _shape_input(s, shape, "DynamicReshape")
    n, known = num_elements(x.shape), num_elements(shape)
    if n is not None and known is not None and n != known:
        raise InferError(f"Input to reshape is a tensor with {n} values, but the requested shape "
                         f"{list(shape)} has {known}")
    return AVal(tuple(shape), x.dtype)


def _dynamic_broadcast_to(avals, shape):
    x, s = avals
    _shape_input(s, shape, "DynamicBroadcastTo")
    return _broadcast_to([x], shape)


def _sum_to_shape(avals, shape):
    g, s = avals
    _shape_input(s, shape, "SumToShape")
    check_dtype(g, NUMERIC, "SumToShape input")
    if len(shape) > len(g.shape):
        raise InferError(f"cannot sum a tensor of shape {list(g.shape)} to the larger rank "
                         f"of {list(shape)}")
    try:
        broadcast_shapes(g.shape, shape)
    except InferError:
        raise InferError(f"cannot sum a tensor of shape {list(g.shape)} to {list(shape)}") from None
    return AVal(tuple(shape), g.dtype)


defop("DynamicReshape", _dynamic_reshape, arity=2, attrs={"shape": "shape"}, moves_data=True,
      keeps_rows=_keeps_leading_axis)
defop("DynamicBroadcastTo", _dynamic_broadcast_to, arity=2, attrs={"shape": "shape"},
      moves_data=True, broadcasts_to=True,
      keeps_rows=lambda attrs, flags, in_avals, out_avals: len(attrs["shape"]) == _rank(in_avals))
defop("SumToShape", _sum_to_shape, arity=2, attrs={"shape": "shape"}, kind="other")

# -- shapes and encodings (not differentiable) -----------------------------------------


def _shape_of(avals, out_type):
    if D.as_dtype(out_type) not in (D.int32, D.int64):
        raise InferError(f"out_type must be int32 or int64, got {D.as_dtype(out_type).name}")
    return AVal((len(avals[0].shape),), D.as_dtype(out_type))


defop("Shape", _shape_of, attrs={"out_type": "dtype"}, moves_data=True)
defop("Size", lambda avals, out_type: AVal((), _shape_of(avals, out_type).dtype),
      attrs={"out_type": "dtype"}, moves_data=True)


def _one_hot(avals, depth, on_value, off_value, axis, dtype):
    x = avals[0]
    check_dtype(x, (D.uint8, D.int32, D.int64), "indices")
    if depth < 0:
        raise InferError(f"depth must be non-negative, got: {depth}")
    rank = len(x.shape)
    if not -1 <= axis <= rank:
        raise InferError(f"Expected axis to be -1 or between [0, {rank}).  But received: {axis}")
    ax = rank if axis == -1 else axis
    return AVal(x.shape[:ax] + (depth,) + x.shape[ax:], D.as_dtype(dtype))


defop("OneHot", _one_hot, attrs={"depth": "int", "on_value": "number", "off_value": "number",
                                 "axis": "axis", "dtype": "dtype"}, moves_data=True)


# -- EnsureShape: a shape as a type -------------------------------------------------------------

def _ensure_shape(avals, shape):
    """``x`` with the static shape ``shape`` (None: unknown while tracing): TensorFlow's
    ``tf.ensure_shape``. It relaxes a known dimension (a ``while_loop`` variable whose
    ``shape_invariants`` let it change size) or makes an unknown one known; the kernel
    checks the value's shape when it runs."""
    (x,) = avals
    shape = tuple(shape)
    if len(x.shape) != len(shape) or any(
            d is not None and s is not None and d != s for d, s in zip(x.shape, shape)):
        raise InferError(f"Shape of tensor {_fmt_shape(x.shape)} is not compatible with "
                         f"expected shape {_fmt_shape(shape)}")
    return AVal(shape, x.dtype)


def _fmt_shape(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


defop("EnsureShape", _ensure_shape, attrs={"shape": "shape"}, moves_data=True)
