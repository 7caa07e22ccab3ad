"""NumPy kernels by family; importing this package fills ``registry.KERNELS``."""
from . import array, control, custom, io, linalg, lists, loops, math, nn, reduce, special  # noqa: F401
