"""Decompositions and matrix functions (runtime/kernels/linalg_decomp.py) through Numba's
``np.linalg`` (LAPACK via SciPy) in loops over the flattened batch, sizes read from the
arguments. Rank-0 values are scalars in generated code, so an unbatched op's per-matrix
outputs are defined as such."""
from ...ir.shapes import num_elements
from ..emitter import cast, shape_lit
from .linalg import flat3
from .registry import stmt_op


def _flat_batch(em, v):
    """A per-matrix output of batch shape as a flat [batch] view."""
    w = em.fresh("f")
    em.line(f"{w} = {em.ref(v)}.reshape({shape_lit((num_elements(v.aval.shape),))})")
    return w


@stmt_op("LogMatrixDeterminant")
def _slogdet(em, node):
    (x,) = node.inputs
    sign, logdet = node.outputs
    if not sign.aval.shape:
        pair = em.fresh("sl")
        em.line(f"{pair} = np.linalg.slogdet({em.ref(x)})")
        em.define(sign, cast(f"{pair}[0]", sign.aval.dtype))
        em.define(logdet, cast(f"{pair}[1]", logdet.aval.dtype))
        return
    em.alloc(sign)
    em.alloc(logdet)
    em.line(f"rt.slogdet_into({flat3(em, x, 2)}, {_flat_batch(em, sign)}, {_flat_batch(em, logdet)})")
