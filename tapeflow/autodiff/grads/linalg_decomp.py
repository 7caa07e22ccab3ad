"""Gradient rules of the decompositions and matrix functions (TF's linalg_grad.py)."""
from ...ops import array as a
from ...ops import creation
from ...ops import linalg as la
from ...ops import linalg_decomp as dl
from ...ops import math as m
from ...ops import reduce
from ...runtime.dispatch import apply
from ...runtime.registry import gradient


@gradient("LogMatrixDeterminant", inputs=(0,))
def _slogdet(op, _, grad_b):
    """TF's _LogMatrixDeterminantGrad: g * inv(A)^T; the sign has no gradient."""
    inv_t = la.inv(op.inputs[0], adjoint=True)
    return [m.multiply(a.expand_dims(a.expand_dims(grad_b, -1), -1), inv_t)]


def _adj(x):
    return la.matrix_transpose(x)


def _tri_solve_right(x, r):
    """x @ inv(r)^T... TF's _TriangularSolve: matmul(x, adjoint(inv(r))) for upper r."""
    return _adj(la.triangular_solve(r, _adj(x), lower=False, adjoint=False))


def _qr_square_and_deep(q, r, dq, dr):
    qdq = la.matmul(q, dq, transpose_a=True)
    qdq_ = m.subtract(qdq, _adj(qdq))
    rdr = la.matmul(r, dr, transpose_b=True)
    rdr_ = m.subtract(rdr, _adj(rdr))
    tril = la.band_part(m.add(qdq_, rdr_), -1, 0)
    grad_a = la.matmul(q, m.add(dr, _tri_solve_right(tril, r)))
    grad_b = _tri_solve_right(m.subtract(dq, la.matmul(q, qdq)), r)
    return m.add(grad_a, grad_b)


@gradient("Qr", inputs=(0,), outputs=(0, 1))
def _qr(op, dq, dr):
    """TF's _QrGrad (arXiv:2009.10071): square and tall matrices directly, wide ones by
    splitting a = [x, y]; tall with full_matrices is TF's NotImplementedError."""
    q, r = op.outputs
    rows, cols = op.out_avals[1].shape[-2:]
    if rows is None or cols is None:
        raise NotImplementedError(f"QrGrad not implemented with dynamic shapes. Received r.shape: "
                                  f"{list(op.out_avals[1].shape)}")
    qrows, qcols = op.out_avals[0].shape[-2:]
    if rows > cols and qrows == qcols:
        raise NotImplementedError(f"QrGrad not implemented when nrows > ncols and full_matrices is "
                                  f"true. Received r.shape={list(op.out_avals[1].shape)} with "
                                  f"nrows={rows}and ncols={cols}.")
    num_rows = qrows
    if num_rows >= cols:
        return [_qr_square_and_deep(q, r, dq, dr)]
    y = op.inputs[0][..., :, num_rows:]
    u = r[..., :, :num_rows]
    dv = dr[..., :, num_rows:]
    du = dr[..., :, :num_rows]
    dy = la.matmul(q, dv)
    dx = _qr_square_and_deep(q, u, m.add(dq, la.matmul(y, dv, transpose_b=True)), du)
    return [a.concat([dx, dy], axis=-1)]


def _safe_reciprocal(x, epsilon=1e-20):
    """TF's _SafeReciprocal: x / (x^2 + eps), a Lorentz broadening at repeated values."""
    return m.divide(x, m.add(m.multiply(x, x), m.constant_like(epsilon, x)))


def _off_diagonal_reciprocals(e):
    """f[i, j] = 1 / (e_j - e_i) off the diagonal, 0 on it (TF's f)."""
    diff = m.subtract(a.expand_dims(e, -2), a.expand_dims(e, -1))
    return la.set_diag(_safe_reciprocal(diff), creation.zeros_like(e))


@gradient("SelfAdjointEigV2", inputs=(0,), outputs=(0, 1))
def _eigh(op, grad_e, grad_v):
    """TF's _SelfAdjointEigV2Grad, taken to the lower triangle the op reads."""
    e = op.outputs[0]
    if op.attrs["compute_v"]:
        v = op.outputs[1]
        f = _off_diagonal_reciprocals(e)
        mid = m.add(la.diag(grad_e), m.multiply(f, la.matmul(v, grad_v, transpose_a=True)))
    else:
        _, v = dl.eigh(op.inputs[0])
        mid = la.diag(grad_e)
    grad_a = la.matmul(v, la.matmul(mid, v, transpose_b=True))
    grad_a = la.band_part(m.add(grad_a, _adj(grad_a)), -1, 0)
    return [la.set_diag(grad_a, m.multiply(m.constant_like(0.5, grad_a), la.diag_part(grad_a)))]


