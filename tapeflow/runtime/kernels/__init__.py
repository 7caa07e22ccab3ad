"""NumPy kernels by family; importing this package fills ``registry.KERNELS``."""
from . import array, control, custom, debug, io, linalg, lists, loops, math, nn, random, reduce, special  # noqa: F401
