"""Shape ops (runtime/kernels/array.py): views where NumPy gives views, explicit loops elsewhere.

Every array a program holds is C-contiguous, so Reshape/ExpandDims/Squeeze are free
``reshape`` views, and any op that would give a strided view (transpose, slice, unstack)
copies into a fresh array instead: the next op can always index or reshape it without
asking for its layout. Shapes are static, so slices and index maps are literal arithmetic.
"""
from ...ir.defs.array import expand_spec, split_sizes
from ...ir.shapes import num_elements
from ..emitter import Unsupported, index, lit, np_type, shape_lit
from ..slices import bounds
from ..shape_free import RunDim, nonzero, same_shape
from .list_growth import append_in_place
from .registry import stmt_op


@stmt_op("Reshape", "ExpandDims", "Squeeze")
def _reshape(em, node, **attrs):
    (x,), (y,) = node.inputs, node.outputs
    if not y.aval.shape:
        em.define(y, em.scalar_of(x))
    elif not x.aval.shape:
        em.define(y, f"np.full({shape_lit(y.aval.shape)}, {em.ref(x)}, dtype={np_type(y.aval.dtype)})")
    elif same_shape(x.aval.shape, y.aval.shape):     # else a view: no decision on sizes
        em.bind(y, em.ref(x))
    else:
        em.define(y, f"{em.ref(x)}.reshape({shape_lit(y.aval.shape)})")


def copy_loops(em, shape, dst, dst_idx, src):
    """``dst[dst_idx(i)] = src(i)`` for every index i of ``shape`` (callables build the text)."""
    with em.loops(shape) as idx:
        em.line(f"{dst}[{index(dst_idx(idx))}] = {src(idx)}")


@stmt_op("Transpose")
def _transpose(em, node, perm):
    (x,), (y,) = node.inputs, node.outputs
    if not x.aval.shape or list(perm) == sorted(perm):
        em.bind(y, em.ref(x))
        return
    out = em.alloc(y)

    def src(i):
        xi = [None] * len(perm)
        for k, p in enumerate(perm):
            xi[p] = i[k]
        return em.read(x, xi)
    copy_loops(em, y.aval.shape, out, lambda i: i, src)


@stmt_op("Tile")
def _tile(em, node, multiples):
    (x,), (y,) = node.inputs, node.outputs
    if not x.aval.shape:
        em.bind(y, em.ref(x))
        return
    out = em.alloc(y)
    dims = x.aval.shape
    copy_loops(em, y.aval.shape, out, lambda i: i,
               lambda i: em.read(x, [v if m == 1 else f"{v} % {d}"
                                     for v, m, d in zip(i, multiples, dims)]))


@stmt_op("Pad")
def _pad(em, node, paddings, constant_values=0):
    (x,), (y,) = node.inputs, node.outputs
    if not x.aval.shape:
        em.bind(y, em.ref(x))
        return
    out = em.alloc(y, fill=lit(constant_values, y.aval.dtype))
    copy_loops(em, x.aval.shape, out,
               lambda i: [v if b == 0 else f"{v} + {b}" for v, (b, _) in zip(i, paddings)],
               lambda i: em.read(x, i))


@stmt_op("ConcatV2")
def _concat(em, node, axis):
    """A fresh array, which a later TensorListSetItem may write in place (``private``); a loop's
    list growing along axis 0 is written into its spare rows instead (list_growth.py)."""
    if append_in_place(em, node):
        return
    (y,) = node.outputs
    rank = len(y.aval.shape)
    ax = axis % rank
    out = em.alloc(y)
    em.private.add(y.id)
    off = 0
    for x in node.inputs:
        def at(i, off=off):
            return i[:ax] + [f"{i[ax]} + {off}" if nonzero(off) else i[ax]] + i[ax + 1:]
        copy_loops(em, x.aval.shape, out, at, lambda i, x=x: em.read(x, i))
        off += x.aval.shape[ax]


@stmt_op("Pack")
def _pack(em, node, axis):
    (y,) = node.outputs
    rank = len(y.aval.shape)
    ax = axis % rank
    out = em.alloc(y)
    for k, x in enumerate(node.inputs):
        copy_loops(em, x.aval.shape, out, lambda i, k=k: i[:ax] + [str(k)] + i[ax:],
                   lambda i, x=x: em.read(x, i))


def _take(em, x, y, ax, start, keep_axis):
    """y = x[..., start (:start + len), ...] along ``ax`` as a fresh C-contiguous array."""
    def src(i):
        if not keep_axis:
            return em.read(x, i[:ax] + [str(start)] + i[ax:])
        return em.read(x, i[:ax] + [f"{i[ax]} + {start}" if start else i[ax]] + i[ax + 1:])
    if not y.aval.shape:
        em.define(y, src([]))
        return
    copy_loops(em, y.aval.shape, em.alloc(y), lambda i: i, src)


@stmt_op("Unpack")
def _unpack(em, node, num, axis):
    (x,) = node.inputs
    ax = axis % len(x.aval.shape)
    for k, y in enumerate(node.outputs):
        _take(em, x, y, ax, k, keep_axis=False)


@stmt_op("Split")
def _split(em, node, sizes, axis):
    (x,) = node.inputs
    ax = axis % len(x.aval.shape)
    off = 0
    for s, y in zip(split_sizes(x.aval.shape[ax], sizes, ax), node.outputs):
        _take(em, x, y, ax, off, keep_axis=True)
        off += s


@stmt_op("EnsureShape", sizes_from_data=True)
def _ensure_shape(em, node, shape):
    """The sizes were checked when its shapes were inferred (a size only the run knows
    against a known one: where the program relies on it), so the value passes as it is; a
    size it leaves to the run is its input's, read from the same array."""
    (x,), (y,) = node.inputs, node.outputs
    em.bind(y, em.ref(x))


