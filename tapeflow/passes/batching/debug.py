"""Batching rules of the run-time checks: CheckNumerics checks the whole stacked value (a NaN
in any row is one in that row's program); a batched Assert holds when it holds for every row,
and prints the stacked data, as TensorFlow's pfor does."""
from .flags import structured
from .registry import batching


def _plain(b, v, flag):
    return b.dense(v, flag) if structured(flag) else v


@batching("CheckNumerics")
def _check_numerics(b, node, inputs, batched):
    (x,), (flag,) = inputs, batched
    return [(b.emit1("CheckNumerics", [_plain(b, x, flag)], node.attrs), True)]


@batching("Assert")
def _assert(b, node, inputs, batched):
    cond, *data = [_plain(b, v, f) for v, f in zip(inputs, batched, strict=True)]
    if batched[0]:
        cond = b.emit1("All", [cond], {"axis": (0,), "keepdims": False})
    b.emit("Assert", [cond, *data], node.attrs)
    return []


@batching("GuaranteeConst")
def _guarantee_const(b, node, inputs, batched):
    (x,), (flag,) = inputs, batched
    return [(b.emit1("GuaranteeConst", [_plain(b, x, flag)], {}), True)]
