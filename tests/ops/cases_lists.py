"""Gradient-check cases of the TensorArray ops in functions: TensorListSetItem and
TensorListGetItem (the write and the read at a tensor index), and the padded list of
elements of different shapes (CropOrPad, RaggedList*).

The op is linear in the list and the item, so each case multiplies by an input to give the
second-order check a non-zero Hessian; indices are constants and (tensor) int32 scalars.
"""
import numpy as np

import tapeflow as tf
from tapeflow.ops.tensor_array import tensor_list_get_item, tensor_list_set_item
from tapeflow.runtime.dispatch import apply

from ops.cases import Case

R = np.random.default_rng(12)


def u(*shape):
    return R.uniform(-2, 2, shape)


CASES = {
    "TensorListSetItem": [
        Case(lambda lst, x: tensor_list_set_item(lst * lst, 1, x * lst[0]), [u(3, 2), u(2)]),
        Case(lambda lst, x: tensor_list_set_item(lst, tf.constant(0), x * x) * lst,
             [u(2, 2, 3), u(2, 3)], note="tensor index, rank-2 elements"),
        Case(lambda lst, x: tensor_list_set_item(lst * x, 2, x * x), [u(3), u()],
             note="scalar elements"),
    ],
    "TensorListGetItem": [
        Case(lambda lst: tensor_list_get_item(lst * lst, tf.constant(1)) * lst[0], [u(3, 2)]),
        Case(lambda lst: tensor_list_get_item(lst * lst, tf.constant(2)) * lst, [u(3)],
             note="scalar elements"),
    ],
}
NOT_DIFFERENTIABLE = []


# -- the padded list of a TensorArray whose elements differ in shape (ops/ragged_list.py) ----
# values [n, *P] with element k in the leading corner of row k; shapes rows [1, *shape] once
# written, zeros while not. Each op is linear in the values; multiplying by an input gives
# the second-order check a Hessian.

def _i32(rows):
    return tf.constant(np.array(rows, np.int32))


UNKNOWN = {"element_shape": (), "known_rank": False}
S2 = [[1, 2], [1, 3], [0, 0]]                     # elements [2], [3], uninitialized
S_SAME = [[1, 2], [0, 0], [1, 2]]                 # elements [2], uninitialized, [2]
S_CAT = [[1, 2, 2], [1, 1, 2], [1, 3, 2]]         # elements [2, 2], [1, 2], [3, 2]


def _crop_or_pad(x, sizes, shape, c=0):
    return apply("CropOrPad", [x, _i32(sizes)], {"shape": shape, "constant_values": c})


CASES["CropOrPad"] = [
    Case(lambda x, w: _crop_or_pad(x * x, [2, 3], (2, 3)) * w, [u(3, 2), u(2, 3)],
         note="cut one axis, pad the other"),
    Case(lambda x: tf.ensure_shape(_crop_or_pad(x * x, [4], (None,), 1), [4]) * x[0], [u(2)],
         note="pad with ones, size known at run time"),
]
CASES["RaggedListGetItem"] = [
    Case(lambda v: apply("RaggedListGetItem", [v * v, _i32(S2), tf.constant(1)], UNKNOWN)
         * v[1, :3], [u(3, 3)]),
    Case(lambda v: apply("RaggedListGetItem", [v * v, _i32(S_SAME), tf.constant(1)],
                         {"element_shape": (None,), "known_rank": True}) * v[0, :2] + v[0, :2],
         [u(3, 3)], note="uninitialized: zeros of the written elements' shape"),
]
CASES["RaggedListGather"] = [
    Case(lambda v: apply("RaggedListGather", [v * v, _i32(S_SAME), _i32([2, 0, 2])], UNKNOWN)
         * v[0, :2], [u(3, 3)], note="a repeated index sums into its element"),
]
CASES["RaggedListStack"] = [
    Case(lambda v: apply("RaggedListStack", [v * v, _i32(S_SAME)], UNKNOWN) * v[2, :2],
         [u(3, 3)], note="an uninitialized row reads as zeros"),
]
CASES["RaggedListConcat"] = [
    Case(lambda v: tf.ensure_shape(apply("RaggedListConcat", [v * v, _i32(S_CAT)], UNKNOWN),
                                   [6, 2]) * v[0, 0], [u(3, 3, 2)]),
]
CASES["RaggedListConcatGrad"] = [
    Case(lambda g: apply("RaggedListConcatGrad", [g * g, _i32(S_CAT), _i32([3, 3, 2])],
                         {**UNKNOWN, "shape": (3, 3, 2)}) * g[0], [u(6, 2)]),
]
