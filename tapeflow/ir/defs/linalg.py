"""Linear algebra ops: matmul, einsum, solve, inverse, determinant, cholesky."""
import string
from collections import Counter

from ...errors import InferError
from ..opdef import AVal, FLOATS, NUMERIC, check_dtype, check_same_dtype, defop
from ..shapes import broadcast_shapes


def _matrix_dims(aval, what, transpose=False):
    if len(aval.shape) < 2:
        raise InferError(f"{what} is not a matrix: it has shape {list(aval.shape)}, expected rank >= 2")
    rows, cols = aval.shape[-2:]
    return (cols, rows) if transpose else (rows, cols)


def _matmul(avals, transpose_a=False, transpose_b=False):
    """One op for 2-D and batched products; batch dims broadcast as in BatchMatMulV2."""
    a, b = avals
    dt = check_same_dtype(avals)
    check_dtype(a, NUMERIC)
    m, k = _matrix_dims(a, "In[0]", transpose_a)
    k2, n = _matrix_dims(b, "In[1]", transpose_b)
    if k is not None and k2 is not None and k != k2:
        raise InferError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: {list(b.shape)} "
                         f"(inner dimensions {k} vs {k2}; transpose_a={transpose_a}, "
                         f"transpose_b={transpose_b})")
    try:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except InferError:
        raise InferError(f"batch dimensions of In[0]: {list(a.shape)} and In[1]: {list(b.shape)} "
                         f"do not broadcast") from None
    return AVal(batch + (m, n), dt)


def _matmul_keeps_rows(attrs, flags, in_avals, out_avals):
    """A matrix product keeps rows when they come from the left factor only (untransposed); a
    batched one, when the row inputs carry the batch axis (rank of the output)."""
    out_rank = len(out_avals[0].shape)
    if out_rank == 2:
        return flags == [True, False] and not attrs.get("transpose_a")
    return all(len(a.shape) == out_rank for a, f in zip(in_avals, flags) if f)


defop("MatMul", _matmul, arity=2, attrs={"transpose_a": "bool", "transpose_b": "bool"},
      same_dtype=(0, 1), keeps_rows=_matmul_keeps_rows, gemm=True)


# -- einsum --------------------------------------------------------------------------
LETTERS = string.ascii_letters


def _split_equation(equation):
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise InferError(f"equation {equation!r} has more than one '->'")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    for t in terms + ([out] if arrow else []):
        if t.count("...") > 1 or any(c not in LETTERS for c in t.replace("...", "", 1)):
            raise InferError(f"subscripts {t!r} in {equation!r} must be letters with at most one '...'")
    return terms, (out if arrow else None)


def parse_einsum(equation, shapes):
    """(input labels, output labels, {label: size}) with every '...' spelled out as letters.

    A broadcast dimension of size 1 facing a larger one gets a label of its own, so the
    explicit equation never broadcasts: its kernel and its gradient (which then simply
    sums over that label) need no special case. Implicit output: '...' then the labels
    used once, sorted, as in NumPy and TensorFlow.
    """
    terms, out = _split_equation(equation)
    if len(terms) != len(shapes):
        raise InferError(f"equation {equation!r} names {len(terms)} operands, got {len(shapes)}")
    used = set(equation)
    fresh = iter(c for c in LETTERS if c not in used)
    ranks = []
    for i, (t, shape) in enumerate(zip(terms, shapes)):
        named = len(t.replace("...", ""))
        rank = len(shape) - named
        if rank < 0 or (rank and "..." not in t):
            raise InferError(f"operand {i} has shape {list(shape)}, which does not match "
                             f"subscripts {t!r} of {equation!r}")
        ranks.append(rank)
    bshapes = [shape[t.index("..."):t.index("...") + r] for t, shape, r in zip(terms, shapes, ranks)
               if "..." in t]
    try:
        batch = broadcast_shapes(*bshapes) if bshapes else ()
    except InferError:
        raise InferError(f"the operands' '...' dimensions do not broadcast: "
                         f"{', '.join(str(list(s)) for s in shapes)}") from None
    blabels = "".join(next(fresh) for _ in batch)
    labels = []
    for t, shape, r in zip(terms, shapes, ranks):
        if "..." not in t:
            labels.append(t)
            continue
        pre, post = t.split("...")
        mid = ""
        for j, d in enumerate(shape[len(pre):len(pre) + r]):
            full = len(batch) - r + j
            mid += next(fresh) if d == 1 and batch[full] != 1 else blabels[full]
        labels.append(pre + mid + post)
    if out is None:
        counts = Counter("".join(terms).replace(".", ""))
        out_labels = blabels + "".join(sorted(c for c, n in counts.items() if n == 1))
    else:
        out_labels = out.replace("...", blabels)
    sizes = {}
    for lab, shape in zip(labels, shapes):
        for c, d in zip(lab, shape):
            prev = sizes.get(c)
            if prev is not None and d is not None and prev != d:
                raise InferError(f"label {c!r} of {equation!r} has size {prev} in one place and {d} "
                                 f"in another; shapes: {', '.join(str(list(s)) for s in shapes)}")
            if prev is None:
                sizes[c] = d
    for c, n in Counter(out_labels).items():
        if c not in sizes:
            raise InferError(f"output label {c!r} of {equation!r} is not in any input")
        if n > 1:
            raise InferError(f"output label {c!r} of {equation!r} appears more than once")
    return labels, out_labels, sizes


