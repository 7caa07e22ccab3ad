"""The list of a traced TensorArray whose elements differ in shape: padded values + shapes.

Every IR value has one static rank, and a loop variable one type, so such a list is two
tensors (``ir/defs/lists.py``): ``values`` [n, *P], element k in the leading corner of row k
(P: the largest size written per axis), and ``shapes`` [n, 1 + r] int32, row k = [1, *its
shape] once written, zeros before (TensorFlow's uninitialized element). A write is
``CropOrPad`` (both grow to the new sizes) and ``TensorListSetItem`` (the row and its shape);
reads are the RaggedList ops, whose kernels follow TensorFlow's TensorList rules and errors.
All of them are linear in the values, so gradients are those of existing ops, and the
adjoint ops (``concat_grad``) for the rest, to any order.

Written at Python indices with shapes the trace knows, ``shapes`` stays a constant (each
write folds), and a read then is a static slice: such a function compiles as before. Sizes
known only at run time (a write in a loop on a tensor) make the graph run on the NumPy
interpreter.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.dispatch import DATA_ERRORS, apply, op_error
from ..runtime.kernels import lists as kernels
from ..runtime.tensor import wrap
from . import array, creation, dims, math

_symbolic = dims.is_symbolic


def _int32(x):
    """A size or index (int, or an int scalar tensor) as an int32 tensor."""
    if not _symbolic(x):
        return wrap(np.asarray(int(x) if np.ndim(x) == 0 else x, np.int32))
    return x if x.dtype == D.int32 else math.cast(x, D.int32)


def _max(a, b):
    if not _symbolic(a) and not _symbolic(b):
        return max(int(a), int(b))
    return math.maximum(_int32(a), _int32(b))


def _attrs(es):
    """The op attributes of a TensorArray's element shape (a TensorShape, maybe unknown)."""
    if es.rank is None:
        return {"element_shape": (), "known_rank": False}
    return {"element_shape": tuple(es), "known_rank": True}


def crop_or_pad(x, shape, constant_values=0):
    """``x`` cut, or padded with ``constant_values``, at the end of each axis to ``shape`` (ints
    and int scalar tensors, a DynamicShape or an int vector); static sizes give static ops."""
    target, sizes = dims.resolve(shape)
    if sizes is None and None not in tuple(x.shape):
        if any(d > t for d, t in zip(x.shape, target)):
            x = array.strided_slice(x, tuple((0, min(d, t), None)
                                             for d, t in zip(x.shape, target)))
        if any(d < t for d, t in zip(x.shape, target)):
            x = array.pad(x, [[0, max(t - d, 0)] for d, t in zip(x.shape, target)],
                          constant_values=constant_values)
        return x
    if sizes is None:
        sizes = wrap(np.asarray(target, np.int32))
    return apply("CropOrPad", [x, sizes], {"shape": tuple(target),
                                           "constant_values": constant_values})


def empty(n, rank, dtype):
    """``n`` uninitialized elements of rank ``rank``."""
    return creation.zeros([n] + [0] * rank, dtype), creation.zeros([n, 1 + rank], D.int32)


def from_dense(buf, written):
    """The padded form of a dense list [n, *e]: the rows in ``written`` (None: every row,
    when the trace does not know which were written) initialized with shape e."""
    n, e = buf.shape[0], tuple(buf.shape[1:])
    row = np.array([1, *e], np.int32)
    if n is not None:
        shapes = np.zeros((n, 1 + len(e)), np.int32)
        shapes[list(range(n)) if written is None else sorted(written)] = row
        return buf, wrap(shapes)
    rows = dims.dim(dims.shape_of(buf), 0)
    return buf, array.broadcast_to(wrap(row), dims.pack([rows, 1 + len(e)]))


def relaxed(values, shapes, zero, rows):
    """The pair as a loop variable: every element size known only at run time (``zero``, an
    int32 tensor of the trace that is 0 when the program runs, makes a static size data), and
    the number of elements too when ``rows``."""
    vshape = dims.shape_of(values)
    n = dims.dim(vshape, 0)
    sizes = [dims.dim(vshape, k) for k in range(1, len(vshape))]
    grow = rows and not _symbolic(n)
    if grow:
        n = math.add(zero, n)
        shapes = crop_or_pad(shapes, [n, shapes.shape[1]])
    if grow or any(not _symbolic(d) for d in sizes):
        values = crop_or_pad(values, [n] + [d if _symbolic(d) else math.add(zero, d)
                                            for d in sizes])
    return values, shapes


def grown(values, shapes, n):
    """The pair with ``n`` elements (a dynamic-size list sized before a loop)."""
    sizes = [dims.dim(dims.shape_of(values), k) for k in range(1, len(values.shape))]
    return crop_or_pad(values, [n] + sizes), crop_or_pad(shapes, [n, shapes.shape[1]])


def length(values):
    """The number of elements: an int, or an int32 scalar tensor."""
    return dims.dim(dims.shape_of(values), 0)


