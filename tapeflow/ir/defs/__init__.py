"""Op definitions by family; importing this package registers every OpDef."""
from . import array, control, custom, io, linalg, lists, loops, math, nn, reduce, special  # noqa: F401
