"""Op definitions by family; importing this package registers every OpDef."""
from . import array, control, custom, io, linalg, lists, loops, math, nn, reduce  # noqa: F401
from . import conv  # noqa: F401  (the convolution and pooling family)
