"""Shapes as values: static dims while tracing, or the int32 sizes at run time.

Inside a function traced with ``None`` dims a size may be known only when the program
runs. A shape argument (of ``reshape``, ``broadcast_to``, ``zeros``, ``fill``...) may then
be a tensor (``tf.shape(x)``), a list mixing ints and scalar tensors (``[tf.shape(x)[0],
3]``), or a ``DynamicShape`` (what gradient rules read from ``op.in_avals``). ``resolve``
turns any of them into the static dims plus, when some are unknown, the int32 vector that
holds them; the ops layer then emits the static op or its shape-tensor form
(``DynamicReshape``, ``DynamicBroadcastTo``, ``SumToShape``: ir/defs/array.py).
"""
import numpy as np

from ..ir import dtypes as D
from ..ir.graph import constant_of
from ..runtime.dispatch import apply
from ..runtime.dynamic_shape import DynamicShape
from ..runtime.tensor import Tensor, Variable, wrap


def is_symbolic(x):
    """A tensor of a trace (its value exists only when the program runs)."""
    return hasattr(x, "aval") and not isinstance(x, (Tensor, Variable))


def _int32(t):
    return t if t.dtype == D.int32 else apply("Cast", [t], {"dtype": D.int32})


def shape_of(x):
    """``x``'s shape: a tuple when every dim is known, else a DynamicShape over ``tf.shape``."""
    dims = tuple(x.shape)
    if None not in dims:
        return dims
    return DynamicShape(dims, apply("Shape", [x], {"out_type": D.int32}))


def resolve(shape):
    """(dims, tensor): the static dims of a shape argument (ints, -1 kept, None where only the
    run time knows) and, if any is unknown, the int32 vector of its sizes (else None)."""
    if isinstance(shape, DynamicShape):
        return tuple(shape), (_int32(shape.tensor) if None in shape else None)
    if is_symbolic(shape):
        if len(shape.shape) != 1 or shape.shape[0] is None:
            raise ValueError(f"a shape must be a vector of known length, got a tensor of shape "
                             f"{shape.shape}")
        return known_sizes(shape), _int32(shape)
    if hasattr(shape, "numpy"):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),), None
    dims, parts, dynamic = [], [], False
    for d in shape:
        if is_symbolic(d):
            if len(d.shape) != 0:
                raise ValueError(f"each size of a shape must be a scalar, got a tensor of shape "
                                 f"{d.shape}")
            dims.append(_known_size(d))
            parts.append(_int32(d))
            dynamic = True
            continue
        if hasattr(d, "numpy"):
            d = d.numpy()
        if d is None:
            raise ValueError(f"a shape given as a list needs every size, got {list(shape)}: "
                             f"use tf.shape(x) for sizes known only at run time")
        dims.append(int(d))
        parts.append(d)
    if not dynamic:
        return tuple(dims), None
    parts = [p if is_symbolic(p) else wrap(np.asarray(p, np.int32)) for p in parts]
    return tuple(dims), apply("Pack", parts, {"axis": 0})


def _node(t):
    value = getattr(t, "value", None)
    return getattr(value, "node", None)


def _known_size(t):
    """The size a scalar tensor of the trace holds if the graph says it while tracing: dim k of
    ``tf.shape(x)`` where x's dim k is known (TensorFlow's ``constant_value_as_shape``)."""
    node = _node(t)
    array = constant_of(node)
    if array is not None and array.ndim == 0:
        return int(array)
    if node is None or node.op != "StridedSlice":
        return None
    spec, src = node.attrs["spec"], _node(node.inputs[0])
    if src is None or src.op != "Shape" or len(spec) != 1 or not isinstance(spec[0], int):
        return None
    dims = src.inputs[0].aval.shape
    return dims[spec[0]] if -len(dims) <= spec[0] < len(dims) else None


def known_sizes(t):
    """The static dims of a shape vector of the trace: those of x for ``tf.shape(x)``, of each
    part for a Pack of scalar sizes; None where only the run time knows."""
    node = _node(t)
    if node is not None and node.op == "Shape":
        return tuple(node.inputs[0].aval.shape)
    if node is not None and node.op == "Pack" and node.attrs["axis"] == 0:
        return tuple(_known_size(_Sym(v)) for v in node.inputs)
    return (None,) * t.shape[0]


