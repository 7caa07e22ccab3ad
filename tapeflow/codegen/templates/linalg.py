"""Linear algebra (runtime/kernels/linalg.py) through Numba's BLAS/LAPACK bindings.

Numba's ``np.dot`` takes 2-D float arrays that are C- or F-contiguous, so a transposed
operand is passed as ``x.T`` (F-contiguous, no copy: BLAS transposes it) and batches become
a loop of ``np.dot(a[i], b[j], out[k])`` writing straight into the result. A batch times one
matrix is a single GEMM on the flattened batch. Integer products use explicit loops.
``np.linalg`` (solve/inv/det/cholesky) takes one matrix at a time: batches loop the same way.
"""
import re

import numpy as np

from ...ir.graph import constant_of
from ...ir.shapes import num_elements
from ..emitter import Unsupported, cast, shape_lit
from ..shape_free import broadcasts, code, reads
from .registry import stmt_op
from .einsum import emit_einsum


def _batch_index(em, idx, batch, own):
    """Flat index into an operand whose batch dims ``own`` broadcast against ``batch``."""
    own = (1,) * (len(batch) - len(own)) + tuple(own)
    terms, stride = [], 1
    for i, d, full in reversed(list(zip(idx, own, batch))):
        if not broadcasts(d, full):
            terms.append(i if stride == 1 else f"{i} * {stride}")
        stride *= d
    return " + ".join(reversed(terms)) or "0"


# -- which matrices are triangular, from the ops that made them ------------------------------
_FLIP = {"L": "U", "U": "L"}


def triangle(v, depth=0):
    """"L" or "U" if every matrix of value ``v`` is zero above (below) its diagonal by how it
    was made (a Cholesky factor, a band part, a triangular solve against the identity, their
    inverses, transposes, negations and products with anything of the same shape), else None.
    A product then skips the zero triangle: equal values while the other operand is finite
    (a GEMM would turn an inf or NaN there into NaN through 0 * inf)."""
    node = v.node
    if node is None or depth > 8 or len(v.aval.shape) < 2:
        return None
    op, ins = node.op, node.inputs
    if op == "Cholesky":
        return "L"
    c = constant_of(v)
    if c is not None:
        if c.ndim < 2 or c.shape[-1] != c.shape[-2] or c.shape[-1] < 2:
            return None
        return "L" if not np.triu(c, 1).any() else "U" if not np.tril(c, -1).any() else None
    if op == "MatrixBandPart":
        return "L" if node.attrs["num_upper"] == 0 else "U" if node.attrs["num_lower"] == 0 else None
    if op == "Neg":
        return triangle(ins[0], depth + 1)
    if op == "Transpose" and tuple(node.attrs["perm"][-2:]) == (len(v.aval.shape) - 1, len(v.aval.shape) - 2):
        return _FLIP.get(triangle(ins[0], depth + 1))
    if op == "MatrixInverse":
        t = triangle(ins[0], depth + 1)
        return _FLIP.get(t) if node.attrs["adjoint"] else t
    if op == "MatrixTriangularSolve" and _is_identity(ins[1]):
        t = "L" if node.attrs["lower"] else "U"
        return _FLIP[t] if node.attrs["adjoint"] else t
    if op == "Mul":
        for x in ins:   # zero where the triangular operand is, if it is not broadcast there
            if x.aval.shape[-2:] == v.aval.shape[-2:] and triangle(x, depth + 1):
                return triangle(x, depth + 1)
    return None


def _is_identity(v):
    c = constant_of(v)
    return (c is not None and c.ndim == 2 and c.shape[0] == c.shape[1]
            and np.array_equal(c, np.eye(c.shape[0], dtype=c.dtype)))


def dead_buffer(em, node, v):
    """The variable of ``v`` if the op may write its output over it: a C array this program
    allocated (not an input, constant, output or a view), read by ``node`` alone (the
    conditions of a fused loop's donor, codegen/loop_nest.py); else None."""
    name = em.expr.get(v.id)
    if name is None or name not in em.owned or name in set(em.view_base.values()):
        return None
    if v.id in em.output_ids or any(n is not node for n in em.uses.get(v.id, ())):
        return None
    # another value held there (a fused loop's donor) or a view of it must be read no more
    order = {id(n): i for i, n in enumerate(em.graph.nodes)}
    here = order.get(id(node))
    for vid, e in em.expr.items():
        if vid != v.id and re.search(rf"\b{name}\b", e):
            later = [n for n in em.uses.get(vid, ()) if n is not node
                     and (here is None or order.get(id(n), here + 1) > here)]
            if here is None or later or vid in em.output_ids:
                return None
    return name


def _triangular_product(em, node, a, b, transpose_a, transpose_b):
    """A float matrix product with a triangular operand as BLAS trmm (half a GEMM's work): the
    line, or None."""
    y = node.outputs[0]
    if not y.aval.dtype.is_floating or len(a.aval.shape) != 2 or len(b.aval.shape) != 2:
        return None
    for left, t, other, tt, to in ((True, a, b, transpose_a, transpose_b),
                                   (False, b, a, transpose_b, transpose_a)):
        kind = triangle(t)
        if kind is not None:
            # trmm works in place: over the other operand where nothing else reads it
            dead = None if to or other is t else dead_buffer(em, node, other)
            out = em.bind(y, dead) if dead else em.alloc(y)
            return (f"rt.tri_matmul_into({em.ref(t)}, {em.ref(other)}{'.T' if to else ''}, {out}, "
                    f"{left}, {kind == 'L'}, {tt})")
    return None


