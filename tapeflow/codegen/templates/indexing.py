"""Indexing ops (runtime/kernels/indexing.py): reverse and roll as NumPy calls on the array,
gather/scatter by index tuples through codegen/index_helpers.py on 2-D views."""
from ...ir.shapes import num_elements
from ..emitter import Unsupported, lit, shape_lit
from .registry import stmt_op


@stmt_op("ReverseV2")
def _reverse(em, node, axis):
    (x,) = node.inputs
    (y,) = node.outputs
    src = em.as_array(x) if x.aval.shape else em.ref(x)
    if not x.aval.shape:
        em.define(y, em.ref(x))
        return
    key = ", ".join("::-1" if d % len(x.aval.shape) in {a % len(x.aval.shape) for a in axis}
                    else ":" for d in range(len(x.aval.shape)))
    out = em.alloc(y)
    em.line(f"{out}[...] = {src}[{key}]")


@stmt_op("Roll")
def _roll(em, node, shift, axis):
    (x,) = node.inputs
    (y,) = node.outputs
    shape = x.aval.shape
    if not shape:
        em.define(y, em.ref(x))
        return
    total = {}
    for s, a in zip(shift, axis):
        total[a % len(shape)] = total.get(a % len(shape), 0) + s
    cur = em.ref(x)
    for a, s in total.items():
        n = shape[a]
        if not isinstance(n, int):
            raise Unsupported("Roll along a size only the run knows")
        s = s % n if n else 0
        if s == 0:
            continue
        nxt = em.fresh("rl")
        head = ", ".join(":" for _ in range(a))
        pre = head + ", " if head else ""
        em.line(f"{nxt} = np.concatenate(({cur}[{pre}{n - s}:], {cur}[{pre}:{n - s}]), axis={a})")
        cur = nxt
    out = em.alloc(y)
    em.line(f"{out}[...] = {cur}")


def _idx2(em, indices):
    k = indices.aval.shape[-1]
    m = num_elements(indices.aval.shape[:-1])
    iv = em.fresh("iv")
    em.line(f"{iv} = {em.ref(indices)}.reshape({shape_lit((m, k))})")
    return iv, m, k


@stmt_op("GatherNd")
def _gather_nd(em, node):
    params, indices = node.inputs
    (y,) = node.outputs
    iv, m, k = _idx2(em, indices)
    shape = params.aval.shape
    rest = num_elements(shape[k:])
    pv = em.fresh("pv")
    em.line(f"{pv} = {em.as_array(params)}.reshape({shape_lit((num_elements(shape[:k]), rest))})")
    out = em.alloc(y)
    em.line(f"rt.gather_nd({pv}, {iv}, {shape_lit(tuple(shape[:k]))}, "
            f"{out}.reshape({shape_lit((m, rest))}))")


_MODES = {"ScatterNd": 1, "TensorScatterUpdate": 0, "TensorScatterAdd": 1,
          "TensorScatterSub": 2, "TensorScatterMax": 3, "TensorScatterMin": 4}


def _scatter(em, node, shape=None):
    if node.op == "ScatterNd":
        indices, updates = node.inputs
    else:
        tensor, indices, updates = node.inputs
    (y,) = node.outputs
    shape = y.aval.shape
    iv, m, k = _idx2(em, indices)
    rest = num_elements(shape[k:])
    if node.op == "ScatterNd":
        out = em.alloc(y, fill=lit(0, y.aval.dtype))
    else:
        out = em.alloc(y)
        em.line(f"{out}[...] = {em.ref(tensor)}")
    uv = em.fresh("uv")
    em.line(f"{uv} = {em.as_array(updates)}.reshape({shape_lit((m, rest))})")
    em.line(f"rt.scatter_nd({iv}, {uv}, {shape_lit(tuple(shape[:k]))}, "
            f"{out}.reshape({shape_lit((num_elements(shape[:k]), rest))}), {_MODES[node.op]})")


for _name in _MODES:
    stmt_op(_name)(_scatter)
