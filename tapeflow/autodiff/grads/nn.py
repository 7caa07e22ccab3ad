"""Gradient rules of the neural-network ops (TF's nn_grad.py).

Relu, Relu6, Elu and Selu differentiate through a *Grad op that reads the output
only; those ops' own rules return zeros (not None) for the activation, as TF's do,
so a second derivative through ReLU is zeros rather than None.
"""
from ...ops import math as m
from ...ops import reduce as r
from ...ops.creation import zeros_like
from ...runtime.dispatch import apply
from ...runtime.registry import gradient


def _grad_op(name):
    """Rule for an activation whose gradient is ``<name>Grad(g, y)``, reading only the output y."""
    @gradient(name, outputs=(0,))
    def rule(op, g):
        return [apply(name + "Grad", [g, op.outputs[0]])]
    return rule


for _name in ("Relu", "Relu6", "Elu", "Selu"):
    _grad_op(_name)


def _piecewise_linear_grad_grad(name):
    """ReluGrad/Relu6Grad: linear in g with a mask from y; d/dy is zero (but defined)."""
    @gradient(name, inputs=(1,))
    def rule(op, g):
        y = op.inputs[1]
        return [apply(name, [g, y]), zeros_like(y)]
    return rule


_piecewise_linear_grad_grad("ReluGrad")
_piecewise_linear_grad_grad("Relu6Grad")


def _exp_grad_grad(name):
    """TF's _EluGradGrad / _SeluGradGrad: for y < 0 the gradient is linear in y with slope dy."""
    @gradient(name, inputs=(0, 1))
    def rule(op, g):
        dy, y = op.inputs
        return [apply(name, [g, y]),
                m.where(m.less(y, m.constant_like(0, y)), m.multiply(g, dy), zeros_like(y))]
    return rule


_exp_grad_grad("EluGrad")
_exp_grad_grad("SeluGrad")


@gradient("LeakyRelu", inputs=(0,))
def _leaky_relu(op, g):
    """Reads the input: the output's sign is the input's only when alpha > 0."""
    return [apply("LeakyReluGrad", [g, op.inputs[0]], {"alpha": op.attrs["alpha"]})]


@gradient("LeakyReluGrad", inputs=(1,))
def _leaky_relu_grad(op, g):
    x = op.inputs[1]
    return [apply("LeakyReluGrad", [g, x], {"alpha": op.attrs["alpha"]}), zeros_like(x)]


@gradient("Softplus", inputs=(0,))
def _softplus(op, g):
    return [m.multiply(g, m.sigmoid(op.inputs[0]))]


@gradient("Softsign", inputs=(0,))
def _softsign(op, g):
    """g / (1 + |x|)^2: TF's SoftsignGrad kernel, written with ops so it has a second order."""
    x = op.inputs[0]
    return [m.truediv(g, m.square(m.add(m.abs(x), m.constant_like(1, x))))]


@gradient("Softmax", outputs=(0,))
def _softmax(op, g):
    """TF's _SoftmaxGrad: (g - sum(g * y)) * y along the axis, from the output alone."""
    y = op.outputs[0]
    total = r.reduce_sum(m.multiply(g, y), axis=op.attrs["axis"], keepdims=True)
    return [m.multiply(m.subtract(g, total), y)]


@gradient("LogSoftmax", outputs=(0,))
def _log_softmax(op, g):
    """TF's _LogSoftmaxGrad: g - sum(g) * exp(y)."""
    softmax = m.exp(op.outputs[0])
    return [m.subtract(g, m.multiply(r.reduce_sum(g, axis=op.attrs["axis"], keepdims=True), softmax))]
