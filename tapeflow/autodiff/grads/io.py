"""PrintV2 has no outputs, so nothing flows back through it."""
from ...runtime.registry import not_differentiable

not_differentiable("PrintV2", "EagerPyFunc")  # EagerPyFunc: Python, no graph to differentiate
