"""Tracing Python functions into IR graphs: ``tapeflow.function``, ``TensorSpec``."""
from . import control_grads, dynamic_jacobian, jacobian  # noqa: F401  (register the If/While
#                                                          gradients, the tape's jacobians)
from .function import Function, RetracingWarning, TensorSpec, function
from .symbolic_tensor import SymbolicTensor, TracingError

__all__ = ["Function", "RetracingWarning", "TensorSpec", "function", "SymbolicTensor", "TracingError"]