def set_item(values, shapes, index, item, resize):
    """The pair with element ``index`` set to ``item`` (growing to ``index + 1`` elements
    first when ``resize``); out of range without it: TensorListSetItem's error."""
    r = len(item.shape)
    vshape, ishape = dims.shape_of(values), dims.shape_of(item)
    sizes = [_max(dims.dim(vshape, k + 1), dims.dim(ishape, k)) for k in range(r)]
    n = dims.dim(vshape, 0)
    if resize:
        n = _max(n, math.add(_int32(index), 1) if _symbolic(index) else int(index) + 1)
    values = crop_or_pad(values, [n] + sizes)
    values = apply("TensorListSetItem", [values, _int32(index), crop_or_pad(item, sizes)])
    if resize:
        shapes = crop_or_pad(shapes, [n, 1 + r])
    row = dims.resolve([1] + [dims.dim(ishape, k) for k in range(r)])
    row = row[1] if row[1] is not None else wrap(np.asarray(row[0], np.int32))
    return values, apply("TensorListSetItem", [shapes, _int32(index), row])


def _known(values, shapes, *indices):
    """The shapes as NumPy when the trace knows them and every index (written at Python
    indices with static shapes): readers then slice statically, so the program compiles."""
    if not _symbolic(values) or _symbolic(shapes) or None in tuple(values.shape) \
            or any(_symbolic(i) for i in indices):
        return None
    return np.asarray(shapes.numpy())


def _checked(op, fn, inputs, *args):
    """``fn(*args)``, a kernel helper run while tracing: its error as the op's, with the line."""
    try:
        return fn(*args)
    except DATA_ERRORS as e:
        raise op_error(op, e, [t.aval for t in inputs]) from None


def _element(values, k, shape):
    return array.strided_slice(values, (k,) + tuple((0, d, None) for d in shape))


def get_item(values, shapes, index, es):
    """Element ``index`` (TensorListGetItem: an uninitialized one reads as zeros)."""
    attrs = _attrs(es)
    known = _known(values, shapes, index)
    if known is None:
        return apply("RaggedListGetItem", [values, shapes, _int32(index)], attrs)
    shape, written = _checked("RaggedListGetItem", kernels.item_shape, [values, shapes], known,
                              int(index), attrs["element_shape"], attrs["known_rank"])
    return _element(values, int(index), shape) if written else creation.zeros(shape, values.dtype)


def gather(values, shapes, indices, es):
    """The elements at ``indices`` stacked (TensorListGather: one shape)."""
    attrs = _attrs(es)
    known = _known(values, shapes, indices)
    if known is None:
        return apply("RaggedListGather", [values, shapes, _int32(indices)], attrs)
    idx = [int(i) for i in np.asarray(indices.numpy() if hasattr(indices, "numpy")
                                      else indices).reshape(-1)]
    shape = _checked("RaggedListGather", kernels.gather_shape, [values, shapes], known, idx,
                     attrs["element_shape"], attrs["known_rank"], False)
    return _stacked(values, known, idx, shape)


def stack(values, shapes, es):
    """Every element stacked (TensorListStack: one shape)."""
    attrs = _attrs(es)
    known = _known(values, shapes)
    if known is None:
        return apply("RaggedListStack", [values, shapes], attrs)
    idx = list(range(known.shape[0]))
    shape = _checked("RaggedListStack", kernels.gather_shape, [values, shapes], known, idx,
                     attrs["element_shape"], attrs["known_rank"], True)
    return _stacked(values, known, idx, shape)


def _stacked(values, known, idx, shape):
    rows = [_element(values, i, shape) if known[i, 0] else creation.zeros(shape, values.dtype)
            for i in idx]
    return array.stack(rows) if rows else creation.zeros((0,) + tuple(shape), values.dtype)


def concat(values, shapes, es):
    """The elements joined along their first axis (TensorListConcatV2)."""
    attrs = _attrs(es)
    known = _known(values, shapes)
    if known is None:
        return apply("RaggedListConcat", [values, shapes], attrs)
    rows, rest = _checked("RaggedListConcat", kernels.concat_layout, [values, shapes], known,
                          attrs["element_shape"], attrs["known_rank"])
    parts = [_element(values, i, (k,) + rest) if known[i, 0]
             else creation.zeros((k,) + rest, values.dtype) for i, k in enumerate(rows)]
    return array.concat(parts, 0) if parts else creation.zeros((0,) + rest, values.dtype)


def concat_grad(g, shapes, shape, attrs):
    """``g`` (the cotangent of a concat) back in the padded layout of values of ``shape``."""
    target, sizes = dims.resolve(shape)
    if sizes is None:
        sizes = wrap(np.asarray(target, np.int32))
    return apply("RaggedListConcatGrad", [g, shapes, sizes], {**attrs, "shape": tuple(target)})


__all__ = ["crop_or_pad", "empty", "from_dense", "relaxed", "grown", "length", "set_item",
           "get_item", "gather", "stack", "concat", "concat_grad"]
