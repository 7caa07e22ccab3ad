"""Cumulative ops (runtime/kernels/scan.py): one call of a jitted scan (codegen/scan_helpers.py)
on a (pre, n, post) view of the input."""
from ...ir.shapes import num_elements
from ..emitter import shape_lit
from .registry import stmt_op

_HELPER = {"Cumsum": "rt.cumsum3", "Cumprod": "rt.cumprod3",
           "CumulativeLogsumexp": "rt.cumlogsumexp3"}


def _scan(em, node, axis, exclusive=False, reverse=False):
    (x,) = node.inputs
    (y,) = node.outputs
    shape = x.aval.shape
    ax = axis % len(shape)
    view = shape_lit((num_elements(shape[:ax]), shape[ax], num_elements(shape[ax + 1:])))
    out = em.alloc(y)
    em.line(f"{_HELPER[node.op]}({em.ref(x)}.reshape({view}), {out}.reshape({view}), "
            f"{bool(exclusive)}, {bool(reverse)})")


for _name in _HELPER:
    stmt_op(_name)(_scan)
