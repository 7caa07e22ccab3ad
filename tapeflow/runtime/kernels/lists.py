"""NumPy kernel of TensorListSetItem (the dense list of a TensorArray in a function)."""
import numpy as np

from ..registry import kernel


@kernel("TensorListSetItem")
def _set_item(lst, index, item):
    """A copy of ``lst`` with element ``index`` replaced; out of [0, n) raises, as TensorFlow."""
    lst = np.asarray(lst)
    n, i = lst.shape[0], int(index)
    if not 0 <= i < n:
        raise IndexError(f"Trying to modify element {i} in a list with {n} elements.")
    out = lst.copy()
    out[i] = item
    return out
