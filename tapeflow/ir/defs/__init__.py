"""Op definitions by family; importing this package registers every OpDef."""
from . import (array, const, control, custom, io, linalg, indexing, lists, loops, math, nn,  # noqa: F401
               reduce, scan, sort, special)
from . import conv  # noqa: F401  (the convolution and pooling family)
