"""The reduction tree, fixed by the number of chunks alone.

Node (0, i) is chunk i's value; node (l, j) is the left-to-right sum of nodes
(l-1, j*k) ... (l-1, j*k + k-1) that exist (k = ``split_every``); the root is the one node of
the first level above 0 with a single node. Because each node's bits depend only on its
leaves, any machine may compute any node: a worker adds up the subtrees whose chunks it
holds all (``complete_nodes``), and whoever finishes the tree (``root``) computes the missing
nodes from what it was given — the result is the same bits whichever worker held what.
"""
import numpy as np


def add(parts):
    """Left-to-right sum of tuples of arrays (a copy for one part)."""
    total = None
    for part in parts:
        if total is None:
            total = tuple(np.array(a, copy=True) for a in part)
        else:
            if len(part) != len(total):
                raise ValueError("tapeflow.distribute: per-replica values of different "
                                 "structure cannot be reduced")
            total = tuple(t + a for t, a in zip(total, part, strict=True))
    return total


def levels(n, k):
    """Number of nodes at each level, leaves first, root last (at least two levels)."""
    sizes = [n]
    while len(sizes) == 1 or sizes[-1] > 1:
        sizes.append(-(-sizes[-1] // k))
    return sizes


def span(level, j, n, k):
    return j * k ** level, min((j + 1) * k ** level, n)


def complete_nodes(leaves, n, k):
    """``leaves``: {chunk index: value} this worker computed -> {(level, j): value} for the
    largest subtrees made only of those chunks (each computed in the canonical order)."""
    have = {(0, i): v for i, v in leaves.items()}
    sizes = levels(n, k)
    for level in range(1, len(sizes)):
        for j in range(sizes[level]):
            kids = [(level - 1, c) for c in range(j * k, min((j + 1) * k, sizes[level - 1]))]
            if all(kid in have for kid in kids):
                have[(level, j)] = add([have[kid] for kid in kids])
                for kid in kids:
                    del have[kid]
    return have


def root(parts, n, k):
    """The root from ``parts`` ({(level, j): value}, covering every chunk once)."""
    sizes = levels(n, k)

    def node(level, j):
        if (level, j) in parts:
            return parts[(level, j)]
        if level == 0:
            raise ValueError(f"tapeflow.distribute: no value for chunk {j}")
        return add([node(level - 1, c) for c in range(j * k, min((j + 1) * k, sizes[level - 1]))])
    return node(len(sizes) - 1, 0)


def subtree_count(indices, n, k):
    """How many subtrees ``complete_nodes`` returns for the chunks ``indices`` (no values)."""
    return len(complete_nodes({i: () for i in indices}, n, k))
