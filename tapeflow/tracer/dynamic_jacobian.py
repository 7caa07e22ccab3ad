"""Jacobians of tensors whose sizes only the run time knows: one While over the seeds.

Inside a function traced with ``None`` dims the number of seeds (``tf.size(target)``, or a
batch jacobian's columns) is an int32 tensor, so the vectorized program of ``jacobian.py``,
which stacks a static number of one-hot seeds, cannot be built. TensorFlow's loop
(``experimental_use_pfor=False``) needs no count while tracing: iteration ``i`` seeds the
reverse sweep with row ``i`` of an identity of run-time size (``ops.dims.eye``)
and writes the gradient into row ``i`` of the result (TensorListSetItem, as TensorFlow's
loop writes a TensorArray), so each row is exactly the gradient of its own seed (TensorFlow's per-row values, inf and NaN included). The loop
is one While node whose body is the tape's reverse sweep traced once; the result's static
shape is ``target.shape + source.shape`` with ``None`` where unknown, as TensorFlow's.

A batch jacobian whose rows have a known width (``x: [None, 3]``) needs only ``width`` seeds,
a number known while tracing: up to ``UNROLL`` of them are unrolled, each a reverse sweep
batched over the rows, joined by one concat. Cost: one reverse sweep per seed (TensorFlow's
loop), where the vectorized program of known sizes runs one batched sweep; each write in
the While copies the result so far (TensorListSetItem's kernel and template copy their
list), O(n * size of the result) in all.
"""
import numpy as np

from ..autodiff import tape as _tape
from ..autodiff.backprop import Plan
from ..ir import dtypes as D
from ..ops import array, dims, math
from ..ops.creation import zeros, zeros_like
from ..runtime.dispatch import apply
from ..runtime.tensor import wrap
from .control import loop


# Up to this many seeds, when their number is known while tracing (a batch jacobian's columns
# over a batch of unknown size), the seeds are unrolled: one reverse sweep each in the graph,
# batched over the rows, joined by one concat, with no While and no copy per seed.
UNROLL = 16


def _seeded(plan, source_ids, source_targets, seed_of, n, accs):
    """Per source, the [n, source size] gradients of seeds 0..n-1, row i the flat gradient of
    seed i: concatenated when ``n`` is a small int (unrolled), else written row by row into
    ``acc`` in a While (TensorListSetItem). Returns them and, per source, whether a gradient
    reached it."""
    reached = [False] * len(source_ids)
    if isinstance(n, int) and n <= UNROLL:
        rows = [[] for _ in source_ids]
        for i in range(n):
            grads = plan.run(source_ids, [seed_of(i)], source_targets)
            for k, sid in enumerate(source_ids):
                g = grads[sid]
                reached[k] = reached[k] or g is not None
                rows[k].append(None if g is None else array.reshape(g, [1, -1]))
        out = []
        for acc, hit, parts in zip(accs, reached, rows, strict=True):
            if not hit or not parts:
                out.append(acc)
                continue
            some = next(p for p in parts if p is not None)
            parts = [zeros_like(some) if p is None else p for p in parts]
            out.append(array.concat(parts, 0))
        return out, reached

    def body(i, *accs):
        grads = plan.run(source_ids, [seed_of(i)], source_targets)
        out = []
        for k, (sid, acc) in enumerate(zip(source_ids, accs, strict=True)):
            g = grads[sid]
            reached[k] = g is not None
            out.append(acc if g is None else
                       apply("TensorListSetItem", [acc, i, array.reshape(g, [-1])]))
        return [math.add(i, 1)] + out

    counter = wrap(np.zeros((), np.int32))
    outs = loop(lambda i, *accs: math.less(i, n), body, [counter] + list(accs))
    return list(outs[1:]), reached


class _OneHot:
    """Row ``i`` of the identity of run-time size ``n``, made once before the loop so that
    inside the body it is a gather at the counter: its shape is ``[n]``, the same at every
    iteration, so a program specialised to the input shapes knows every size in the body
    (O(n^2) booleans, once; the jacobian itself holds n times the source's size)."""

    def __init__(self, n):
        self.eye = dims.eye(n, D.bool_)

    def seed(self, i, dtype):
        return math.cast(array.gather(self.eye, i), dtype)


def jacobian(rec, target, flat_sources, source_ids, zeros_if_unconnected):
    """Per source: target.shape + source.shape (None where unknown), or None if unconnected."""
    tshape = dims.shape_of(target)
    shapes = [dims.shape_of(s) for s in flat_sources]
    if not target.dtype.is_floating:    # as the vectorized jacobian: zeros, or None
        return [zeros(dims.pack(list(_sizes(tshape)) + list(_sizes(s))), src.dtype)
                if zeros_if_unconnected else None for s, src in zip(shapes, flat_sources)]
    n = dims.num_elements(tshape)
    plan = Plan(rec, [target._id])
    source_targets = {s._id: _tape._aval(s) for s in flat_sources if s._id == target._id}

    hot = _OneHot(n)

    def seed_of(i):
        return array.reshape(hot.seed(i, target.dtype), tshape)

    accs = [zeros(dims.pack([n, dims.num_elements(s)]), src.dtype)
            for s, src in zip(shapes, flat_sources, strict=True)]
    accs, reached = _seeded(plan, source_ids, source_targets, seed_of, n, accs)
    out = []
    for acc, hit, s in zip(accs, reached, shapes, strict=True):
        if not hit and not zeros_if_unconnected:
            out.append(None)
            continue
        out.append(array.reshape(acc, dims.pack(list(_sizes(tshape)) + list(_sizes(s)))))
    return out


def batch_jacobian(rec, target, source):
    """target.shape + source.shape[1:]; zeros for an unconnected source (as TensorFlow)."""
    tshape, sshape = dims.shape_of(target), dims.shape_of(source)
    batch = dims.dim(tshape, 0)
    shape = dims.pack(list(_sizes(tshape)) + list(_sizes(sshape))[1:])
    if not target.dtype.is_floating:
        return zeros(shape, target.dtype)
    width = dims.num_elements(dims.pack(list(_sizes(tshape))[1:]))
    s_width = dims.num_elements(dims.pack(list(_sizes(sshape))[1:]))
    plan = Plan(rec, [target._id])
    source_targets = {source._id: _tape._aval(source)} if source._id == target._id else {}

    hot = _OneHot(width)

    def seed_of(j):   # column j of every row of the batch
        column = array.reshape(hot.seed(j, target.dtype), dims.pack([1, width]))
        return array.reshape(array.broadcast_to(column, dims.pack([batch, width])), tshape)

    acc = zeros(dims.pack([width, dims.multiply(batch, s_width)]), source.dtype)
    (acc,), _ = _seeded(plan, [source._id], source_targets, seed_of, width, [acc])
    acc = array.transpose(array.reshape(acc, dims.pack([width, batch, s_width])), [1, 0, 2])
    return array.reshape(acc, shape)


def _sizes(shape):
    """Each dim of ``shape``: an int, or an int32 scalar tensor known at run time."""
    return [dims.dim(shape, i) for i in range(len(shape))]


_tape.VECTORIZED.loop_jacobian = jacobian
_tape.VECTORIZED.loop_batch_jacobian = batch_jacobian
