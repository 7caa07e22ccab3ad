"""Op definitions by family; importing this package registers every OpDef."""
from . import array, const, control, custom, io, linalg, lists, loops, math, nn, reduce, special  # noqa: F401
