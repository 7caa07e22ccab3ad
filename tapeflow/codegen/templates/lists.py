"""TensorListSetItem (runtime/kernels/lists.py): a copy of the list with one element written;
TensorListGetItem: one element, copied out."""
from ...ir.shapes import num_elements
from ..emitter import shape_lit
from .registry import stmt_op


@stmt_op("TensorListSetItem")
def _set_item(em, node):
    """Out of [0, n) raises IndexError like the kernel. The list is copied (its input may be
    read again later); the element is written through a [n, m] view of the copy."""
    lst, index, item = node.inputs
    (y,) = node.outputs
    n, m = lst.aval.shape[0], num_elements(lst.aval.shape[1:])
    out = em.bind(y)
    em.line(f"{out} = {em.ref(lst)}.copy()")
    em.owned.add(out)
    k = em.fresh("k")
    em.line(f"{k} = {em.scalar_of(index)}")
    with em.block(f"if {k} < 0 or {k} >= {n}:"):
        em.line(f'raise IndexError("TensorListSetItem: an index is out of range [0, {n})")')
    flat = em.fresh("lv")
    em.line(f"{flat} = {out}.reshape({shape_lit((n, m))})")
    if item.aval.shape:
        iv = em.fresh("iv")
        em.line(f"{iv} = {em.ref(item)}.reshape({shape_lit((m,))})")
        em.line(f"{flat}[{k}, :] = {iv}")
    else:
        em.line(f"{flat}[{k}, 0] = {em.ref(item)}")


@stmt_op("TensorListGetItem")
def _get_item(em, node):
    """Out of [0, n) raises IndexError like the kernel (the interpreter then raises its text)."""
    lst, index = node.inputs
    (y,) = node.outputs
    n, m = lst.aval.shape[0], num_elements(lst.aval.shape[1:])
    k = em.fresh("k")
    em.line(f"{k} = {em.scalar_of(index)}")
    with em.block(f"if {k} < 0 or {k} >= {n}:"):
        em.line(f'raise IndexError("TensorListGetItem: an index is out of range [0, {n})")')
    flat = em.fresh("lv")
    em.line(f"{flat} = {em.ref(lst)}.reshape({shape_lit((n, m))})")
    if y.aval.shape:
        em.define(y, f"{flat}[{k}, :].copy().reshape({shape_lit(y.aval.shape)})")
    else:
        em.define(y, f"{flat}[{k}, 0]")
