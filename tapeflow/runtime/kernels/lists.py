"""NumPy kernels of TensorListSetItem and TensorListGetItem (the dense list of a TensorArray
in a function)."""
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


@kernel("TensorListGetItem")
def _get_item(lst, index):
    """Element ``index`` of ``lst``; out of [0, n) raises TensorFlow's text."""
    lst = np.asarray(lst)
    n, i = lst.shape[0], int(index)
    if not 0 <= i < n:
        raise IndexError(f"Trying to access element {i} in a list with {n} elements.")
    return lst[i].copy()
