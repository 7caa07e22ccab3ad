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
