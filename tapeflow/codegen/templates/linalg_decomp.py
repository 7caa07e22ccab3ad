"""Decompositions and matrix functions (runtime/kernels/linalg_decomp.py) through Numba's
``np.linalg`` (LAPACK via SciPy) in loops over the flattened batch, sizes read from the
arguments. Rank-0 values are scalars in generated code, so an unbatched op's per-matrix
outputs are defined as such."""
import numpy as np

from ...ir.shapes import num_elements
from ..emitter import cast, np_type, shape_lit
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


def _flat_tail(em, v, tail):
    """``v`` as [batch, *last ``tail`` dims], or a placeholder for an empty output (u, v of an
    SVD without vectors: shape [0])."""
    if v.aval.shape == (0,):
        return em.ref(v)
    if tail == 1:
        shape = v.aval.shape
        w = em.fresh("f")
        em.line(f"{w} = {em.ref(v)}.reshape({shape_lit((num_elements(shape[:-1]), shape[-1]))})")
        return w
    return flat3(em, v, 2)


def _outputs(em, node, tails):
    for y in node.outputs:
        em.alloc(y)
    return [_flat_tail(em, y, t) for y, t in zip(node.outputs, tails)]


@stmt_op("Qr")
def _qr(em, node, full_matrices=False):
    q, r = _outputs(em, node, (2, 2))
    em.line(f"rt.qr_into({flat3(em, node.inputs[0], 2)}, {q}, {r}, {full_matrices})")


@stmt_op("Svd")
def _svd(em, node, compute_uv=True, full_matrices=False):
    s, u, v = _outputs(em, node, (1, 2, 2))
    if not compute_uv:   # typed like the vectors' views, never written
        u = v = em.fresh("e")
        em.line(f"{u} = np.empty((0, 0, 0), dtype={np_type(node.outputs[0].aval.dtype)})")
    em.line(f"rt.svd_into({flat3(em, node.inputs[0], 2)}, {s}, {u}, {v}, {compute_uv}, {full_matrices})")


@stmt_op("SelfAdjointEigV2")
def _eigh(em, node, compute_v=True):
    e, v = _outputs(em, node, (1, 2))
    if not compute_v:
        v = em.fresh("e")
        em.line(f"{v} = np.empty((0, 0, 0), dtype={np_type(node.outputs[0].aval.dtype)})")
    em.line(f"rt.eigh_into({flat3(em, node.inputs[0], 2)}, {e}, {v}, {compute_v})")


@stmt_op("Lu")
def _lu(em, node, output_idx_type=None):
    lu, perm = _outputs(em, node, (2, 1))
    em.line(f"rt.lu_into({flat3(em, node.inputs[0], 2)}, {lu}, {perm})")


@stmt_op("MatrixSolveLs")
def _solve_ls(em, node, l2_regularizer=0.0, fast=True):
    (out,) = _outputs(em, node, (2,))
    a, b = node.inputs
    em.line(f"rt.lstsq_into({flat3(em, a, 2)}, {flat3(em, b, 2)}, {out}, {float(l2_regularizer)!r}, {fast})")


@stmt_op("MatrixExponential", "MatrixSquareRoot")
def _matrix_function(em, node):
    """SciPy's expm / sqrtm (the kernels') in object mode, writing into the output."""
    (x,), (y,) = node.inputs, node.outputs
    out = em.alloc(y)
    helper = "expm_into" if node.op == "MatrixExponential" else "sqrtm_into"
    with em.block("with objmode():"):
        em.line(f"rt.{helper}({em.ref(x)}, {out})")


@stmt_op("TridiagonalSolve")
def _tridiagonal_solve(em, node, partial_pivoting=True, perturb_singular=False):
    (d, rhs), (y,) = node.inputs, node.outputs
    em.alloc(y)
    eps = float(np.finfo(y.aval.dtype.np).eps)
    em.line(f"rt.tridiagonal_solve_into({flat3(em, d, 2)}, {flat3(em, rhs, 2)}, {flat3(em, y, 2)}, "
            f"{partial_pivoting}, {perturb_singular}, {eps!r})")
