"""Gradients of the run-time checks, as TensorFlow's: CheckNumerics checks the gradient too
(``_CheckNumericsGrad``); Assert has no outputs, so nothing flows back through it."""
from ...ops.debug import check_numerics
from ...runtime.registry import gradient, not_differentiable


@gradient("CheckNumerics")
def _check_numerics(op, g):
    return [check_numerics(g, "Not a number (NaN) or infinity (Inf) values detected in "
                              f"gradient. {op.attrs['message']}")]


not_differentiable("Assert")


@gradient("GuaranteeConst")
def _guarantee_const(op, g):
    """TensorFlow registers none: differentiating through it is its LookupError."""
    raise LookupError("gradient registry has no entry for: GuaranteeConst")
