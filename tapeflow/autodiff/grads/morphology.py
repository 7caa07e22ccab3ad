"""Gradient rules of Dilation2D (TensorFlow's nn_grad.py ``_Dilation2DGrad``): its two
backprop ops. TensorFlow registers no gradient for those, so differentiating them is its
``LookupError`` here too."""
from ...runtime.dispatch import apply
from ...runtime.registry import gradient


@gradient("Dilation2D", inputs=(0, 1))
def _dilation2d(op, g):
    x, f = op.inputs
    return [apply("Dilation2DBackpropInput", [x, f, g], dict(op.attrs)),
            apply("Dilation2DBackpropFilter", [x, f, g], dict(op.attrs))]


def _no_gradient(name):
    @gradient(name)
    def rule(op, g):
        raise LookupError(f"gradient registry has no entry for: {name}")
    return rule


_no_gradient("Dilation2DBackpropInput")
_no_gradient("Dilation2DBackpropFilter")