def _einsum(avals, equation):
    if not avals:
        raise InferError("needs at least one operand")
    dt = check_same_dtype(avals)
    check_dtype(avals[0], NUMERIC)
    _, out, sizes = parse_einsum(equation, [a.shape for a in avals])
    return AVal(tuple(sizes[c] for c in out), dt)


defop("Einsum", _einsum, arity=None, attrs={"equation": "str"})


# -- square-matrix ops ---------------------------------------------------------------
def _square(aval, what="input"):
    check_dtype(aval, FLOATS)
    rows, cols = _matrix_dims(aval, what)
    if rows is not None and cols is not None and rows != cols:
        raise InferError(f"{what} must be a square matrix (or batch of them), got shape {list(aval.shape)}")
    return rows


def _solve(avals, adjoint=False):
    a, rhs = avals
    dt = check_same_dtype(avals)
    m = _square(a, "matrix")
    rows, _ = _matrix_dims(rhs, "rhs")
    if len(rhs.shape) != len(a.shape) or a.shape[:-2] != rhs.shape[:-2] or \
            (m is not None and rows is not None and m != rows):
        raise InferError(f"matrix {list(a.shape)} and rhs {list(rhs.shape)} must be [..., M, M] and "
                         f"[..., M, K] with the same batch dimensions")
    return AVal(rhs.shape, dt)


def _inverse(avals, adjoint=False):
    _square(avals[0])
    return avals[0]


def _determinant(avals):
    _square(avals[0])
    return AVal(avals[0].shape[:-2], avals[0].dtype)


def _cholesky(avals):
    _square(avals[0])
    return avals[0]


defop("MatrixSolve", _solve, arity=2, attrs={"adjoint": "bool"}, same_dtype=(0, 1))
defop("MatrixInverse", _inverse, attrs={"adjoint": "bool"})
defop("MatrixDeterminant", _determinant)
defop("Cholesky", _cholesky)


# -- triangular solve, band and diagonal ops (the Gaussian-process path) ------------------
def _triangular_solve(avals, lower=True, adjoint=False):
    """MatrixTriangularSolve: batch dims broadcast (TF 2.x), only one triangle is read."""
    a, rhs = avals
    dt = check_same_dtype(avals)
    check_dtype(a, FLOATS)
    rows, cols = _matrix_dims(a, "In[0]")
    if rows is not None and cols is not None and rows != cols:
        raise InferError(f"In[0] matrices in the last dimensions must be square ({cols} =/= {rows})")
    r, k = _matrix_dims(rhs, "In[1]")
    if rows is not None and r is not None and rows != r:
        raise InferError(f"In[0] and In[1] must have compatible matrix dimensions: "
                         f"{list(a.shape)} vs. {list(rhs.shape)}")
    try:
        batch = broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    except InferError:
        raise InferError(f"In[0] and In[1] must have compatible batch dimensions: "
                         f"{list(a.shape)} vs. {list(rhs.shape)}") from None
    return AVal(batch + (r, k), dt)


def _band_part(avals, num_lower=-1, num_upper=-1):
    (x,) = avals
    if len(x.shape) < 2:
        raise InferError(f"input must be at least 2-dim, received shape: {list(x.shape)}")
    rows, cols = x.shape[-2:]
    if rows is not None and num_lower > rows:
        raise InferError(f"num_lower must be negative or less or equal to number of rows ({rows}) "
                         f"got: {num_lower}")
    if cols is not None and num_upper > cols:
        raise InferError(f"num_upper must be negative or less or equal to number of columns ({cols}) "
                         f"got: {num_upper}")
    return x


def diag_len(rows, cols, d):
    """The length of diagonal ``d`` of a rows x cols matrix (d > 0: above the main one)."""
    return min(rows + min(0, d), cols - max(0, d))


def diag_offset(d, max_len, rows, cols, align):
    """Where diagonal ``d`` starts in its row of the packed form (TF's ComputeOffset)."""
    left_super = align in ("LEFT_LEFT", "LEFT_RIGHT")
    left_sub = align in ("LEFT_LEFT", "RIGHT_LEFT")
    if (d >= 0 and left_super) or (d <= 0 and left_sub):
        return 0
    return max_len - diag_len(rows, cols, d)


