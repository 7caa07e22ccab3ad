"""Bounds a saved program must stay within, so a hostile file cannot make loading hang or allocate.

Every number read from a file is checked against these before it is used to size
anything. They are generous for real programs; change them here if one is not.
"""
MAX_JSON_BYTES = 256 << 20        # a manifest or graph file
MAX_JSON_DEPTH = 256              # bracket nesting in any JSON file
MAX_GRAPH_NESTING = 16            # graphs inside graphs (custom gradients of custom gradients)
MAX_NODES = 1_000_000             # nodes over all graphs of one file
MAX_RANK = 32
MAX_DIM = 1 << 40
MAX_TENSOR_BYTES = 1 << 30        # any one statically shaped value, variable or constant
MAX_NPY_HEADER = 10_000           # numpy's own default limit on .npy header size
MAX_ENTRIES = 100_000             # functions, variables, constants, concrete functions, objects
MAX_NAME = 1_000                  # characters in a name or path