@gradient("Svd", inputs=(0,), outputs=(0, 1, 2))
def _svd(op, grad_s, grad_u, grad_v):
    """TF's _SvdGrad: values only through a fresh SVD; with vectors, Giles' / Townsend's
    formulas (wide matrices through the transpose); full_matrices with |m - n| > 1 is TF's
    NotImplementedError."""
    x = op.inputs[0]
    grad_s_mat = la.diag(grad_s)
    if not op.attrs["compute_uv"]:
        _, u, v = dl.svd(x, compute_uv=True)
        return [la.matmul(u, la.matmul(grad_s_mat, v, transpose_b=True))]
    full_matrices = op.attrs["full_matrices"]
    mm, nn = op.in_avals[0].shape[-2:]
    if mm is None or nn is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with unknown "
                                  "inner matrix shape.")
    s, u, v = op.outputs
    use_adjoint = mm > nn
    if use_adjoint:
        mm, nn = nn, mm
        u, v = v, u
        grad_u, grad_v = grad_v, grad_u
    if full_matrices and abs(mm - nn) > 1:
        raise NotImplementedError(f"svd gradient is not implemented for abs(m - n) > 1 when "
                                  f"full_matrices is True. Received: m={mm} and n={nn} from op "
                                  f"input with shape={list(op.in_avals[0].shape)}.")
    s_mat = la.diag(s)
    f = _off_diagonal_reciprocals(m.multiply(s, s))
    s_inv_mat = la.diag(_safe_reciprocal(s))
    v1 = v[..., :, :mm]
    grad_v1 = grad_v[..., :, :mm]
    f_u = m.multiply(f, la.matmul(u, grad_u, transpose_a=True))
    f_v = m.multiply(f, la.matmul(v1, grad_v1, transpose_a=True))
    term1_nouv = m.add(m.add(grad_s_mat, la.matmul(m.add(f_u, _adj(f_u)), s_mat)),
                       la.matmul(s_mat, m.add(f_v, _adj(f_v))))
    grad = la.matmul(u, la.matmul(term1_nouv, v1, transpose_b=True))
    if mm != nn:
        gv1t = _adj(grad_v1)
        term2_nous = m.subtract(gv1t, la.matmul(la.matmul(gv1t, v1), v1, transpose_b=True))
        if full_matrices:
            v2 = v[..., :, mm:nn]
            grad_v2 = grad_v[..., :, mm:nn]
            v1t_gv2 = la.matmul(v1, grad_v2, transpose_a=True)
            term2_nous = m.subtract(term2_nous, la.matmul(v1t_gv2, v2, transpose_b=True))
        grad = m.add(grad, la.matmul(la.matmul(u, s_inv_mat), term2_nous))
    return [_adj(grad) if use_adjoint else grad]


@gradient("Lu")
def _lu(op, *grads):
    """TensorFlow registers no gradient for Lu: differentiating through it is its LookupError
    (lu_solve, lu_matrix_inverse and lu_reconstruct are differentiable composites). An input
    no source reaches (``stop_gradient``) asks nothing of it, as in TF."""
    if not op.wants[0]:
        return [None]
    raise LookupError("gradient registry has no entry for: Lu")


@gradient("MatrixSolveLs", inputs=(0, 1), outputs=(0,))
def _solve_ls(op, grad):
    """TF's _MatrixSolveLsGrad (fast=True only: fast=False is its ValueError)."""
    if not op.attrs["fast"]:
        raise ValueError("Gradient not defined for fast=False")
    mat, rhs = op.inputs
    l2 = op.attrs["l2_regularizer"]
    rows, cols = op.in_avals[0].shape[-2:]
    if rows >= cols:
        chol = _gram_cholesky(mat, l2, first_kind=True)
        x = op.outputs[0]
        z = la.cholesky_solve(chol, grad)
        xzt = la.matmul(x, z, transpose_b=True)
        zx_sym = m.add(xzt, _adj(xzt))
        grad_a = m.add(m.negative(la.matmul(mat, zx_sym)), la.matmul(rhs, z, transpose_b=True))
        return [grad_a, la.matmul(mat, z)]
    chol = _gram_cholesky(mat, l2, first_kind=False)
    grad_b = la.cholesky_solve(chol, la.matmul(mat, grad))
    tmp = la.cholesky_solve(chol, rhs)
    a1 = m.negative(la.matmul(grad_b, la.matmul(tmp, mat, transpose_a=True)))
    a2 = la.matmul(tmp, m.subtract(grad, la.matmul(mat, grad_b, transpose_a=True)), transpose_b=True)
    return [m.add(a1, a2), grad_b]


