"""Op definitions by family; importing this package registers every OpDef."""
from . import array, control, custom, linalg, loops, math, nn, reduce  # noqa: F401
