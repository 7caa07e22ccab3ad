"""Gradient rules of LRN (TensorFlow's nn_grad ``_LRNGrad``: the LRNGrad op) and LRNGrad
(TensorFlow registers none: ``LookupError``, so LRN has no second derivative there either)."""
from ...runtime.dispatch import apply
from ...runtime.registry import gradient


@gradient("LRN", inputs=(0,), outputs=(0,))
def _lrn(op, g):
    return [apply("LRNGrad", [g, op.inputs[0], op.outputs[0]], dict(op.attrs))]


@gradient("LRNGrad")
def _lrn_grad(op, g):
    raise LookupError("gradient registry has no entry for: LRNGrad")