@stmt_op("MatMul", sizes_from_data=True)
def _matmul(em, node, transpose_a=False, transpose_b=False):
    a, b = node.inputs
    (y,) = node.outputs
    floats = y.aval.dtype.is_floating
    ash, bsh = a.aval.shape, b.aval.shape
    m, n = y.aval.shape[-2:]
    ta, tb = (".T" if transpose_a else ""), (".T" if transpose_b else "")
    if any(reads(d, y) for d in y.aval.shape):
        # a size only the run knows (a tf.data loop's last, shorter batch): rt.dot makes its
        # result from its operands' arrays, the one form that can
        if len(ash) == 2 and len(bsh) == 2 and floats:
            em.define(y, f"rt.dot({em.ref(a)}{ta}, {em.ref(b)}{tb})")
            return
        raise Unsupported("MatMul gives a size only the run knows; only a 2-D float product "
                          "reads its sizes from its operands' arrays")
    tri = _triangular_product(em, node, a, b, transpose_a, transpose_b)
    if tri is not None:
        em.line(tri)
        return
    if len(ash) == 2 and len(bsh) == 2:
        # an inner size of literal 1 only: one read from the inputs would add a guard, and a
        # batch of one would get another program than every other batch size
        if floats and code(ash[0] if transpose_a else ash[1]) == "1":
            # an outer product (a gradient's x y^T): one pass writing it, not a GEMM of depth 1
            out = em.alloc(y)
            em.line(f"rt.outer_into({em.ref(a)}{ta}, {em.ref(b)}{tb}, {out})")
            return
        if floats:
            em.define(y, f"rt.dot({em.ref(a)}{ta}, {em.ref(b)}{tb})")
        else:
            out = em.alloc(y)
            em.line(f"rt.matmul_loops({em.ref(a)}{ta}, {em.ref(b)}{tb}, {out})")
        return
    out = em.alloc(y)
    dot = "rt.dot_into" if floats else "rt.matmul_loops"
    if len(bsh) == 2 and not transpose_a:
        # a batch of matrices times one matrix: one GEMM over the flattened batch
        rows = num_elements(ash[:-1])
        av, ov = em.fresh("av"), em.fresh("ov")
        em.line(f"{av} = {em.ref(a)}.reshape({shape_lit((rows, ash[-1]))})")
        em.line(f"{ov} = {out}.reshape({shape_lit((rows, n))})")
        em.line(f"{dot}({av}, {em.ref(b)}{tb}, {ov})")
        return
    batch = y.aval.shape[:-2]
    av, bv, ov = em.fresh("av"), em.fresh("bv"), em.fresh("ov")
    em.line(f"{av} = {em.ref(a)}.reshape({shape_lit((num_elements(ash[:-2]),) + ash[-2:])})")
    em.line(f"{bv} = {em.ref(b)}.reshape({shape_lit((num_elements(bsh[:-2]),) + bsh[-2:])})")
    em.line(f"{ov} = {out}.reshape({shape_lit((num_elements(batch), m, n))})")
    with em.loops(batch) as idx:
        ia = _batch_index(em, idx, batch, ash[:-2])
        ib = _batch_index(em, idx, batch, bsh[:-2])
        io = _batch_index(em, idx, batch, batch)
        em.line(f"{dot}({av}[{ia}]{ta}, {bv}[{ib}]{tb}, {ov}[{io}])")


@stmt_op("Einsum")
def _einsum(em, node, equation):
    emit_einsum(em, node, equation)


def _batched(em, node, body, out_matrix=True):
    """Apply ``body(matrix exprs...) -> expr`` to each matrix of a batch (or the only one)."""
    (y,) = node.outputs
    ins = node.inputs
    batch = ins[0].aval.shape[:-2]
    if not batch:
        res = body(*[em.ref(x) for x in ins])
        if out_matrix:
            em.define(y, res)
        else:
            em.define(y, cast(res, y.aval.dtype))
        return
    nb = num_elements(batch)
    views = []
    for x in ins:
        v = em.fresh("m")
        em.line(f"{v} = {em.ref(x)}.reshape({shape_lit((nb,) + x.aval.shape[-2:])})")
        views.append(v)
    out = em.alloc(y)
    ov = em.fresh("ov")
    em.line(f"{ov} = {out}.reshape({shape_lit((nb,) + (y.aval.shape[-2:] if out_matrix else ()))})")
    with em.loops((nb,)) as (i,):
        res = body(*[f"{v}[{i}]" for v in views])
        if not out_matrix:
            em.line(f"{ov}[{i}] = {res}")
        else:
            r = em.fresh("res")
            em.line(f"{r} = {res}")
            rows, cols = y.aval.shape[-2:]
            with em.loops((rows, cols)) as (j, k):
                em.line(f"{ov}[{i}, {j}, {k}] = {r}[{j}, {k}]")


