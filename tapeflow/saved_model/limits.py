"""Bounds a saved program must stay within, so a hostile file cannot make loading hang or allocate.

Every number read from a file is checked against these before it is used to size
anything. They are generous for real programs; change them here if one is not.
The bounds of the graphs themselves (nodes, nesting, ranks, sizes) are the codec's,
in ``ir/limits.py``; they apply to saved programs as they are.
"""
from ..ir.limits import (MAX_DIM, MAX_GRAPH_NESTING, MAX_NAME, MAX_NODES, MAX_RANK,  # noqa: F401
                         MAX_TENSOR_BYTES)

MAX_JSON_BYTES = 64 << 20         # a manifest or graph file
MAX_JSON_DEPTH = 256              # bracket nesting in any JSON file
MAX_JSON_VALUES = 2_000_000       # values (objects, arrays, numbers, strings) in one JSON file
JSON_VALUE_BYTES = 64             # what one parsed JSON value costs (an empty dict is 64 bytes)
MAX_NPY_HEADER = 10_000           # numpy's own default limit on .npy header size
MAX_ENTRIES = 100_000             # functions, variables, constants, concrete functions, objects
MAX_PADDING = MAX_ENTRIES         # list slots the object tree may fill with None, over a whole load
