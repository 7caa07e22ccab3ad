"""Gradient rules of fractional pooling (TensorFlow's nn_grad.py): FractionalMaxPoolGrad
routes through each cell's first maximum, FractionalAvgPoolGrad spreads over each cell;
both read the sequences the forward drew. TensorFlow has no gradient for the gradient ops
(``LookupError``), nor for the sequences."""
from ...runtime.dispatch import apply
from ...runtime.registry import gradient


@gradient("FractionalMaxPool", inputs=(0,), outputs=(0, 1, 2))
def _fractional_max_pool(op, g, g_row=None, g_col=None):
    x = op.inputs[0]
    y, row, col = op.outputs
    return [apply("FractionalMaxPoolGrad", [x, y, g, row, col],
                  {"overlapping": op.attrs.get("overlapping", False)})]


@gradient("FractionalAvgPool", inputs=(0,), outputs=(1, 2))
def _fractional_avg_pool(op, g, g_row=None, g_col=None):
    _, row, col = op.outputs
    return [apply("FractionalAvgPoolGrad", [op.inputs[0], g, row, col],
                  {"overlapping": op.attrs.get("overlapping", False)})]


def _no_gradient(name):
    @gradient(name)
    def rule(op, g):
        raise LookupError(f"gradient registry has no entry for: {name}")
    return rule


_no_gradient("FractionalMaxPoolGrad")
_no_gradient("FractionalAvgPoolGrad")
