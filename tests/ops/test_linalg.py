"""Linear algebra: values against NumPy, dtypes and shapes, errors that name the op and
shapes, None versus zeros, and hypothesis sweeps of matmul/einsum gradients."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.testing import check_gradients

SWEEP = settings(max_examples=12, deadline=None)
R = np.random.default_rng(7)


def _arr(shape, lo=-1.0, hi=1.0):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi))


# -- hypothesis sweeps ----------------------------------------------------------------

@SWEEP
@given(data=st.data(), batch=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3),
       dims=st.tuples(*[st.integers(1, 3)] * 3), ta=st.booleans(), tb=st.booleans())
def test_matmul_broadcasting_and_transposes(data, batch, dims, ta, tb):
    m, k, n = dims
    x = data.draw(_arr(batch.input_shapes[0] + ((k, m) if ta else (m, k))))
    y = data.draw(_arr(batch.input_shapes[1] + ((n, k) if tb else (k, n))))
    got = tf.matmul(x, y, transpose_a=ta, transpose_b=tb)
    want = np.matmul(np.swapaxes(x, -1, -2) if ta else x, np.swapaxes(y, -1, -2) if tb else y)
    assert got.shape == want.shape == batch.result_shape + (m, n)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    check_gradients(lambda a, b: tf.matmul(a, b, transpose_a=ta, transpose_b=tb), x, y, order=2)


# (equation, operand shapes); each label's size is drawn per example.
EQUATIONS = [
    ("ij,jk->ik", ["ij", "jk"]), ("ij->ji", ["ij"]), ("ii->", ["ii"]), ("ii->i", ["ii"]),
    ("bij,bjk->bik", ["bij", "bjk"]), ("i,j->ij", ["i", "j"]), ("ijk->kj", ["ijk"]),
    ("bxby->bxy", ["bxby"]), ("ij,ij->", ["ij", "ij"]), ("i,i,i->i", ["i", "i", "i"]),
    ("ij,jk,kl->il", ["ij", "jk", "kl"]), ("ab,bc", ["ab", "bc"]), ("ij,jk->", ["ij", "jk"]),
    ("...ij,...jk->...ik", ["Bij", "jk"]), ("i...,i->...", ["iB", "i"]),
]


@SWEEP
@given(data=st.data(), case=st.sampled_from(EQUATIONS))
def test_einsum_values_and_gradients(data, case):
    equation, specs = case
    size = {c: data.draw(st.integers(1, 3), label=c) for c in set("".join(specs)) - {"B"}}
    batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=2), label="...")
    shapes = [sum(((batch if c == "B" else (size[c],)) for c in spec), ()) for spec in specs]
    xs = [data.draw(_arr(s)) for s in shapes]
    got = tf.einsum(equation, *xs)
    want = np.einsum(equation, *xs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    check_gradients(lambda *ts: tf.einsum(equation, *ts) * 1.5, *xs, order=2)


def test_einsum_broadcasts_size_one_batch_dims():
    x, y = R.uniform(-1, 1, (2, 1, 3, 2)), R.uniform(-1, 1, (4, 2, 3))
    got = tf.einsum("...ij,...jk->...ik", x, y)
    np.testing.assert_allclose(got.numpy(), np.einsum("...ij,...jk->...ik", x, y), rtol=1e-12)
    check_gradients(lambda a, b: tf.einsum("...ij,...jk->...ik", a, b), x, y, order=2)


# -- values, dtypes, shapes -----------------------------------------------------------

def test_matmul_dtypes_and_python_lists():
    got = tf.matmul([[1.0, 2.0]], [[3.0], [4.0]])
    assert got.dtype == tf.float32 and got.shape == (1, 1) and got.numpy()[0, 0] == 11.0
    ints = tf.matmul(tf.constant([[1, 2], [3, 4]]), tf.constant([[1], [1]]))
    assert ints.dtype == tf.int32 and ints.numpy().tolist() == [[3], [7]]
    x = tf.constant(R.uniform(size=(2, 3)), tf.float64)
    assert (x @ tf.transpose(x)).dtype == tf.float64
    assert tf.linalg.matmul is tf.matmul


def test_matmul_adjoint_flags_match_transpose():
    a, b = R.uniform(size=(3, 2)), R.uniform(size=(4, 3))
    got = tf.matmul(a, b, adjoint_a=True, adjoint_b=True)
    np.testing.assert_allclose(got.numpy(), a.T @ b.T)
    with pytest.raises(ValueError):
        tf.matmul(a, b, transpose_a=True, adjoint_a=True)


def test_matvec_and_tensordot_match_numpy():
    a, v = R.uniform(size=(2, 3, 4)), R.uniform(size=(4,))
    np.testing.assert_allclose(tf.linalg.matvec(a, v).numpy(), a @ v)
    b = R.uniform(size=(4, 3, 5))
    for axes in (0, 1, [[1, 2], [1, 0]], ([2], [0]), [2, 0]):
        got = tf.tensordot(a, b, axes)
        np.testing.assert_allclose(got.numpy(), np.tensordot(a, b, axes), rtol=1e-12)
    check_gradients(lambda x, y: tf.tensordot(x, y, [[1, 2], [1, 0]]), a, b, order=2)


def test_solve_inv_det_cholesky_match_numpy():
    a = R.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
    b = R.uniform(-1, 1, (2, 3, 2))
    np.testing.assert_allclose(tf.linalg.solve(a, b).numpy(), np.linalg.solve(a, b), rtol=1e-12)
    np.testing.assert_allclose(tf.linalg.solve(a, b, adjoint=True).numpy(),
                               np.linalg.solve(np.swapaxes(a, -1, -2), b), rtol=1e-12)
    np.testing.assert_allclose(tf.linalg.inv(a).numpy(), np.linalg.inv(a), rtol=1e-12)
    det = tf.linalg.det(tf.constant(a, tf.float32))
    assert det.dtype == tf.float32 and det.shape == (2,)
    np.testing.assert_allclose(det.numpy(), np.linalg.det(a), rtol=1e-5)
    spd = a @ np.swapaxes(a, -1, -2)
    chol = tf.linalg.cholesky(spd).numpy()
    np.testing.assert_allclose(chol, np.linalg.cholesky(spd), rtol=1e-12)
    assert np.allclose(np.triu(chol[0], 1), 0)


def test_diag_part_trace_and_transpose():
    x = R.uniform(size=(2, 3, 4))
    np.testing.assert_allclose(tf.linalg.diag_part(x).numpy(), np.diagonal(x, axis1=-2, axis2=-1))
    np.testing.assert_allclose(tf.linalg.trace(x).numpy(), np.trace(x, axis1=-2, axis2=-1))
    assert tf.linalg.matrix_transpose(x).shape == (2, 4, 3)
    check_gradients(lambda t: tf.linalg.trace(t * t), x, order=2)
    with pytest.raises(ValueError):
        tf.linalg.matrix_transpose(tf.ones([3]))


@pytest.mark.parametrize("ord_, axis", [("euclidean", None), (2, 1), (1, 0), (np.inf, -1), (3, None),
                                        ("fro", (0, 1)), (1, (0, 1)), (np.inf, (1, 0))])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy(ord_, axis, keepdims):
    x = R.uniform(-2, 2, (3, 4))
    got = tf.norm(x, ord=ord_, axis=axis, keepdims=keepdims)
    np_ord = {"euclidean": None, "fro": "fro"}.get(ord_, ord_) if isinstance(ord_, str) else ord_
    if axis is None:
        want = np.linalg.norm(x.reshape(-1), ord=np_ord)
        want = np.reshape(want, (1, 1)) if keepdims else want
    else:
        want = np.linalg.norm(x, ord=np_ord, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    if ord_ in ("euclidean", 2, 3, "fro"):
        check_gradients(lambda t: tf.norm(t, ord=ord_, axis=axis, keepdims=keepdims), x, order=2)


def test_norm_gradient_at_zero_is_nan_as_in_tensorflow():
    x = tf.zeros([3])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.norm(x)
    assert np.isnan(tape.gradient(y, x).numpy()).all()


# -- gradient structure (None versus zeros) ------------------------------------------

def test_matmul_gradient_is_none_for_unconnected_second_order():
    x, y = tf.constant(R.uniform(size=(2, 3))), tf.constant(R.uniform(size=(3, 2)))
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with tf.GradientTape() as inner:
            inner.watch(x)
            z = tf.reduce_sum(tf.matmul(x, y))
        gx = inner.gradient(z, x)
    assert outer.gradient(gx, x) is None  # gx = ones @ y^T does not depend on x
    np.testing.assert_allclose(outer.gradient(gx, y).numpy(), np.full((3, 2), 2.0))


class _Op:
    """A stand-in for the OpView a rule receives, with chosen ``wants``."""

    def __init__(self, inputs, attrs, wants):
        self.inputs, self.attrs, self.wants = inputs, attrs, wants
        self.in_avals = tuple(t.aval for t in inputs)


@pytest.mark.parametrize("name, attrs, shapes", [
    ("MatMul", {"transpose_a": False, "transpose_b": True}, [(2, 3), (4, 3)]),
    ("Einsum", {"equation": "ij,j->i"}, [(2, 3), (3,)]),
])
def test_rules_skip_inputs_that_need_no_gradient(name, attrs, shapes):
    from tapeflow.runtime.dispatch import apply
    from tapeflow.runtime.registry import GRADS
    xs = [tf.constant(R.uniform(size=s)) for s in shapes]
    g = tf.ones_like(apply(name, xs, attrs))
    for wants in ((False, True), (True, False)):
        grads = GRADS[name].fn(_Op(xs, attrs, wants), g)
        assert [gr is None for gr in grads] == [not w for w in wants]


def test_unary_einsum_gradient_does_not_read_its_input():
    x = tf.constant(R.uniform(size=(3, 3)))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            t = tf.linalg.trace(x)
        g = inner.gradient(t, x)
    np.testing.assert_allclose(g.numpy(), np.eye(3))
    assert outer.gradient(g, x) is None


# -- errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn, op, shapes", [
    (lambda: tf.matmul(tf.ones([2, 3]), tf.ones([4, 5])), "MatMul", ["[2, 3]", "[4, 5]"]),
    (lambda: tf.matmul(tf.ones([2, 2, 3]), tf.ones([3, 3, 5])), "MatMul", ["[2, 2, 3]", "[3, 3, 5]"]),
    (lambda: tf.matmul(tf.ones([3]), tf.ones([3, 5])), "MatMul", ["[3]"]),
    (lambda: tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([4, 5])), "Einsum", ["[2, 3]", "[4, 5]"]),
    (lambda: tf.einsum("ijk->i", tf.ones([2, 3])), "Einsum", ["[2, 3]"]),
    (lambda: tf.linalg.solve(tf.ones([2, 3]), tf.ones([2, 1])), "MatrixSolve", ["[2, 3]"]),
    (lambda: tf.linalg.solve(tf.eye(3), tf.ones([2, 1])), "MatrixSolve", ["[3, 3]", "[2, 1]"]),
    (lambda: tf.linalg.det(tf.ones([2, 3])), "MatrixDeterminant", ["[2, 3]"]),
])
def test_bad_shapes_name_op_and_shapes(fn, op, shapes):
    with pytest.raises(InvalidArgumentError) as err:
        fn()
    msg = str(err.value)
    assert msg.startswith(op) and all(s in msg for s in shapes), msg


def test_matmul_dtype_mismatch_and_numerical_failures():
    with pytest.raises(InvalidArgumentError, match="MatMul"):
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.float64))
    with pytest.raises(InvalidArgumentError, match="MatrixInverse"):
        tf.linalg.inv(tf.zeros([2, 2]))
    # a matrix that is not positive definite: NaN, no error (TF 2.21; test_linalg_gp.py)
    assert np.isnan(tf.linalg.cholesky(-tf.eye(2)).numpy()[1, 1])
    with pytest.raises(InvalidArgumentError, match="Cholesky"):
        tf.linalg.cholesky(tf.ones([2, 2], tf.int32))
