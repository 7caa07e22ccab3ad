"""Gradient rules by family, written with tapeflow ops; importing fills ``registry.GRADS``.

Rules mirror TensorFlow's own gradient functions op for op, so that which
tensors a gradient touches (and hence None versus zeros at second order) is
the same as in TensorFlow. Broadcasting is undone by the tape, not by rules.
"""
from . import array, control, custom, linalg, math, nn, reduce  # noqa: F401