@stmt_op("MatrixSolve")
def _solve(em, node, adjoint=False):
    t = ".T" if adjoint else ""
    _batched(em, node, lambda a, r: f"rt.solve({a}{t}, {r})")


@stmt_op("MatrixInverse")
def _inverse(em, node, adjoint=False):
    t = ".T" if adjoint else ""
    _batched(em, node, lambda a: f"rt.inv({a}{t})")


@stmt_op("MatrixDeterminant")
def _determinant(em, node):
    _batched(em, node, lambda a: f"rt.det({a})", out_matrix=False)


@stmt_op("Cholesky")
def _cholesky(em, node):
    """LAPACK's potrf straight into the output, per matrix (codegen/lapack.py)."""
    (x,), (y,) = node.inputs, node.outputs
    dead = dead_buffer(em, node, x)      # potrf works in place
    if dead:
        em.bind(y, dead)
    else:
        em.alloc(y)
    em.line(f"rt.cholesky_into({flat3(em, x, 2)}, {flat3(em, y, 2)})")



# -- triangular solve, band and diagonal ops --------------------------------------------
def flat3(em, v, tail):
    """A view of ``v`` as [batch, *tail dims]: its leading dims flattened into one."""
    shape = v.aval.shape
    lead = shape[:len(shape) - tail]
    w = em.fresh("f")
    em.line(f"{w} = {em.ref(v)}.reshape({shape_lit((num_elements(lead),) + tuple(shape[len(lead):]))})")
    return w


@stmt_op("MatrixTriangularSolve")
def _triangular_solve(em, node, lower=True, adjoint=False):
    a, b = node.inputs
    (y,) = node.outputs
    batch = y.aval.shape[:-2]
    em.alloc(y)
    if not batch and _is_identity(b) and y.aval.dtype.is_floating:
        # TF's L^-1 of the Cholesky gradient: an inversion, a third of the solve's work
        em.line(f"rt.tri_inverse_into({em.ref(a)}, {em.ref(y)}, {lower}, {adjoint})")
        return
    av, bv, ov = flat3(em, a, 2), flat3(em, b, 2), flat3(em, y, 2)
    with em.loops(batch) as idx:
        ia = _batch_index(em, idx, batch, a.aval.shape[:-2])
        ib = _batch_index(em, idx, batch, b.aval.shape[:-2])
        io = _batch_index(em, idx, batch, batch)
        em.line(f"rt.tri_solve_into({av}[{ia}], {bv}[{ib}], {ov}[{io}], {lower}, {adjoint})")


@stmt_op("MatrixBandPart")
def _band_part(em, node, num_lower=-1, num_upper=-1):
    (x,), (y,) = node.inputs, node.outputs
    dead = dead_buffer(em, node, x)      # zeroing outside the band in place
    if dead:
        em.bind(y, dead)
    else:
        em.alloc(y)
    em.line(f"rt.band_part_into({flat3(em, x, 2)}, {flat3(em, y, 2)}, {num_lower}, {num_upper})")


def _align_flags(align):
    return align in ("LEFT_LEFT", "LEFT_RIGHT"), align in ("LEFT_LEFT", "RIGHT_LEFT")


def _diags3(em, v, k):
    """The packed diagonals ``v`` as [batch, number of diagonals, width]."""
    if k[0] != k[1]:
        return flat3(em, v, 2)
    shape = v.aval.shape
    w = em.fresh("f")
    em.line(f"{w} = {em.ref(v)}.reshape({shape_lit((num_elements(shape[:-1]), 1, shape[-1]))})")
    return w


@stmt_op("MatrixDiagPartV3")
def _diag_part(em, node, k=(0, 0), padding_value=0, align="RIGHT_LEFT"):
    (x,), (y,) = node.inputs, node.outputs
    em.alloc(y)
    sup, sub = _align_flags(align)
    em.line(f"rt.diag_part_into({flat3(em, x, 2)}, {_diags3(em, y, k)}, {k[0]}, {k[1]}, "
            f"{padding_value!r}, {sup}, {sub})")


@stmt_op("MatrixDiagV3")
def _matrix_diag(em, node, k=(0, 0), num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    (d,), (y,) = node.inputs, node.outputs
    em.alloc(y, fill=cast(repr(padding_value), y.aval.dtype))
    sup, sub = _align_flags(align)
    em.line(f"rt.diag_into({_diags3(em, d, k)}, {flat3(em, y, 2)}, {k[0]}, {k[1]}, {sup}, {sub})")


@stmt_op("MatrixSetDiagV3")
def _set_diag(em, node, k=(0, 0), align="RIGHT_LEFT"):
    (x, d), (y,) = node.inputs, node.outputs
    out = em.alloc(y)
    em.line(f"{out}[...] = {em.ref(x)}")
    sup, sub = _align_flags(align)
    em.line(f"rt.diag_into({_diags3(em, d, k)}, {flat3(em, y, 2)}, {k[0]}, {k[1]}, {sup}, {sub})")

