"""Shape ops: reshape, transpose, stack, slicing... (top-level ``tapeflow.*``)."""
from __future__ import annotations

import builtins

import numpy as np

from ..errors import InvalidArgumentError, user_line
from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.dynamic_shape import DynamicShape
from ..runtime.registry import STATIC_FORMS
from ..runtime.tensor import Tensor, Variable, convert_to_tensor, wrap
from . import dims as _dims
from .creation import ones

newaxis = None


def _ints(values):
    """A tuple of Python ints from a list/tuple/TensorShape/Tensor of ints."""
    if hasattr(values, "numpy"):
        values = values.numpy().tolist()
    if isinstance(values, (int, np.integer)):
        return (int(values),)
    return tuple(int(v) for v in values)


def _int(value):
    """A Python int from an int or an int scalar tensor (axis arguments)."""
    return int(value.numpy()) if hasattr(value, "numpy") else int(value)


def _tensor(x):
    return x if isinstance(x, Tensor) or hasattr(x, "aval") and not isinstance(x, Variable) \
        else convert_to_tensor(x)


def _tensor_list(values):
    """Tensors of one dtype: Python numbers take the dtype of the tensors beside them."""
    values = list(values)
    hint = next((v.dtype for v in values if hasattr(v, "dtype")), None)
    if hint is None:
        try:
            hint = convert_to_tensor(values).dtype
        except (TypeError, ValueError):
            pass
    return [v if hasattr(v, "dtype") else convert_to_tensor(v, dtype_hint=hint) for v in values]


# -- reshaping ---------------------------------------------------------------------

def reshape(tensor, shape, name=None) -> Tensor:
    """``tensor``'s entries in a new ``shape`` (one dimension may be -1: inferred).

    ``shape`` may hold sizes known only at run time (tensors, ``tf.shape(x)``): then the
    op is DynamicReshape, which reads them when the program runs.

    >>> tf.reshape(tf.range(6), [2, -1])
    <tf.Tensor: shape=(2, 3), dtype=int32, numpy=
    array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)>
    """
    dims, sizes = _dims.resolve(shape)
    if sizes is None:
        return apply("Reshape", [tensor], {"shape": dims})
    if isinstance(shape, DynamicShape) and _dims.reshape_dims(dims) is not None:
        # a shape a tensor of the trace has: consistent by construction, so one unknown
        # dim is the static Reshape's -1
        return apply("Reshape", [tensor], {"shape": _dims.reshape_dims(dims)})
    return apply("DynamicReshape", [tensor, sizes],
                 {"shape": tuple(None if d == -1 else d for d in dims)})


def ensure_shape(x, shape, name=None) -> Tensor:
    """``x``, checked to have ``shape`` (None: any size there), with that static shape.

    TensorFlow's ``tf.ensure_shape``: where ``shape`` has None and ``x``'s static shape a
    size, the result's static shape forgets it (a loop variable of a ``while_loop`` whose
    ``shape_invariants`` allow it to change size starts so).

    Args:
      x: a tensor.
      shape: a list of sizes and None, of ``x``'s rank.

    Returns:
      ``x`` with static shape ``shape``; InvalidArgumentError if its shape does not fit.

    >>> tf.ensure_shape(tf.zeros([2, 3]), [None, 3]).shape
    TensorShape([2, 3])
    """
    dims = tuple(None if d is None else int(d) for d in
                 (shape.as_list() if hasattr(shape, "as_list") else shape))
    return apply("EnsureShape", [_tensor(x)], {"shape": dims})


def transpose(a, perm=None, conjugate=False, name=None) -> Tensor:
    """``a`` with its axes permuted by ``perm`` (reversed when None).

    >>> tf.transpose(tf.constant([[1, 2, 3]]))
    <tf.Tensor: shape=(3, 1), dtype=int32, numpy=
    array([[1],
           [2],
           [3]], dtype=int32)>
    """
    if perm is None:
        a = _tensor(a)
        perm = tuple(reversed(range(len(a.shape))))
    return apply("Transpose", [a], {"perm": _ints(perm)})


