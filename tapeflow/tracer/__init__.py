"""Tracing Python functions into IR graphs: ``tapeflow.function``, ``TensorSpec``."""
from .function import Function, RetracingWarning, TensorSpec, function
from .symbolic import SymbolicTensor, TracingError

__all__ = ["Function", "RetracingWarning", "TensorSpec", "function", "SymbolicTensor", "TracingError"]
