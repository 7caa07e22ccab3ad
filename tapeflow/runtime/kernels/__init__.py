"""NumPy kernels by family; importing this package fills ``registry.KERNELS``."""
from . import array, control, custom, linalg, loops, math, nn, reduce  # noqa: F401
