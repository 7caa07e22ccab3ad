"""Keras 3's arithmetic on ``IndexedSlices`` gradients, for the optimizers' update steps.

Keras 3 (TensorFlow backend) passes an ``IndexedSlices`` gradient (from ``tf.gather``, an
``Embedding``) to ``update_step`` as it is, and its ops keep it sparse by fixed rules
(``keras/src/backend/tensorflow/sparse.py``): ``square``/``sqrt``/``negative`` apply to the
values; ``multiply`` by a scalar or a dense tensor keeps the slices (the dense one gathered at
the indices); ``divide`` of slices by a dense tensor gathers the divisor; ``add``/``subtract``
of slices and a dense tensor densify the slices; ``maximum`` densifies. Its optimizer's
``assign``/``assign_add``/``assign_sub`` of slices are scatter updates of the touched rows
only (applied index by index, so a repeated index is updated twice).

So with repeated indices a Keras step is not the dense step of the summed gradient: Adam's
second moment, for one, gets the sum of the squared slices, not the square of their sum.
These functions reproduce those rules: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Nadam,
Ftrl, Lamb, Adafactor and LossScaleOptimizer (``sparse_updates = True`` on the class) give
Keras' values; the others take the dense gradient (Adamax and Lion, whose Keras steps on
slices equal their dense ones, included). SGD and RMSprop (both without momentum), Adagrad,
Adadelta and Adafactor update only the named rows of the variable, as Keras does. Not
reproduced: a dense divisor with a zero or NaN row outside the indices (Keras then adds
those rows, 0/0); such a step raises no error here and leaves them unchanged.
"""
from ..ops import array as A
from ..ops import indexing
from ..ops import math as M
from ..ops.indexed_slices import IndexedSlices, dense


def is_slices(x):
    return isinstance(x, IndexedSlices)


def _with_values(slices, values):
    return IndexedSlices(values, slices.indices, slices.dense_shape)


def _rank(x):
    shape = getattr(x, "shape", None)
    return 0 if shape is None else len(shape)


def _unary(fn):
    def op(x):
        return _with_values(x, fn(x.values)) if is_slices(x) else fn(x)
    op.__name__ = fn.__name__
    return op


square, sqrt, negative = _unary(M.square), _unary(M.sqrt), _unary(M.negative)


def _union(fn):
    """Keras' ``elementwise_binary_union``: slices with the very same indices stay slices;
    otherwise the slices are densified."""
    def op(x1, x2):
        if is_slices(x1) and is_slices(x2) and x1.indices is x2.indices:
            return _with_values(x1, fn(x1.values, x2.values))
        return fn(dense(x1), dense(x2))
    op.__name__ = fn.__name__
    return op


add, subtract = _union(M.add), _union(M.subtract)


def maximum(x1, x2):
    return M.maximum(dense(x1), dense(x2))


def multiply(x1, x2):
    """Keras' ``elementwise_binary_intersection``: the slices' rows only."""
    if is_slices(x1) and is_slices(x2):
        if x1.indices is x2.indices:
            return _with_values(x1, M.multiply(x1.values, x2.values))
        return M.multiply(dense(x1), dense(x2))
    if is_slices(x1):
        other = x2 if _rank(x2) == 0 else A.gather(x2, x1.indices)
        return _with_values(x1, M.multiply(x1.values, other))
    if is_slices(x2):
        other = x1 if _rank(x1) == 0 else A.gather(x1, x2.indices)
        return _with_values(x2, M.multiply(other, x2.values))
    return M.multiply(x1, x2)


def divide(x1, x2):
    """Keras' ``elementwise_division``: slices over a scalar or a dense divisor (gathered)
    stay slices; a sparse divisor densifies both."""
    if is_slices(x2):
        return M.truediv(dense(x1), dense(x2))
    if is_slices(x1):
        other = x2 if _rank(x2) == 0 else A.gather(x2, x1.indices)
        return _with_values(x1, M.truediv(x1.values, other))
    return M.truediv(x1, x2)


def _scatter(variable, slices, op):
    indices = A.expand_dims(slices.indices, 1)
    return op(variable.value(), indices, M.cast(slices.values, variable.dtype))


def assign(variable, value):
    """Keras' ``optimizer.assign``: the named rows replaced (a scatter) for slices."""
    if is_slices(value):
        value = _scatter(variable, value, indexing.tensor_scatter_nd_update)
    variable.assign(value)


def assign_add(variable, value):
    if is_slices(value):
        variable.assign(_scatter(variable, value, indexing.tensor_scatter_nd_add))
    else:
        variable.assign_add(value)


def assign_sub(variable, value):
    if is_slices(value):
        variable.assign(_scatter(variable, value, indexing.tensor_scatter_nd_sub))
    else:
        variable.assign_sub(value)


__all__ = ["is_slices", "square", "sqrt", "negative", "add", "subtract", "maximum", "multiply",
           "divide", "assign", "assign_add", "assign_sub"]
