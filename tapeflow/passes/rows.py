"""Row independence: does row b of a target depend on row b of a source only?

When it does, the full Jacobian d target / d source is block diagonal over the leading
(batch) axis: it is the batch Jacobian scattered onto the diagonal, and nothing else
needs computing. The analysis walks ops in forward order and keeps, per tensor, whether
it is a function of the source *by rows* (leading axis = the source's batch axis, row b
a function of source row b and of values not depending on the source). Values not
reached from the source depend on nothing (they are shared by every row). An op that
mixes rows (a reduction over axis 0, a matmul with the rows on the contracted side, a
reshape moving the batch axis, ...) or that has no rule here ends the proof: False.

Ops are given as ``(op, attrs, input ids, output ids, input avals, output avals)``,
which both tape entries and graph nodes provide.
"""
from ..ir.defs.array import expand_spec
from ..ir.defs.reduce import reduction_axes
from ..ir.opdef import OPS

_FULL = (None, None, None)


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
    if any(len(a.shape) == 0 or a.shape[0] != batch for a in out_avals):
        return False
    rank = len(in_avals[0].shape)
    kind = OPS[op].kind if op in OPS else "other"
    if kind == "elementwise":
        return all(len(a.shape) == len(out_avals[0].shape) for a, f in zip(in_avals, flags) if f)
    if kind == "reduction":
        return 0 not in reduction_axes(attrs.get("axis"), rank)
    if op == "MatMul":
        out_rank = len(out_avals[0].shape)
        if out_rank == 2:
            return flags == [True, False] and not attrs.get("transpose_a")
        return all(len(a.shape) == out_rank for a, f in zip(in_avals, flags) if f)
    if op in ("Reshape", "Identity"):
        return in_avals[0].shape[0] == batch
    if op == "Transpose":
        return attrs["perm"][0] == 0
    if op == "ExpandDims":
        return attrs["axis"] % (rank + 1) != 0
    if op == "Squeeze":
        return attrs["axis"] is not None and all(a % rank != 0 for a in attrs["axis"])
    if op in ("Softmax", "LogSoftmax"):
        return attrs.get("axis", -1) % rank != 0
    if op in ("ConcatV2", "Unpack", "Split"):
        return attrs["axis"] % rank != 0
    if op == "Pack":
        return attrs["axis"] % (rank + 1) != 0
    if op == "StridedSlice":
        spec = expand_spec(tuple(attrs["spec"]), rank)
        return tuple(spec[0]) == _FULL if isinstance(spec[0], tuple) else False
    if op == "Pad":
        return tuple(attrs["paddings"][0]) == (0, 0)
    if op == "Tile":
        return attrs["multiples"][0] == 1
    if op == "BroadcastTo":
        return len(attrs["shape"]) == rank
    if op == "GatherV2":
        return flags == [True, False] and attrs["axis"] % rank != 0
    return False


__all__ = ["entry_ops", "rows_independent"]
