"""Op definitions by family; importing this package registers every OpDef."""
from . import array, control, custom, debug, io, linalg, indexing, lists, loops, math, nn, random, reduce, scan, sort, special  # noqa: F401