def expand_dims(input, axis, name=None) -> Tensor:
    """``input`` with a new axis of size 1 inserted at ``axis``.

    >>> tf.expand_dims(tf.constant([1.0, 2.0]), -1).shape
    TensorShape([2, 1])
    """
    return apply("ExpandDims", [input], {"axis": _int(axis)})


def squeeze(input, axis=None, name=None) -> Tensor:
    """``input`` without its dimensions of size 1 (or only those in ``axis``).

    ``axis`` None (or empty, as in TensorFlow) removes every dimension of size 1.

    >>> tf.squeeze(tf.zeros([1, 2, 1])).shape
    TensorShape([2])
    """
    axes = None if axis is None else _ints(axis)
    return apply("Squeeze", [input], {"axis": axes or None})


def broadcast_to(input, shape, name=None) -> Tensor:
    """``input`` broadcast to ``shape`` (NumPy's broadcasting rules); ``shape`` may hold
    sizes known only at run time.

    >>> tf.broadcast_to(tf.constant([1.0, 2.0]), [2, 2])
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 2.],
           [1., 2.]], dtype=float32)>
    """
    dims, sizes = _dims.resolve(shape)
    if sizes is None:
        return apply("BroadcastTo", [input], {"shape": dims})
    return apply("DynamicBroadcastTo", [input, sizes], {"shape": dims})


def tile(input, multiples, name=None) -> Tensor:
    """``input`` repeated ``multiples[i]`` times along each axis ``i``.

    ``multiples`` known only at run time: a broadcast of x with a unit axis before each of
    its axes, then a reshape merging each pair (the same elements as Tile).

    >>> tf.tile(tf.constant([[1, 2]]), [2, 1])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 2],
           [1, 2]], dtype=int32)>
    """
    counts, sizes = _dims.resolve(multiples)
    if sizes is None:
        return apply("Tile", [input], {"multiples": counts})
    x = _tensor(input)
    rank = len(x.shape)
    if len(counts) != rank:
        raise ValueError(f"Expected multiples argument to be a vector of length {rank} but got "
                         f"length {len(counts)}")
    shape = _dims.shape_of(x)
    reps = [_dims.dim(_dims.DynamicShape(counts, sizes), k) for k in range(rank)]
    for k in range(rank):
        x = apply("ExpandDims", [x], {"axis": 2 * k})
    pairs = [v for k in range(rank) for v in (reps[k], _dims.dim(shape, k))]
    x = broadcast_to(x, _dims.pack(pairs))
    return reshape(x, _dims.pack([_dims.multiply(reps[k], _dims.dim(shape, k))
                                  for k in range(rank)]))


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None) -> Tensor:
    """``tensor`` padded with ``constant_values`` (``paddings``: [before, after] per axis).

    >>> tf.pad(tf.constant([[1.0]]), [[1, 0], [0, 1]])
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[0., 0.],
           [1., 0.]], dtype=float32)>
    """
    if mode.upper() != "CONSTANT":
        raise NotImplementedError(f"pad mode {mode!r}: only 'CONSTANT' is supported")
    if hasattr(paddings, "numpy"):
        paddings = paddings.numpy().tolist()
    if hasattr(constant_values, "numpy"):
        constant_values = constant_values.numpy().item()
    return apply("Pad", [tensor], {"paddings": tuple(_ints(p) for p in paddings),
                                   "constant_values": constant_values})


# -- joining and splitting ------------------------------------------------------------

