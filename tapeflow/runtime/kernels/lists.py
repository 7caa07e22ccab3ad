"""NumPy kernels of the TensorArray ops in functions: the dense list (TensorListSetItem,
TensorListGetItem) and the padded one of elements of different shapes."""
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


# -- the padded list of a TensorArray whose elements differ in shape (ir/defs/lists.py) ----
# TensorFlow's TensorList rules: an uninitialized element reads as zeros of the element shape
# merged with the initialized elements' shapes, and an op fails, with TensorFlow's text, when
# those shapes do not merge or leave a size unknown.

def debug_string(dims):
    """TensorFlow's PartialTensorShape::DebugString: ``<unknown>``, ``[?,2]``."""
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def merge(partial, shape):
    """PartialTensorShape::MergeWith of a partial shape (None: unknown rank) and a shape."""
    shape = tuple(int(d) for d in shape)
    if partial is None:
        return shape
    if len(partial) != len(shape):
        raise ValueError(f"PartialTensorShape: Incompatible ranks during merge: {len(partial)} "
                         f"vs. {len(shape)}")
    if any(a is not None and a != b for a, b in zip(partial, shape)):
        raise ValueError(f"PartialTensorShape: Incompatible shapes during merge: "
                         f"{debug_string(partial)} vs. {debug_string(shape)}")
    return shape


def defined(dims):
    return dims is not None and None not in dims


def _partial(element_shape, known_rank):
    return tuple(element_shape) if known_rank else None


def _crop(dims):
    return tuple(slice(0, int(d)) for d in dims)


def item_shape(shapes, i, element_shape, known_rank):
    """(shape, written) of element ``i`` as TensorListGetItem reads it."""
    n = shapes.shape[0]
    if not 0 <= i < n:
        raise IndexError(f"Trying to access element {i} in a list with {n} elements.")
    if shapes[i, 0]:
        return tuple(int(d) for d in shapes[i, 1:]), True
    partial = _partial(element_shape, known_rank)
    if not defined(partial):
        for row in shapes:
            if row[0]:
                partial = merge(partial, row[1:])
    if not defined(partial):
        raise ValueError(f"Trying to read an uninitialized tensor but element_shape is not fully "
                         f"defined: {debug_string(partial)} and no list element is set.")
    return partial, False


def gather_shape(shapes, indices, element_shape, known_rank, stack):
    """The one shape of the elements at ``indices`` (TensorListGather, or TensorListStack)."""
    n = shapes.shape[0]
    partial = _partial(element_shape, known_rank)
    if stack and n == 0 and not defined(partial):
        raise ValueError(f"Tried to stack elements of an empty list with non-fully-defined "
                         f"element_shape: {debug_string(partial)}")
    if not stack and not len(indices) and not defined(partial):
        raise ValueError(f"Tried to gather 0-elements from a list with non-fully-defined "
                         f"shape: {debug_string(partial)}")
    for i in indices:
        if not 0 <= i < n:
            raise IndexError(f"Trying to gather element {i} in a list with {n} elements.")
    for i in indices:
        if shapes[i, 0]:
            partial = merge(partial, shapes[i, 1:])
    if not defined(partial):
        what = ("Tried to stack list which only contains uninitialized tensors and has a "
                if stack else "Tried to gather uninitialized tensors from a list with ")
        raise ValueError(f"{what}non-fully-defined element_shape: {debug_string(partial)}")
    return partial


def concat_layout(shapes, element_shape, known_rank):
    """(rows per element, the elements' shape after the first axis): TensorListConcatV2 with
    the element shape TensorArray.concat passes ([None, *element_shape[1:]]), no leading_dims."""
    rest = None
    if known_rank:
        if not element_shape:
            raise ValueError("Concat requires elements to be at least vectors, found scalars "
                             "instead.")
        rest = tuple(element_shape[1:])
    n = shapes.shape[0]
    if n == 0 and not defined(rest):
        raise ValueError(f"All except the first dimension must be fully defined when concating "
                         f"an empty tensor list. element_shape: {debug_string(rest)}")
    first, same = None, True
    for i, row in enumerate(shapes):
        if not row[0]:
            continue
        if len(row) == 1:
            raise ValueError(f"Concat saw a scalar shape at index {i} but requires at least "
                             f"vectors.")
        rest = merge(rest, row[2:])
        if same:
            if first is None:
                first = int(row[1])
            elif first != int(row[1]):
                first, same = None, False
    if not defined(rest):
        raise ValueError(f"Trying to concat list with only uninitialized tensors but "
                         f"element_shape_except_first_dim is not fully defined: "
                         f"{debug_string(rest)}")
    rows = []
    for i, row in enumerate(shapes):
        if not row[0] and first is None:
            raise ValueError(f"List contains uninitialized tensor at index {i} but leading_dims "
                             f"has only 0 elements.")
        rows.append(int(row[1]) if row[0] else first)
    return rows, rest


@kernel("CropOrPad")
def _crop_or_pad(x, sizes, shape, constant_values=0):
    x = np.asarray(x)
    out = np.full(tuple(int(d) for d in sizes), constant_values, x.dtype)
    common = tuple(slice(0, min(a, b)) for a, b in zip(x.shape, out.shape))
    out[common] = x[common]
    return out


@kernel("RaggedListGetItem")
def _ragged_get_item(values, shapes, index, element_shape, known_rank):
    shape, written = item_shape(np.asarray(shapes), int(index), element_shape, known_rank)
    if not written:
        return np.zeros(shape, np.asarray(values).dtype)
    return np.asarray(values)[(int(index),) + _crop(shape)].copy()


def _gathered(values, shapes, indices, shape):
    out = np.zeros((len(indices),) + shape, values.dtype)
    for j, i in enumerate(indices):
        if shapes[i, 0]:
            out[j] = values[(i,) + _crop(shape)]
    return out


@kernel("RaggedListGather")
def _ragged_gather(values, shapes, indices, element_shape, known_rank):
    values, shapes = np.asarray(values), np.asarray(shapes)
    indices = [int(i) for i in np.asarray(indices).reshape(-1)]
    shape = gather_shape(shapes, indices, element_shape, known_rank, stack=False)
    return _gathered(values, shapes, indices, shape)


@kernel("RaggedListStack")
def _ragged_stack(values, shapes, element_shape, known_rank):
    values, shapes = np.asarray(values), np.asarray(shapes)
    indices = list(range(shapes.shape[0]))
    shape = gather_shape(shapes, indices, element_shape, known_rank, stack=True)
    return _gathered(values, shapes, indices, shape)


@kernel("RaggedListConcat")
def _ragged_concat(values, shapes, element_shape, known_rank):
    values, shapes = np.asarray(values), np.asarray(shapes)
    rows, rest = concat_layout(shapes, element_shape, known_rank)
    parts = [values[(i, slice(0, k)) + _crop(rest)] if shapes[i, 0]
             else np.zeros((k,) + rest, values.dtype) for i, k in enumerate(rows)]
    return np.concatenate(parts) if parts else np.zeros((0,) + rest, values.dtype)


@kernel("RaggedListConcatGrad")
def _ragged_concat_grad(g, shapes, sizes, element_shape, known_rank, shape):
    g, shapes = np.asarray(g), np.asarray(shapes)
    rows, rest = concat_layout(shapes, element_shape, known_rank)
    out = np.zeros(tuple(int(d) for d in sizes), g.dtype)
    start = 0
    for i, k in enumerate(rows):
        if shapes[i, 0]:
            out[(i, slice(0, k)) + _crop(rest)] = g[start:start + k]
        start += k
    return out
