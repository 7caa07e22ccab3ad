"""Row independence: does row b of a target depend on row b of a source only?

When it does, the full Jacobian d target / d source is block diagonal over the leading
(batch) axis: it is the batch Jacobian scattered onto the diagonal, and nothing else
needs computing. The analysis walks ops in forward order and keeps, per tensor, whether
it is a function of the source *by rows* (leading axis = the source's batch axis, row b
a function of source row b and of values not depending on the source). Values not
reached from the source depend on nothing (they are shared by every row). An op that
mixes rows (a reduction over axis 0, a matmul with the rows on the contracted side, a
reshape moving the batch axis, ...) or that has no rule (``OpDef.keeps_rows``) ends the
proof: False.

Ops are given as ``(op, attrs, input ids, output ids, input avals, output avals)``,
which both tape entries and graph nodes provide.
"""
from ..ir.opdef import OPS


def entry_ops(entries):
    """Tape entries (forward order) as analysis ops."""
    return [(e.op, e.attrs, e.input_ids, e.output_ids, e.in_avals, e.out_avals) for e in entries]


def rows_independent(ops, source_id, target_id, batch):
    """True if the target provably maps source row b to target row b (and only it)."""
    if batch == 1:
        return True
    rows = {source_id}
    for op, attrs, ins, outs, in_avals, out_avals in ops:
        flags = [i in rows for i in ins]
        if not any(flags):
            continue
        if not _keeps_rows(op, attrs, flags, in_avals, out_avals, batch):
            if target_id in outs or _reaches(ops, outs, target_id):
                return False
            continue  # mixes rows, but the target does not use it
        rows.update(outs)
    return target_id in rows or target_id not in _depends(ops, source_id)


def _reaches(ops, outs, target_id):
    live = set(outs)
    for op, attrs, ins, o, *_ in ops:
        if live.intersection(ins):
            live.update(o)
    return target_id in live


def _depends(ops, source_id):
    dep = {source_id}
    for op, attrs, ins, outs, *_ in ops:
        if dep.intersection(ins):
            dep.update(outs)
    return dep


def _keeps_rows(op, attrs, flags, in_avals, out_avals, batch):
    """Does every output stay a function of the source by rows? The op's own rule decides
    (``OpDef.keeps_rows``); an op without one ends the proof."""
    if any(len(a.shape) == 0 or a.shape[0] != batch for a in out_avals):
        return False
    opdef = OPS.get(op)
    if opdef is None or opdef.keeps_rows is None:
        return False
    return opdef.keeps_rows(attrs, flags, in_avals, out_avals)


__all__ = ["entry_ops", "rows_independent"]
