"""Tracing Python functions into IR graphs: ``tapeflow.function``, ``TensorSpec``."""
from ..runtime import tensor as _tensor
from . import context as _context

_tensor.trace_current = _context.current  # the runtime asks "am I tracing?" through this hook

from .function import Function, RetracingWarning, TensorSpec, function  # noqa: E402
from .symbolic import SymbolicTensor, TracingError  # noqa: E402
from . import control_grads, jacobian  # noqa: E402,F401  (register the If/While gradients, the tape's jacobians)

__all__ = ["Function", "RetracingWarning", "TensorSpec", "function", "SymbolicTensor", "TracingError"]
