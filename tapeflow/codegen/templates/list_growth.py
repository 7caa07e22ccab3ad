"""A list a loop grows keeps spare rows, so a write past its end is amortised O(1).

A dynamic-size TensorArray written in a loop of run-time trip count grows at each write past
its end: ``ConcatV2(list, zero rows up to the index)`` (ops/tensor_array.py, ``_grown``), then
``TensorListSetItem``. Copied at each iteration, the loop would be quadratic in its trip
count. A loop's own list variable (``lists.own_loop_lists``: only the loop holds its array)
whose size only the run knows is instead the front of a capacity buffer, as TensorFlow's
TensorList and ``std::vector`` grow: the concatenation writes the new rows after the list's
end and the list becomes the longer front view; only when the buffer is full is it
reallocated at twice the size. The buffer is a variable of the enclosing function
(``keep_capacity``, before the loop), found by the list variable's name; since the loop
templates also set the list variable otherwise (a checkpoint restored, the first state), the
code checks the list is the buffer's front (same address, not longer) and otherwise starts
a buffer from the list itself.
"""
from ..shape_free import run_time

# Readers that keep nothing of the list's memory once they have run (a copy, or its sizes).
_DONE_WITH_IT = ("Shape", "Size", "GatherV2", "TensorListGetItem")


def keep_capacity(em, graph, names, own):
    """Before a loop whose body is ``graph``: a capacity buffer for each own list variable
    (``own``: positions in ``names``) whose size only the run knows."""
    top = em.outermost()
    for k in own:
        if run_time(graph.inputs[k].aval):
            cap = em.fresh("cap")
            em.line(f"{cap} = {names[k]}")
            top.capacity[names[k]] = (cap, em.lines)


def append_in_place(em, node):
    """``ConcatV2(list, rows)`` along axis 0 written into the list's capacity buffer, if the
    list has one (a loop's own list whose size only the run knows) and this is its last use;
    returns whether it did."""
    lst, more = node.inputs[0], node.inputs[1:]
    (y,) = node.outputs
    cap, lines = em.outermost().capacity.get(em.expr.get(lst.id), (None, None))
    if (cap is None or len(more) != 1 or node.attrs["axis"] % len(y.aval.shape) != 0
            or lines is not em.lines        # another function (a shared graph's): not in scope
            or not _last_use(em, lst, node)):
        return False
    (more,) = more
    x, extra = em.ref(lst), em.fresh("need")
    em.line(f"{extra} = {x}.shape[0] + {em.ref(more)}.shape[0]")
    with em.block(f"if {cap}.shape[0] < {x}.shape[0] or {cap}.ctypes.data != {x}.ctypes.data:"):
        em.line(f"{cap} = {x}")         # not the buffer's front: the list itself starts one
    with em.block(f"if {extra} > {cap}.shape[0]:"):
        grown = em.fresh("grown")
        rows = ", ".join([f"max({extra}, 2 * {cap}.shape[0])"] + [str(d) for d in y.aval.shape[1:]])
        em.line(f"{grown} = np.empty(({rows},), dtype={cap}.dtype)")
        em.line(f"rt.hugepages({grown})")
        em.line(f"{grown}[:{x}.shape[0]] = {x}")
        em.line(f"{cap} = {grown}")
    em.line(f"{cap}[{x}.shape[0]:{extra}] = {em.ref(more)}")
    em.define(y, f"{cap}[:{extra}]")
    em.private.add(y.id)
    return True


def _last_use(em, lst, node):
    """Whether ``lst`` is a private list no other code reads after ``node``: not an output,
    every other reader already run and keeping none of its memory."""
    if lst.id not in em.private or lst.id in em.output_ids:
        return False
    others = [n for n in em.uses.get(lst.id, ()) if n is not node]
    return all(n.op in _DONE_WITH_IT and n.outputs[0].id in em.expr for n in others)
