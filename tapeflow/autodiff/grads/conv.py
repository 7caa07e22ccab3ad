"""Gradient rules of the convolution and pooling ops (TensorFlow's nn_grad.py).

A convolution's gradients are its two backprop ops, and each backprop op's gradients are
the other backprop op and the convolution itself, so every order is a convolution. The
backprop ops get the tensor whose shape they rebuild as their ``like`` input and an empty
size attribute (ir/defs/conv.py):
always an input the rule reads anyway (TensorFlow's rules read ``shape(op.inputs[i])``).
MaxPoolGrad's gradient is MaxPoolGradGrad and back; AvgPoolGrad's is AvgPool. Zeros, not
None, for the saved pooling input and output, as TensorFlow's ``_MaxPoolGradGrad`` gives.
"""
from ...ops.creation import zeros_like
from ...runtime.dispatch import apply
from ...runtime.registry import gradient

_WINDOW = ("strides", "padding", "explicit_paddings", "dilations", "ksize")


def _window(op):
    return {k: v for k, v in op.attrs.items() if k in _WINDOW}




def _conv_family(fwd, bin_, bfil):
    def backprop_input(w, dy, like, attrs):
        return apply(bin_, [w, dy, like], dict(attrs, input_sizes=()))

    def backprop_filter(x, dy, like, attrs):
        return apply(bfil, [x, dy, like], dict(attrs, filter_sizes=()))

    @gradient(fwd, inputs=(0, 1))
    def _fwd(op, g):
        x, w = op.inputs
        a = _window(op)
        return [backprop_input(w, g, x, a), backprop_filter(x, g, w, a)]

    @gradient(bin_, inputs=(0, 1))
    def _bin(op, g):
        """d/dfilter: BackpropFilter(g, dy); d/dy: the forward convolution of g."""
        w, dy = op.inputs[:2]
        a = _window(op)
        return [backprop_filter(g, dy, w, a), apply(fwd, [g, w], a)] + \
            [None] * (len(op.inputs) - 2)

    @gradient(bfil, inputs=(0, 1))
    def _bfil(op, g):
        """d/dinput: BackpropInput(g, dy); d/dy: the forward convolution by g."""
        x, dy = op.inputs[:2]
        a = _window(op)
        return [backprop_input(g, dy, x, a), apply(fwd, [x, g], a)] + \
            [None] * (len(op.inputs) - 2)


_conv_family("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
_conv_family("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2")
_conv_family("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
             "DepthwiseConv2dNativeBackpropFilter")


def _pool_family(sfx):
    mp, mpg, mpgg = f"MaxPool{sfx}", f"MaxPool{sfx}Grad", f"MaxPool{sfx}GradGrad"
    ap, apg = f"AvgPool{sfx}", f"AvgPool{sfx}Grad"

    @gradient(mp, inputs=(0,), outputs=(0,))
    def _max_pool(op, g):
        return [apply(mpg, [op.inputs[0], op.outputs[0], g], _window(op))]

    @gradient(mpg, inputs=(0, 1))
    def _max_pool_grad(op, g):
        x, y = op.inputs[:2]
        return [zeros_like(x), zeros_like(y), apply(mpgg, [x, y, g], _window(op))]

    @gradient(mpgg, inputs=(0, 1))
    def _max_pool_grad_grad(op, g):
        x, y = op.inputs[:2]
        return [zeros_like(x), zeros_like(y), apply(mpg, [x, y, g], _window(op))]

    @gradient(ap, inputs=(0,))
    def _avg_pool(op, g):
        x = op.inputs[0]
        return [apply(apg, [g, x], dict(_window(op), orig_input_shape=()))]

    @gradient(apg)
    def _avg_pool_grad(op, g):
        return [apply(ap, [g], _window(op))] + [None] * (len(op.inputs) - 1)


_pool_family("")
_pool_family("3D")


@gradient("MaxPoolWithArgmax", inputs=(0,), outputs=(0,))
def _max_pool_with_argmax(op, g, g_argmax=None):
    """TensorFlow's rule scatters into the argmax positions (MaxPoolGradWithArgmax); the
    first maximum of each window is where MaxPoolGrad routes too, so it is that op here."""
    a = {k: op.attrs[k] for k in ("ksize", "strides", "padding")}
    a["explicit_paddings"] = ()
    return [apply("MaxPoolGrad", [op.inputs[0], op.outputs[0], g], a)]


