"""Bounds a decoded graph must stay within, so a hostile graph file cannot make decoding hang or allocate.

Every number the codec reads is checked against these before it is used to size
anything. They are generous for real programs; change them here if one is not.
``saved_model.limits`` adds the bounds of the files around the graphs.
"""
MAX_GRAPH_NESTING = 16            # graphs inside graphs (custom gradients of custom gradients)
MAX_NODES = 1_000_000             # nodes over all graphs of one file
MAX_RANK = 32
MAX_DIM = 1 << 40
MAX_TENSOR_BYTES = 1 << 30        # any one statically shaped value, variable or constant
MAX_NAME = 1_000                  # characters in a string attribute, a name or a path
MAX_GRAPHS = 10_000               # graphs (the outer one and every nested one) in one file
# What decoding charges a Budget for the objects it builds (measured on CPython 3.11, rounded up)
NODE_BYTES = 1_000                # a Node with its attrs dict and output Values
VALUE_BYTES = 300                 # a Value with its AVal
DEFAULT_BUDGET_BYTES = 1 << 30    # memory one decode (or one saved-program load) may take
