"""TensorListSetItem (runtime/kernels/lists.py): a copy of the list with one element written,
or the list itself written where nothing else holds it (a loop's list variable); TensorListGetItem:
one element, copied out."""
from ...ir.shapes import num_elements
from ..emitter import shape_lit
from .list_growth import keep_capacity
from .registry import stmt_op


def _element(em, op, lst, index, n, m):
    """(index name, [n, m] view of the list expression ``lst``): out of [0, n) raises
    IndexError like the kernel (the interpreter then raises the op's own text)."""
    k = em.fresh("k")
    em.line(f"{k} = {em.scalar_of(index)}")
    with em.block(f"if {k} < 0 or {k} >= {n}:"):
        em.line(f'raise IndexError("{op}: an index is out of range [0, {n})")')
    flat = em.fresh("lv")
    em.line(f"{flat} = {lst}.reshape({shape_lit((n, m))})")
    return k, flat


@stmt_op("TensorListSetItem")
def _set_item(em, node):
    """Out of [0, n) raises IndexError like the kernel. The list is copied (its input may be
    read again later), unless only this graph holds its array and this write is its last
    use (a loop's list variable: ``loop_lists``): a copy per iteration would make the loop
    quadratic. The element is written through a [n, m] view."""
    lst, index, item = node.inputs
    (y,) = node.outputs
    n, m = lst.aval.shape[0], num_elements(lst.aval.shape[1:])
    if _last_use(em, lst, node):
        out = em.bind(y, em.ref(lst))
    else:
        out = em.bind(y)
        em.line(f"{out} = {em.ref(lst)}.copy()")
        em.owned.add(out)
    em.private.add(y.id)
    k, flat = _element(em, "TensorListSetItem", out, index, n, m)
    if item.aval.shape:
        iv = em.fresh("iv")
        em.line(f"{iv} = {em.ref(item)}.reshape({shape_lit((m,))})")
        em.line(f"{flat}[{k}, :] = {iv}")
    else:
        em.line(f"{flat}[{k}, 0] = {em.ref(item)}")


_COPYING = ("GatherV2", "TensorListGetItem")     # readers whose result is a new array


def _last_use(em, lst, node):
    """Whether ``node`` may write ``lst``'s array: only this graph holds it, it is no output,
    and every other reader has run already and copied what it read (a gradient reads the
    row, then zeroes it)."""
    if lst.id not in em.private or lst.id in em.output_ids:
        return False
    others = [n for n in em.uses.get(lst.id, ()) if n is not node]
    return all(n.op in _COPYING and n.outputs[0].id in em.expr for n in others)


def loop_lists(graph, count):
    """Positions ``k < count`` of a loop body's outputs fed back as its ``k``-th input whose
    array the loop may own: made by a TensorListSetItem (a copy, or the input list written in
    place), output once and read by nothing else in the body, so no other value aliases it.
    The loop copies their initial values once and passes them as ``private``."""
    read = {v.id for node in graph.nodes for v in node.inputs}
    outs = [v.id for v in graph.outputs]
    return [k for k, v in enumerate(graph.outputs[:count])
            if v.node is not None and v.node.op == "TensorListSetItem"
            and v.id not in read and outs.count(v.id) == 1]


def own_loop_lists(em, graph, names, but=()):
    """``loop_lists`` of a loop body ``graph`` whose loop variables are the names ``names``:
    each such variable's array is copied once here (fresh memory, huge pages asked for), so
    the loop owns it; returns the positions, the body's ``private`` inputs among ``names``.
    ``but``: positions the caller copies itself."""
    own = loop_lists(graph, len(names))
    for k in own:
        if k not in but:
            em.line(f"{names[k]} = rt.fresh_copy({names[k]})")
    keep_capacity(em, graph, names, own)    # a list the loop grows: spare rows (list_growth.py)
    return own


@stmt_op("TensorListGetItem")
def _get_item(em, node):
    """Out of [0, n) raises IndexError like the kernel (the interpreter then raises its text)."""
    lst, index = node.inputs
    (y,) = node.outputs
    n, m = lst.aval.shape[0], num_elements(lst.aval.shape[1:])
    k, flat = _element(em, "TensorListGetItem", em.ref(lst), index, n, m)
    if y.aval.shape:
        em.define(y, f"{flat}[{k}, :].copy().reshape({shape_lit(y.aval.shape)})")
    else:
        em.define(y, f"{flat}[{k}, 0]")