def _gram_cholesky(mat, l2, first_kind):
    """TF's _RegularizedGramianCholesky."""
    gram = la.matmul(mat, mat, transpose_a=first_kind, transpose_b=not first_kind)
    if l2:
        n = gram.shape[-1]
        gram = m.add(gram, m.multiply(m.constant_like(l2, gram), la.eye(n, dtype=gram.dtype)))
    return la.cholesky(gram)


@gradient("MatrixExponential", inputs=(0,))
def _expm(op, g):
    """The adjoint of the Fréchet derivative, L(A^T, G): the upper-right block of
    expm([[A^T, G], [0, A^T]]). TF differentiates its Padé composite; this is the exact
    derivative of expm (equal to roundoff) and, being expm again, differentiable again."""
    at = _adj(op.inputs[0])
    n = op.in_avals[0].shape[-1]
    zeros = creation.zeros_like(at)
    block = a.concat([a.concat([at, g], axis=-1), a.concat([zeros, at], axis=-1)], axis=-2)
    return [apply("MatrixExponential", [block])[..., :n, n:]]


def _kronecker(b1, b2):
    """TF's _KroneckerProduct of two batches of n x n matrices."""
    shape = list(b1.shape)
    batch, n = shape[:-2], shape[-1]
    prod = m.multiply(a.reshape(b1, batch + [n, 1, n, 1]), a.reshape(b2, batch + [1, n, 1, n]))
    return a.reshape(prod, batch + [n * n, n * n])


@gradient("MatrixSquareRoot", outputs=(0,))
def _sqrtm(op, g):
    """TF's _MatrixSquareRootGrad: dA = R dR + dR R solved as a Sylvester equation through
    Kronecker products (reads only the output R)."""
    r = op.outputs[0]
    shape = list(op.out_avals[0].shape)
    n = shape[-1]
    eye = a.broadcast_to(la.eye(n, dtype=r.dtype), shape)
    ksum = m.add(_kronecker(eye, _adj(r)), _kronecker(r, eye))
    vec_da = a.reshape(_adj(g), shape[:-2] + [n * n, 1])
    vec_dsqrtm = la.solve(ksum, vec_da)
    return [_adj(a.reshape(vec_dsqrtm, shape))]


def _transpose_tridiagonal(diags):
    """TF's _TransposeTridiagonalMatrix in the compact form."""
    diag = diags[..., 1, :]
    zeros = creation.zeros_like(diags[..., 0, :1])
    superdiag = a.concat([diags[..., 2, 1:], zeros], axis=-1)
    subdiag = a.concat([zeros, diags[..., 0, :-1]], axis=-1)
    return a.stack([superdiag, diag, subdiag], axis=-2)


def _matmul_three_diagonals(x, y_tr):
    """TF's _MatmulExtractingThreeDiagonals: the three diagonals of x @ y_tr^T."""
    diag = reduce.reduce_sum(m.multiply(x, y_tr), axis=-1)
    zeros = creation.zeros_like(y_tr[..., :1, :])
    superdiag = reduce.reduce_sum(m.multiply(x, a.concat([y_tr[..., 1:, :], zeros], axis=-2)), axis=-1)
    subdiag = reduce.reduce_sum(m.multiply(x, a.concat([zeros, y_tr[..., :-1, :]], axis=-2)), axis=-1)
    return a.stack([superdiag, diag, subdiag], axis=-2)


@gradient("TridiagonalSolve", inputs=(0,), outputs=(0,))
def _tridiagonal_solve(op, g):
    """TF's _TridiagonalSolveGrad: solve with the transposed matrix, then minus the three
    diagonals of grad_rhs x^T."""
    diags, x = op.inputs[0], op.outputs[0]
    attrs = {"partial_pivoting": op.attrs["partial_pivoting"],
             "perturb_singular": op.attrs["perturb_singular"]}
    grad_rhs = apply("TridiagonalSolve", [_transpose_tridiagonal(diags), g], attrs)
    return [m.negative(_matmul_three_diagonals(grad_rhs, x)), grad_rhs]
