"""Gradient-check cases of the convolution and pooling ops (see ops/cases.py).

Convolutions are bilinear, so finite differences are exact up to rounding; each case
multiplies by the input again (``* x``-style terms) so the second order is not zero. The
pooling inputs are distinct and well separated (a permutation of a grid of values), so no
window's maximum is within the finite-difference step of a tie.
"""
import numpy as np

import tapeflow as tf
from tapeflow.runtime.dispatch import apply

from ops.cases import Case

R = np.random.default_rng(27)


def u(*shape):
    return R.uniform(-1.0, 1.0, shape)


def spread(*shape):
    """Distinct values 0.1 apart, shuffled: max pooling never meets a near tie."""
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.1 - n * 0.05).reshape(shape)


def raw(name, *inputs, **attrs):
    return apply(name, list(inputs), attrs)


def _conv_attrs(rank, s=1, pad="SAME", d=1, explicit=None):
    n = rank - 2
    a = {"strides": (1,) + (s,) * n + (1,), "padding": pad, "dilations": (1,) + (d,) * n + (1,)}
    if rank == 4:
        a["explicit_paddings"] = tuple(explicit or ())
    return a


EX = (0, 0, 1, 2, 0, 1, 0, 0)
C2 = _conv_attrs(4, s=2, pad="SAME")
CD = _conv_attrs(4, d=2, pad="VALID")
CE = _conv_attrs(4, pad="EXPLICIT", explicit=EX)
C3 = _conv_attrs(5, s=2, pad="SAME")


def conv_sq(op, attrs):
    """conv(x, w) * conv(x, w): second order sees both inputs."""
    def fn(x, w):
        y = raw(op, x, w, **attrs)
        return y * y
    fn.__name__ = op
    return fn


def bin_case(op, attrs, shape):
    def fn(w, dy):
        y = raw(op, w, dy, input_sizes=shape, **attrs)
        return y * y
    return fn


def bfil_case(op, attrs, shape):
    def fn(x, dy):
        y = raw(op, x, dy, filter_sizes=shape, **attrs)
        return y * y
    return fn


P2 = {"ksize": (1, 3, 2, 1), "strides": (1, 2, 1, 1), "padding": "SAME", "explicit_paddings": ()}
P2V = {"ksize": (1, 2, 2, 1), "strides": (1, 2, 2, 1), "padding": "VALID", "explicit_paddings": ()}
P2E = {"ksize": (1, 3, 2, 1), "strides": (1, 2, 1, 1), "padding": "EXPLICIT",
       "explicit_paddings": (0, 0, 1, 2, 1, 0, 0, 0)}
P3 = {"ksize": (1, 2, 2, 2, 1), "strides": (1, 2, 1, 2, 1), "padding": "SAME"}
X2 = spread(1, 4, 3, 2)
X3 = spread(1, 2, 3, 4, 1)


def max_pool_sq(op, attrs):
    def fn(x):
        y = raw(op, x, **attrs)
        return y * y
    return fn


def max_pool_grad(op, fwd, attrs, x):
    """MaxPoolGrad(x, maxpool(x), g) * g: x enters only through the argmax."""
    def fn(xx, g):
        y = raw(fwd, xx, **attrs)
        return raw(op, xx, y, g, **attrs) * raw(op, xx, y, g, **attrs)
    return fn


def max_pool_grad_grad(op, fwd, attrs):
    def fn(xx, g):
        y = raw(fwd, xx, **attrs)
        return raw(op, xx, y, g, **attrs) * raw(op, xx, y, g, **attrs)
    return fn


def avg_pool_grad(op, attrs, shape):
    def fn(g):
        y = raw(op, g, orig_input_shape=shape, **attrs)
        return y * y
    return fn


def _pool_out(x, op, attrs):
    return raw(op, tf.constant(x), **attrs).shape