@stmt_op("GatherV2")
def _gather(em, node, axis, batch_dims=0):
    """Indices are checked like the kernel: out of [0, n) raises IndexError."""
    params, indices = node.inputs
    (y,) = node.outputs
    if batch_dims:
        raise Unsupported("GatherV2 with batch_dims")
    shape = params.aval.shape
    ax = axis % len(shape)
    pre, n, post = num_elements(shape[:ax]), shape[ax], num_elements(shape[ax + 1:])
    m = num_elements(indices.aval.shape)
    pv = em.fresh("pv")
    em.line(f"{pv} = {em.ref(params)}.reshape({shape_lit((pre, n, post))})")
    iv = em.fresh("iv")
    if indices.aval.shape:
        em.line(f"{iv} = {em.ref(indices)}.reshape({shape_lit((m,))})")
    else:
        em.line(f"{iv} = np.full((1,), {em.ref(indices)}, dtype={np_type(indices.aval.dtype)})")
    with em.loops((m,)) as (j,):
        with em.block(f"if {iv}[{j}] < 0 or {iv}[{j}] >= {n}:"):
            em.line(f'raise IndexError("GatherV2: an index is out of range [0, {n})")')
    if not y.aval.shape:
        em.define(y, f"{pv}[0, {iv}[0], 0]")
        return
    out = em.alloc(y)
    ov = em.fresh("ov")
    em.line(f"{ov} = {out}.reshape({shape_lit((pre, m, post))})")
    copy_loops(em, (pre, m, post), ov, lambda i: i, lambda i: f"{pv}[{i[0]}, {iv}[{i[1]}], {i[2]}]")


def _slice_plan(in_shape, spec):
    """Per output dim the input dim and (start, step), and fixed indices of int-indexed dims.
    Along a size only the run knows they are expressions (codegen/slices.py)."""
    out_dims, fixed, dim = [], {}, 0
    for s in expand_spec(spec, len(in_shape)):
        if s is None:
            out_dims.append((None, 1, 0, 0))
            continue
        d = in_shape[dim]
        if isinstance(s, int):
            fixed[dim] = s % d
        elif isinstance(d, RunDim):
            start, length = bounds(d, s)
            out_dims.append((dim, length, start, 1 if s[2] is None else s[2]))
        else:
            start, stop, step = slice(*s).indices(d)
            out_dims.append((dim, len(range(start, stop, step)), start, step))
        dim += 1
    return out_dims, fixed


def _slice_index(in_rank, out_dims, fixed, idx):
    """Input index expressions for output loop indices ``idx``."""
    xi = [str(fixed.get(k, 0)) for k in range(in_rank)]
    for (dim, _, start, step), i in zip(out_dims, idx):
        if dim is not None:
            term = i if step == 1 else f"{i} * {step}"
            xi[dim] = f"{start} + {term}" if nonzero(start) else term
    return xi


@stmt_op("StridedSlice")
def _strided_slice(em, node, spec):
    (x,), (y,) = node.inputs, node.outputs
    out_dims, fixed = _slice_plan(x.aval.shape, spec)
    rank = len(x.aval.shape)
    if not y.aval.shape:
        em.define(y, em.read(x, _slice_index(rank, [], fixed, [])))
        return
    out = em.alloc(y)
    copy_loops(em, y.aval.shape, out, lambda i: i,
               lambda i: em.read(x, _slice_index(rank, out_dims, fixed, i)))


@stmt_op("StridedSliceGrad")
def _strided_slice_grad(em, node, spec, shape):
    """Zeros of the input's shape with ``g`` written where the slice came from (no overlaps)."""
    (g,), (y,) = node.inputs, node.outputs
    if not y.aval.shape:
        em.bind(y, em.ref(g))
        return
    out = em.alloc(y, fill=lit(0, y.aval.dtype), shape=shape)
    out_dims, fixed = _slice_plan(tuple(shape), spec)
    rank = len(shape)
    if not g.aval.shape:
        em.line(f"{out}[{index(_slice_index(rank, [], fixed, []))}] = {em.ref(g)}")
        return
    copy_loops(em, g.aval.shape, out, lambda i: _slice_index(rank, out_dims, fixed, i),
               lambda i: em.read(g, i))


@stmt_op("Shape")
def _shape(em, node, out_type):
    (x,), (y,) = node.inputs, node.outputs
    out = em.alloc(y)
    for k, d in enumerate(x.aval.shape):
        em.line(f"{out}[{k}] = {d}")


@stmt_op("Size")
def _size(em, node, out_type):
    (x,), (y,) = node.inputs, node.outputs
    em.bind(y, lit(num_elements(x.aval.shape), y.aval.dtype))


@stmt_op("OneHot")
def _one_hot(em, node, depth, on_value, off_value, axis, dtype):
    """Out-of-range indices (negative too) leave a row of ``off_value``, as in TensorFlow."""
    (x,), (y,) = node.inputs, node.outputs
    rank = len(x.aval.shape)
    ax = rank if axis == -1 else axis
    out = em.alloc(y, fill=lit(off_value, y.aval.dtype))
    on = lit(on_value, y.aval.dtype)
    with em.loops(x.aval.shape) as idx:
        h = em.fresh("h")
        em.line(f"{h} = {em.read(x, idx)}")
        with em.block(f"if {h} >= 0 and {h} < {depth}:"):
            em.line(f"{out}[{index(idx[:ax] + [h] + idx[ax:])}] = {on}")