class _Sym:
    """A graph Value seen as a tensor of the trace (``_known_size`` reads ``value.node``)."""

    def __init__(self, value):
        self.value = value


def pack(dims):
    """A shape from per-dim sizes (ints, or int scalar tensors known at run time)."""
    if not any(is_symbolic(d) for d in dims):
        return tuple(int(d) for d in dims)
    static, tensor = resolve(list(dims))
    return DynamicShape(static, tensor)


def dim(shape, i):
    """Dim ``i`` of a shape: an int, or an int32 scalar tensor when only the run time knows it."""
    d = shape[i]
    if d is not None:
        return d
    return apply("StridedSlice", [shape.tensor], {"spec": (i,)})


def multiply(a, b):
    """The product of two sizes (ints, or int32 scalar tensors)."""
    if not is_symbolic(a) and not is_symbolic(b):
        return int(a) * int(b)
    as_t = [_int32(v) if is_symbolic(v) else wrap(np.asarray(v, np.int32)) for v in (a, b)]
    return apply("Mul", as_t)


def num_elements(shape):
    """The number of elements of a shape: an int, or an int32 scalar tensor."""
    if None not in tuple(shape):
        return int(np.prod(tuple(shape), dtype=np.int64))
    return apply("Prod", [_int32(shape.tensor)], {"axis": None, "keepdims": False})


def keep_dims(shape, axes):
    """``shape`` with ``axes`` set to 1 (a reduction's keepdims shape)."""
    return pack([1 if i in axes else dim(shape, i) for i in range(len(shape))])


def reshape_dims(dims):
    """A static Reshape's ``shape`` for these dims if at most one is unknown and the others
    are non-zero (that one is then -1: the element count decides it), else None."""
    unknown = sum(d is None or d == -1 for d in dims)
    if unknown == 0:
        return tuple(dims)
    if unknown == 1 and all(d not in (0,) for d in dims):
        return tuple(-1 if d is None else d for d in dims)
    return None


def _filled(value, sizes, dtype):
    """``value`` broadcast to the sizes ``sizes`` (ints or int32 scalar tensors)."""
    shape = pack(sizes)
    scalar = wrap(np.asarray(value, dtype.np))
    if not isinstance(shape, DynamicShape):
        return wrap(np.full(shape, value, dtype.np))
    return apply("DynamicBroadcastTo", [scalar, _int32(shape.tensor)], {"shape": tuple(shape)})


def add(a, b):
    """The sum of two sizes (ints, or int32 scalar tensors)."""
    if not is_symbolic(a) and not is_symbolic(b):
        return int(a) + int(b)
    as_t = [_int32(v) if is_symbolic(v) else wrap(np.asarray(v, np.int32)) for v in (a, b)]
    return apply("Add", as_t)


def eye(n, dtype):
    """The ``n`` x ``n`` identity of ``dtype`` (bool: the diagonal mask), ``n`` an int or an int32
    scalar tensor known at run time.

    Built from shape ops only, so it needs no op of its own: a column of ones beside an
    ``n`` x ``n`` block of zeros is ``[n, n + 1]`` with its ones at flat positions ``i * (n + 1)``;
    read as ``[n + 1, n]`` those are ``(i, i)``, and the last row (zeros) is dropped.
    """
    if not is_symbolic(n):
        return wrap(np.eye(int(n), dtype=dtype.np))
    ones = _filled(1, [n, 1], dtype)
    zeros = _filled(0, [n, n], dtype)
    wide = apply("ConcatV2", [ones, zeros], {"axis": 1})
    tall = apply("DynamicReshape", [wide, pack([add(n, 1), n]).tensor], {"shape": (None, None)})
    return apply("StridedSlice", [tall], {"spec": ((None, -1, None),)})


__all__ = ["DynamicShape", "multiply", "add", "eye", "resolve", "shape_of", "pack", "dim", "num_elements", "keep_dims", "reshape_dims",
           "is_symbolic"]
