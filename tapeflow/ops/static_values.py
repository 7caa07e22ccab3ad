"""What is known about tensors before they run: ``get_static_value``, ``is_tensor``,
``is_symbolic_tensor``, ``inside_function``, and broadcasting of shapes
(``broadcast_static_shape``, ``broadcast_dynamic_shape``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidArgumentError
from ..ir.shapes import broadcast_shapes
from ..runtime.recorder import current_trace
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from ..runtime.tensor_shape import TensorShape
from . import array, creation, math
from .indexed_slices import IndexedSlices


def _symbolic(x):
    return hasattr(x, "aval") and not isinstance(x, (Tensor, Variable))


def get_static_value(tensor, partial: bool = False) -> Any:
    """The value of ``tensor`` as a NumPy array when it is known without running anything,
    else None: an eager tensor's value; inside a function, the value of anything computed
    from constants alone (tapeflow folds those while tracing, as TensorFlow's
    ``constant_value`` evaluates them) and None for what depends on the inputs. A value that
    is not a tensor comes back as it is.

    >>> tf.get_static_value(tf.constant([1, 2]))
    array([1, 2], dtype=int32)
    >>> @tf.function
    ... def f(x):
    ...     print(tf.get_static_value(x), tf.get_static_value(tf.shape(tf.zeros([2, 3]))))
    ...     return x
    >>> _ = f(tf.constant(1.0))
    None [2 3]
    """
    if _symbolic(tensor):
        return None
    if isinstance(tensor, Variable):
        return None                 # as TensorFlow: a variable's value may change
    if not isinstance(tensor, Tensor):
        return tensor
    return tensor.numpy()


def is_tensor(x) -> bool:
    """Whether ``x`` is a tensor (eager or symbolic) or a variable, as ``tf.is_tensor``.

    >>> tf.is_tensor(tf.constant(1.0)), tf.is_tensor(np.ones(2)), tf.is_tensor(tf.Variable(1.0))
    (True, False, True)
    """
    return isinstance(x, (Tensor, Variable, IndexedSlices)) or _symbolic(x)   # a composite too


def is_symbolic_tensor(tensor) -> bool:
    """Whether ``tensor`` is a symbolic tensor of a function being traced (no value yet).

    >>> tf.is_symbolic_tensor(tf.constant(1.0))
    False
    """
    return _symbolic(tensor)


def inside_function() -> bool:
    """Whether the code runs while a ``tf.function`` is being traced.

    >>> tf.inside_function()
    False
    """
    return current_trace() is not None


def _as_shape(s):
    if isinstance(s, TensorShape):
        return s
    return TensorShape(s)


def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The shape two ``TensorShape`` s broadcast to (None for unknown dims where it is not
    known); ValueError if they cannot broadcast.

    >>> tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3]))
    TensorShape([2, 3])
    """
    x, y = _as_shape(shape_x), _as_shape(shape_y)
    try:
        return TensorShape(broadcast_shapes(tuple(x), tuple(y)))
    except Exception:  # noqa: BLE001 - the shapes' own error becomes TensorFlow's
        raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible if "
                         f"for each dimension pair they are either equal or one of them is 1. "
                         f"Received: {x} and {y}.") from None


def broadcast_dynamic_shape(shape_x, shape_y) -> Tensor:
    """The shape (an int tensor) that tensors of shapes ``shape_x`` and ``shape_y`` (int
    tensors) broadcast to; InvalidArgumentError if they cannot.

    >>> tf.broadcast_dynamic_shape(tf.constant([2, 1]), tf.constant([3]))
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>
    """
    sx, sy = math._tensor(shape_x), math._tensor(shape_y)
    if not _symbolic(sx) and not _symbolic(sy):
        a, b = [int(v) for v in np.asarray(sx.numpy())], [int(v) for v in np.asarray(sy.numpy())]
        try:
            out = np.broadcast_shapes(tuple(a), tuple(b))
        except ValueError:
            raise InvalidArgumentError(f"Incompatible shapes: {a} vs. {b}") from None
        return convert_to_tensor(np.array(out, dtype=sx.dtype.np))
    # symbolic shapes: broadcast zeros of those shapes and read the shape back
    zx = creation.fill(sx, convert_to_tensor(0, dtype=sx.dtype))
    zy = creation.fill(sy, convert_to_tensor(0, dtype=sx.dtype))
    return array.shape(zx + zy, out_type=sx.dtype)


__all__ = ["get_static_value", "is_tensor", "is_symbolic_tensor", "inside_function",
           "broadcast_static_shape", "broadcast_dynamic_shape"]