_ALIGNS = ("LEFT_LEFT", "LEFT_RIGHT", "RIGHT_LEFT", "RIGHT_RIGHT")


def _check_k(k, align):
    lo, hi = k
    if lo > hi:
        raise InferError(f"lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}")
    if align not in _ALIGNS:
        raise InferError(f"align must be one of {', '.join(_ALIGNS)}, got {align!r}")
    return lo, hi


def _diag_part(avals, k=(0, 0), padding_value=0, align="RIGHT_LEFT"):
    (x,) = avals
    lo, hi = _check_k(k, align)
    if len(x.shape) < 2:
        raise InferError(f"input must be at least 2-dim, received shape: {list(x.shape)}")
    rows, cols = x.shape[-2:]
    if rows is not None and cols is not None and not (
            (-rows < lo or rows == 0) and (hi < cols or cols == 0)):
        raise InferError(f"the diagonals k=({lo}, {hi}) are out of bounds of matrices "
                         f"{rows} x {cols}")
    if rows is None or cols is None:
        if lo != hi:
            raise InferError("a band of diagonals needs the matrix sizes known")
        n = None
    else:
        n = max(diag_len(rows, cols, d) for d in range(lo, hi + 1))
    tail = (n,) if lo == hi else (hi - lo + 1, n)
    return AVal(x.shape[:-2] + tail, x.dtype)


def diag_matrix_shape(dshape, k, num_rows, num_cols):
    """The [rows, cols] of MatrixDiagV3's output (TF's rules for num_rows/num_cols = -1)."""
    lo, hi = k
    max_len = dshape[-1]
    if max_len is None:
        raise InferError("the diagonal's length must be known")
    min_rows, min_cols = max_len - min(hi, 0), max_len + max(lo, 0)
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = max(min_rows, min_cols)
    elif num_rows == -1:
        num_rows = min_rows
    elif num_cols == -1:
        num_cols = min_cols
    if num_rows != min_rows and num_cols != min_cols:
        raise InferError(f"The number of rows or columns is not consistent with the specified "
                         f"d_lower, d_upper, and diagonal: num_rows={num_rows}, num_cols={num_cols}, "
                         f"k=({lo}, {hi}), diagonal shape {list(dshape)}")
    return num_rows, num_cols


def _matrix_diag(avals, k=(0, 0), num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    (d,) = avals
    lo, hi = _check_k(k, align)
    need = 1 if lo == hi else 2
    if len(d.shape) < need:
        raise InferError(f"diagonal must be at least {need}-dim, received shape: {list(d.shape)}")
    if lo != hi and d.shape[-2] is not None and d.shape[-2] != hi - lo + 1:
        raise InferError(f"The number of diagonals provided in the input does not match the "
                         f"lower_diag_index and upper_diag_index range: {d.shape[-2]} vs {hi - lo + 1}")
    rows, cols = diag_matrix_shape(d.shape, (lo, hi), num_rows, num_cols)
    return AVal(d.shape[:-need] + (rows, cols), d.dtype)


def _set_diag(avals, k=(0, 0), align="RIGHT_LEFT"):
    x, d = avals
    check_same_dtype(avals)
    want = _diag_part([x], k=k, align=align)
    if len(d.shape) != len(want.shape) or any(
            a is not None and b is not None and a != b for a, b in zip(d.shape, want.shape)):
        raise InferError(f"Either first dimensions of diagonal don't match input.shape[:-2], or "
                         f"diagonal.shape[:-1] is not equal to the longests diagonal in range "
                         f"[lower_diag_index:upper_diag_index].\nInput shape: {list(x.shape)}\n"
                         f"Diagonal shape: {list(d.shape)}\nExpected diagonal shape: "
                         f"{list(want.shape)}")
    return x


_DIAG_ATTRS = {"k": "ints", "padding_value": "number", "align": "str"}
defop("MatrixTriangularSolve", _triangular_solve, arity=2, attrs={"lower": "bool", "adjoint": "bool"},
      same_dtype=(0, 1))
defop("MatrixBandPart", _band_part, attrs={"num_lower": "int", "num_upper": "int"}, moves_data=True)
defop("MatrixDiagPartV3", _diag_part, attrs=_DIAG_ATTRS, moves_data=True)
defop("MatrixDiagV3", _matrix_diag, attrs=dict(_DIAG_ATTRS, num_rows="int", num_cols="int"),
      moves_data=True)
defop("MatrixSetDiagV3", _set_diag, arity=2, attrs={"k": "ints", "align": "str"}, same_dtype=(0, 1),
      moves_data=True)

from . import decomp  # noqa: E402,F401  (the decompositions and matrix functions)