def concat(values, axis, name="concat") -> Tensor:
    """Tensors joined along an existing axis ``axis``.

    One tensor is returned through ``identity``, as in TensorFlow (no ConcatV2 op).

    >>> tf.concat([tf.constant([[1.0]]), tf.constant([[2.0]])], axis=1)
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[1., 2.]], dtype=float32)>
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        return apply("Identity", [values[0]])
    return apply("ConcatV2", _tensor_list(values), {"axis": _int(axis)})


def stack(values, axis=0, name="stack") -> Tensor:
    """Tensors of one shape stacked along a new axis ``axis``.

    >>> tf.stack([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])], axis=1)
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 3.],
           [2., 4.]], dtype=float32)>
    """
    return apply("Pack", _tensor_list(values), {"axis": _int(axis)})


def unstack(value, num=None, axis=0, name="unstack") -> list[Tensor]:
    """The slices of ``value`` along ``axis``, as a list of tensors.

    >>> [t.numpy().tolist() for t in tf.unstack(tf.constant([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    x = _tensor(value)
    axis, rank = _int(axis), len(x.shape)
    if num is None:
        num = x.shape[axis] if -rank <= axis < rank else 0
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
    return list(apply("Unpack", [x], {"num": int(num), "axis": axis}))


def split(value, num_or_size_splits, axis=0, num=None, name="split") -> list[Tensor]:
    """``value`` split along ``axis`` into a list of tensors.

    An int splits into that many equal parts; a list gives the sizes (one may be -1).

    >>> [t.numpy().tolist() for t in tf.split(tf.constant([1, 2, 3, 4]), 2)]
    [[1, 2], [3, 4]]
    """
    s = num_or_size_splits
    if isinstance(s, (int, np.integer)) or (hasattr(s, "shape") and len(s.shape) == 0):
        sizes = _int(s)
    else:
        sizes, tensor = _dims.resolve(s)
        if tensor is not None:   # sizes known only at run time (TensorFlow's SplitV)
            return list(apply("SplitV", [value, tensor], {"sizes": sizes, "axis": _int(axis)}))
    return list(apply("Split", [value], {"sizes": sizes, "axis": _int(axis)}))


# -- gathering and slicing ------------------------------------------------------------

def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None) -> Tensor:
    """Slices of ``params`` along ``axis`` (default 0) at ``indices``.

    >>> tf.gather(tf.constant([10.0, 20.0, 30.0]), [2, 0])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([30., 10.], dtype=float32)>
    """
    axis = batch_dims if axis is None else _int(axis)
    return apply("GatherV2", [params, indices], {"axis": axis, "batch_dims": int(batch_dims)})


def list_rows(params, indices) -> Tensor:
    """Rows of ``params`` at ``indices`` as a TensorArray/TensorList reads them: the values of
    ``gather``, but a dense gradient (TensorFlow's list ops), not gather's IndexedSlices. The
    GatherV2's axis is written ``-rank``: TensorFlow's gather rule slices only a literal 0."""
    if not isinstance(params, (Tensor, Variable)) and not hasattr(params, "aval"):
        params = convert_to_tensor(params)
    rank = params.shape.rank
    if not rank:
        return gather(params, indices)
    return apply("GatherV2", [params, indices], {"axis": -rank, "batch_dims": 0})


_BAD_INDEX = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
              "tf.int32/tf.int64 tensors are valid indices, got {!r}")


def _index(v, key):
    if isinstance(v, (int, np.integer)):
        return int(v)
    if hasattr(v, "dtype") and hasattr(v, "shape") and len(v.shape) == 0 \
            and D.as_dtype(v.dtype).is_integer:
        return int(v)
    raise TypeError(_BAD_INDEX.format(key))


def slice_spec(key):
    """The hashable ``spec`` attr of a Python indexing key (see ``ir.defs.array``)."""
    spec = []
    for k in key if isinstance(key, tuple) else (key,):
        if k is None or k is Ellipsis:
            spec.append(k)
        elif isinstance(k, builtins.slice):
            spec.append(tuple(None if v is None else _index(v, k) for v in (k.start, k.stop, k.step)))
        else:
            spec.append(_index(k, k))
    return tuple(spec)


def strided_slice(x, spec):
    return apply("StridedSlice", [x], {"spec": spec})


def strided_slice_grad(g, spec, shape):
    """Zeros of ``shape`` with ``g`` written at ``spec`` (the gradient of ``strided_slice``)."""
    dims, sizes = _dims.resolve(shape)
    if sizes is not None:   # the sliced tensor's sizes are known only at run time
        return apply("DynamicStridedSliceGrad", [g, sizes], {"spec": spec, "shape": dims})
    return apply("StridedSliceGrad", [g], {"spec": spec, "shape": dims})


def getitem(x, key):
    """``x[key]`` for ints, slices, Ellipsis, newaxis and int scalar tensors (Tensor.__getitem__).

    A scalar int tensor known only when the program runs (``x[t]`` in ``for t in
    tf.range(n)``) is taken by a gather after the static part of the key, as TensorFlow's
    strided slice with a tensor ``begin``: a negative index counts from the end, one out of
    range raises ``InvalidArgumentError``."""
    keys = key if isinstance(key, tuple) else (key,)
    if not any(_dims.is_symbolic(k) for k in keys):
        return strided_slice(x, slice_spec(key))
    x = _tensor(x)
    consumed = sum(k is not None and k is not Ellipsis for k in keys)
    static, gathers, axis = [], [], 0      # axis: of the static slice's result
    for k in keys:
        if _dims.is_symbolic(k):
            if len(k.shape) != 0 or not D.as_dtype(k.dtype).is_integer:
                raise TypeError(_BAD_INDEX.format(k))
            gathers.append((axis, k))
            k = builtins.slice(None)
        static.append(k)
        if k is Ellipsis:
            axis += len(x.shape) - consumed
        elif k is None or isinstance(k, builtins.slice):
            axis += 1
    whole = all(k is Ellipsis or k == builtins.slice(None) for k in static)
    y = x if whole else strided_slice(x, slice_spec(tuple(static)))   # x[t]: no copy of x
    for axis, k in reversed(gathers):      # the last first: a gather drops its axis
        k = _dims._int32(k)
        negative = apply("Less", [k, wrap(np.asarray(0, np.int32))])
        wrapped = _dims.add(k, _dims.dim(_dims.shape_of(y), axis))     # k + the axis' size
        k = apply("SelectV2", [negative, wrapped, k])
        # TF's x[t] is a strided slice (a dense gradient): the axis written from the end, as
        # list_rows (gather's IndexedSlices rule is for a literal 0)
        rank = y.shape.rank
        y = apply("GatherV2", [y, k], {"axis": axis - rank if rank else axis, "batch_dims": 0})
    return y


def slice(input_, begin, size, name=None) -> Tensor:
    """The block of ``input_`` starting at ``begin`` with ``size`` entries per axis.

    ``size[i]`` -1 means to the end. Bounds are checked (a strided slice would clamp).

    >>> tf.slice(tf.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[2, 3],
           [5, 6]], dtype=int32)>
    """
    x = _tensor(input_)
    begin, size, shape = _ints(begin), _ints(size), tuple(x.shape)
    if len(begin) != len(shape) or len(size) != len(shape):
        raise InvalidArgumentError(f"Slice: expected begin and size of length {len(shape)}, got "
                                   f"{list(begin)} and {list(size)} for shape {list(shape)} [at {user_line()}]")
    spec = []
    for i, (b, s, d) in enumerate(zip(begin, size, shape)):
        if not 0 <= b <= d:
            raise InvalidArgumentError(f"Slice: Expected begin[{i}] in [0, {d}], but got {b}; input shape "
                                       f"{list(shape)} [at {user_line()}]")
        s = d - b if s == -1 else s
        if not 0 <= s <= d - b:
            raise InvalidArgumentError(f"Slice: Expected size[{i}] in [0, {d - b}], but got {s}; input "
                                       f"shape {list(shape)} [at {user_line()}]")
        spec.append((b, b + s, 1))
    return strided_slice(x, tuple(spec))


# -- shapes and encodings ---------------------------------------------------------------

def shape(input, out_type=D.int32, name=None) -> Tensor:
    """The shape of ``input`` as a 1-D integer tensor.

    >>> tf.shape(tf.zeros([2, 3]))
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>
    """
    return apply("Shape", [input], {"out_type": D.as_dtype(out_type)})


def meshgrid(*args, **kwargs) -> list:
    """N-D coordinate arrays from N 1-D tensors, as TensorFlow's ``meshgrid``.

    ``indexing="xy"`` (the default, Cartesian) swaps the first two output axes; ``"ij"``
    (matrix) keeps them. Written as TensorFlow writes it: each input reshaped to its own axis,
    times ``ones`` of the full shape in the first input's dtype, so gradients and dtype errors
    are TensorFlow's.

    >>> X, Y = tf.meshgrid(tf.constant([1.0, 2.0, 3.0]), tf.constant([10.0, 20.0]))
    >>> X.numpy().tolist(), Y.numpy().tolist()
    ([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[10.0, 10.0, 10.0], [20.0, 20.0, 20.0]])
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid() got an unexpected keyword argument {next(iter(kwargs))!r}")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    if not args:
        return []
    ndim = len(args)
    xs = [convert_to_tensor(x) for x in args]
    out = [reshape(x, (1,) * i + (-1,) + (1,) * (ndim - i - 1)) for i, x in enumerate(xs)]
    sizes = [size(x) for x in xs]     # a constant where the size is known
    if indexing == "xy" and ndim > 1:
        out[0] = reshape(out[0], (1, -1) + (1,) * (ndim - 2))
        out[1] = reshape(out[1], (-1, 1) + (1,) * (ndim - 2))
        sizes[0], sizes[1] = sizes[1], sizes[0]
    full = ones(sizes, xs[0].dtype)
    return [x * full for x in out]


def size(input, out_type=D.int32, name=None) -> Tensor:
    """The number of entries of ``input``, as a scalar integer tensor.

    >>> tf.size(tf.zeros([2, 3]))
    <tf.Tensor: shape=(), dtype=int32, numpy=6>
    """
    return apply("Size", [input], {"out_type": D.as_dtype(out_type)})


def rank(input, name=None) -> Tensor:
    """The number of dimensions of ``input``, as a scalar int32 tensor.

    Always static here, so a constant.

    >>> tf.rank(tf.zeros([2, 3]))
    <tf.Tensor: shape=(), dtype=int32, numpy=2>
    """
    return wrap(np.asarray(len(_tensor(input).shape), np.int32))


def _scalar(value, dtype):
    t = convert_to_tensor(value, dtype_hint=dtype)
    return t.numpy().item(), t.dtype


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None,
            name=None) -> Tensor:
    """One-hot vectors of length ``depth`` for integer ``indices``.

    TF's dtype rules: ``dtype``, else that of on/off_value, else float32; they must agree.

    >>> tf.one_hot([0, 2], depth=3)
    <tf.Tensor: shape=(2, 3), dtype=float32, numpy=
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)>
    """
    dtype = None if dtype is None else D.as_dtype(dtype)
    given = {k: _scalar(v, dtype) for k, v in (("on_value", on_value), ("off_value", off_value))
             if v is not None}
    for k, (_, dt) in given.items():
        if dtype is not None and dt != dtype:
            raise TypeError(f"dtype {dt!r} of {k} does not match dtype parameter {dtype!r}")
    dts = {dt for _, dt in given.values()}
    if len(dts) > 1:
        raise TypeError(f"dtype {given['on_value'][1]!r} of on_value does not match dtype "
                        f"{given['off_value'][1]!r} of off_value")
    dtype = dtype or (dts.pop() if dts else D.float32)
    on = given.get("on_value", (1, None))[0]
    off = given.get("off_value", (0, None))[0]
    if isinstance(indices, np.ndarray) and indices.dtype.kind == "f":
        # TF 2.21 converts a float NumPy array of labels (not a list or a float tensor) to
        # the integer indices, truncated toward zero: the Keras guides' one_hot(y_train)
        indices = indices.astype(np.int64)
    return apply("OneHot", [indices], {"depth": _int(depth), "on_value": on, "off_value": off,
                                       "axis": -1 if axis is None else _int(axis), "dtype": dtype})


# The static forms of the shape-tensor ops, for dispatch when the shape is known while tracing
STATIC_FORMS["DynamicReshape"] = lambda x, sizes, shape: reshape(x, sizes)
STATIC_FORMS["DynamicBroadcastTo"] = lambda x, sizes, shape: broadcast_to(x, sizes)
STATIC_FORMS["DynamicStridedSliceGrad"] = \
    lambda g, sizes, spec, shape: strided_slice_grad(g, spec, sizes)
STATIC_FORMS["SplitV"] = lambda x, sizes_, sizes, axis: tuple(split(x, sizes_, axis))

__all__ = ["meshgrid", "ensure_shape", "reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "tile", "pad", "concat",
           "stack", "unstack", "split", "gather", "slice", "shape", "size", "rank", "one_hot",
           "newaxis"]
