"""Gradient-check cases of the shape ops (see ops/cases.py).

Shape ops are linear, so each case squares (or multiplies by the input) to give
the second-order check a non-zero Hessian.
"""
import numpy as np

import tapeflow as tf
from tapeflow.ops import array as A
from tapeflow.ops import reduce as R_

from ops.cases import Case

R = np.random.default_rng(3)


def u(*shape):
    return R.uniform(-2, 2, shape)


def unknown(fn, *ranks):
    """``fn`` traced once with every dim unknown (None), run on the interpreter: its shape ops
    take their sizes as tensors at run time (the shape-tensor ops: ir/defs/array.py)."""
    return tf.function(fn, jit_compile=False,
                       input_signature=[tf.TensorSpec([None] * r, tf.float64) for r in ranks])


CASES = {
    "Reshape": [Case(lambda x: tf.reshape(x * x, [3, 2]), [u(2, 3)]),
                Case(lambda x: tf.reshape(x * x, [-1]), [u(2, 1, 2)])],
    "BroadcastTo": [Case(lambda x: tf.broadcast_to(x * x, [2, 2, 3]), [u(2, 1)])],
    "Transpose": [Case(lambda x: tf.transpose(x * x, [1, 0]), [u(2, 3)]),
                  Case(lambda x: tf.transpose(x * x, [2, 0, 1]), [u(2, 3, 2)])],
    "ExpandDims": [Case(lambda x: tf.expand_dims(x * x, -1), [u(2, 3)])],
    "Squeeze": [Case(lambda x: tf.squeeze(x * x), [u(2, 1, 3, 1)]),
                Case(lambda x: tf.squeeze(x * x, axis=[-1]), [u(1, 3, 1)])],
    "ConcatV2": [Case(lambda x, y: tf.concat([x * y, y, x], axis=1), [u(2, 3), u(2, 3)]),
                 Case(lambda x, y: tf.concat([x * x, y * x[:1]], axis=0), [u(2, 3), u(1, 3)])],
    "Pack": [Case(lambda x, y: tf.stack([x * y, y], axis=-1), [u(2, 3), u(2, 3)])],
    "Unpack": [Case(lambda x: tf.unstack(x * x, axis=1)[2] * x[:, 0], [u(2, 3)]),
               Case(lambda x: tf.stack(tf.unstack(x * x)), [u(3, 2)])],
    "Split": [Case(lambda x: tf.split(x * x, 2, axis=1)[0] * x[:, 3:], [u(2, 4)]),
              Case(lambda x: tf.concat(tf.split(x * x, [1, -1], axis=0)[::-1], 0), [u(3, 2)])],
    "Tile": [Case(lambda x: tf.tile(x * x, [2, 1, 3]), [u(2, 3, 1)])],
    "Pad": [Case(lambda x: tf.pad(x * x, [[1, 0], [2, 1]], constant_values=3.0), [u(2, 3)])],
    "GatherV2": [Case(lambda x: tf.gather(x * x, [2, 0, 2]), [u(3, 2)]),
                 Case(lambda x: tf.gather(x * x, [[1, 1], [0, 2]], axis=1), [u(2, 3, 2)]),
                 Case(lambda x: tf.gather(x * x, 1, axis=-1), [u(2, 3)], note="scalar index")],
    "StridedSlice": [Case(lambda x: x[1:, ::-2] * x[0, 1], [u(3, 4)]),
                     Case(lambda x: (x * x)[..., None, -1], [u(2, 3)]),
                     Case(lambda x: (x * x)[tf.constant(1), :, tf.newaxis], [u(2, 3)])],
    "StridedSliceGrad": [Case(lambda g: A.strided_slice_grad(g * g, ((1, None, 2), 0), (4, 3)), [u(2)])],
    # shapes known only at run time
    "DynamicReshape": [Case(unknown(lambda x: tf.reshape(x * x, [tf.shape(x)[1], tf.shape(x)[0]]),
                                    2), [u(2, 3)])],
    "DynamicBroadcastTo": [Case(unknown(lambda x: tf.broadcast_to(x * x, [2, tf.shape(x)[0], 3]),
                                        2), [u(2, 1)])],
    "SumToShape": [Case(unknown(lambda g, y: R_.sum_to_shape(g * g, tf.shape(y)) * y, 2, 2),
                        [u(3, 2), u(1, 2)])],
    "SplitV": [Case(unknown(lambda x: tf.split(x * x, [tf.shape(x)[0] - 1, 1])[0] * x[1:], 2),
                    [u(3, 2)])],
    "DynamicStridedSliceGrad": [
        Case(unknown(lambda g, y: A.strided_slice_grad(g * g, ((1, None, 2), 0), tf.shape(y)) * y,
                     1, 2), [u(2), u(4, 3)])],
    "EnsureShape": [Case(lambda x: tf.ensure_shape(x * x, [None, 3]) * x, [u(2, 3)]),
                    Case(unknown(lambda x: tf.ensure_shape(x * x, [2, None]) * x, 2), [u(2, 3)],
                         note="a size made known")],
}
NOT_DIFFERENTIABLE = ["Shape", "Size", "OneHot", "Const"]
