"""NumPy kernels by family; importing this package fills ``registry.KERNELS``."""
<<<<<<< HEAD
from . import array, control, custom, debug, io, linalg, lists, loops, math, nn, reduce  # noqa: F401
=======
from . import array, control, custom, io, linalg, lists, loops, math, nn, reduce, special  # noqa: F401
>>>>>>> main
