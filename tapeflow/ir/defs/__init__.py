"""Op definitions by family; importing this package registers every OpDef."""
from . import array, control, custom, debug, io, linalg, lists, loops, math, nn, random, reduce, special  # noqa: F401
