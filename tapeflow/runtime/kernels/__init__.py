"""NumPy kernels by family; importing this package fills ``registry.KERNELS``."""
from . import array, control, custom, io, linalg, indexing, lists, loops, math, nn, reduce, scan, sort, special  # noqa: F401