CASES = {
    "Conv2D": [Case(conv_sq("Conv2D", C2), [u(1, 5, 4, 2), u(3, 2, 2, 2)], note="stride 2 SAME"),
               Case(conv_sq("Conv2D", CD), [u(1, 6, 5, 1), u(2, 2, 1, 2)], note="dilation 2 VALID"),
               Case(conv_sq("Conv2D", CE), [u(1, 4, 4, 4), u(2, 3, 2, 2)],
                    note="explicit, 2 groups")],
    "Conv2DBackpropInput": [
        Case(bin_case("Conv2DBackpropInput", C2, (1, 5, 4, 2)), [u(3, 2, 2, 2), u(1, 3, 2, 2)],
             note="stride 2 SAME"),
        Case(bin_case("Conv2DBackpropInput", CE, (1, 4, 4, 2)), [u(2, 3, 2, 3), u(1, 6, 3, 3)],
             note="explicit")],
    "Conv2DBackpropFilter": [
        Case(bfil_case("Conv2DBackpropFilter", C2, (3, 2, 2, 2)), [u(1, 5, 4, 2), u(1, 3, 2, 2)],
             note="stride 2 SAME"),
        Case(bfil_case("Conv2DBackpropFilter", CD, (2, 2, 1, 2)), [u(1, 6, 5, 1), u(1, 4, 3, 2)],
             note="dilation 2")],
    "Conv3D": [Case(conv_sq("Conv3D", C3), [u(1, 3, 3, 2, 2), u(2, 2, 2, 2, 1)])],
    "Conv3DBackpropInputV2": [
        Case(bin_case("Conv3DBackpropInputV2", C3, (1, 3, 3, 2, 2)),
             [u(2, 2, 2, 2, 1), u(1, 2, 2, 1, 1)])],
    "Conv3DBackpropFilterV2": [
        Case(bfil_case("Conv3DBackpropFilterV2", C3, (2, 2, 2, 2, 1)),
             [u(1, 3, 3, 2, 2), u(1, 2, 2, 1, 1)])],
    "DepthwiseConv2dNative": [
        Case(conv_sq("DepthwiseConv2dNative", C2), [u(1, 5, 4, 2), u(3, 2, 2, 2)]),
        Case(conv_sq("DepthwiseConv2dNative", CD), [u(1, 6, 5, 2), u(2, 2, 2, 1)],
             note="dilation 2")],
    "DepthwiseConv2dNativeBackpropInput": [
        Case(bin_case("DepthwiseConv2dNativeBackpropInput", C2, (1, 5, 4, 2)),
             [u(3, 2, 2, 2), u(1, 3, 2, 4)])],
    "DepthwiseConv2dNativeBackpropFilter": [
        Case(bfil_case("DepthwiseConv2dNativeBackpropFilter", C2, (3, 2, 2, 2)),
             [u(1, 5, 4, 2), u(1, 3, 2, 4)])],
    "MaxPool": [Case(max_pool_sq("MaxPool", P2), [X2], note="SAME"),
                Case(max_pool_sq("MaxPool", P2E), [X2], note="explicit")],
    "MaxPoolGrad": [Case(max_pool_grad("MaxPoolGrad", "MaxPool", P2, X2),
                         [X2, u(*_pool_out(X2, "MaxPool", P2))])],
    "MaxPoolGradGrad": [Case(max_pool_grad_grad("MaxPoolGradGrad", "MaxPool", P2V),
                             [X2, u(*X2.shape)])],
    "MaxPool3D": [Case(max_pool_sq("MaxPool3D", P3), [X3])],
    "MaxPool3DGrad": [Case(max_pool_grad("MaxPool3DGrad", "MaxPool3D", P3, X3),
                           [X3, u(*_pool_out(X3, "MaxPool3D", P3))])],
    "MaxPool3DGradGrad": [Case(max_pool_grad_grad("MaxPool3DGradGrad", "MaxPool3D", P3),
                               [X3, u(*X3.shape)])],
    "AvgPool": [Case(max_pool_sq("AvgPool", P2), [u(1, 4, 3, 2)])],
    "AvgPoolGrad": [Case(avg_pool_grad("AvgPoolGrad", P2, (1, 4, 3, 2)),
                         [u(*_pool_out(X2, "AvgPool", P2))])],
    "AvgPool3D": [Case(max_pool_sq("AvgPool3D", P3), [u(1, 2, 3, 4, 1)])],
    "AvgPool3DGrad": [Case(avg_pool_grad("AvgPool3DGrad", P3, (1, 2, 3, 4, 1)),
                           [u(*_pool_out(X3, "AvgPool3D", P3))])],
    "MaxPoolWithArgmax": [Case(lambda x: tf.nn.max_pool_with_argmax(x, [3, 2], 2, "SAME")[0] ** 2,
                               [X2])],
}
NOT_DIFFERENTIABLE = []
