"""The stateless random ops have no gradient, as in TensorFlow (``ops.NotDifferentiable``):
their seed, key and counter are integers; a distribution's parameters enter through
ordinary ops."""
from ...runtime.kernels.random import OPS
from ...runtime.registry import not_differentiable

not_differentiable(*OPS)
