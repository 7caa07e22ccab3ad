"""Gradient-check cases of TensorListSetItem and TensorListGetItem, the write and the read
at a tensor index of a TensorArray in a function.

The op is linear in the list and the item, so each case multiplies by an input to give the
second-order check a non-zero Hessian; indices are constants and (tensor) int32 scalars.
"""
import numpy as np

import tapeflow as tf
from tapeflow.ops.tensor_array import tensor_list_get_item, tensor_list_set_item

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
