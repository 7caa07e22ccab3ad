"""``tf.test.compute_gradient``: TensorFlow's Jacobian check, theoretical (the tape, one
backward pass per output element) against numerical (central differences), as its
``gradient_checker_v2`` computes them, so its tests' tolerances carry over."""
import numpy as np

from ..autodiff.tape import GradientTape
from ..runtime.tensor import constant, convert_to_tensor


def _jacobian_rows(f, xs, param, y_shape, y_dtype):
    """TensorFlow's theoretical Jacobian of ``f`` w.r.t. ``xs[param]``: one backward pass per
    element of y (a one-hot cotangent), rows y, columns x; a None gradient is a zero row."""
    x = xs[param]
    y_size, x_size = int(np.prod(y_shape)), int(np.prod(x.shape))
    jac = np.zeros((y_size, x_size), dtype=x.dtype)
    dy = np.zeros(y_shape, dtype=y_dtype.np)
    for row in range(y_size):
        dy.reshape(-1)[row] = 1
        ts = [constant(v) for v in xs]
        with GradientTape() as tape:
            tape.watch(ts[param])
            y = f(*ts)
        g = tape.gradient(y, ts[param], output_gradients=constant(dy))
        if g is not None:
            jac[row, :] = np.asarray(convert_to_tensor(g)).reshape(-1)
        dy.reshape(-1)[row] = 0
    return jac


def _jacobian_numeric(f, xs, param, y_size, y_dtype, delta):
    """Central differences, TensorFlow's way: ``x`` moved by ``delta`` in its own dtype, the
    difference divided by ``2 * delta`` in y's dtype."""
    arrays = [np.array(v) for v in xs]
    x = arrays[param].reshape(-1)
    scale = np.asarray(2 * delta, dtype=y_dtype.np)[()]
    jac = np.zeros((y_size, x.size), dtype=x.dtype)
    for col in range(x.size):
        original = x[col]
        x[col] += delta
        y_pos = np.asarray(f(*[constant(a) for a in arrays]))
        x[col] = original
        x[col] -= delta
        y_neg = np.asarray(f(*[constant(a) for a in arrays]))
        x[col] = original
        jac[:, col] = ((y_pos - y_neg) / scale).reshape(-1)
    return jac


def compute_gradient(f, x, delta=None) -> tuple:
    """TensorFlow's ``tf.test.compute_gradient``: ``(theoretical, numerical)``, each a tuple
    with one 2-d array per argument, of ``y.size`` rows and ``x[i].size`` columns.

    The theoretical Jacobian comes from the tape (one backward pass per element of
    ``y = f(*x)``), the numerical one from central differences with step ``delta``
    (``1/1024`` by default), both in the arguments' dtype.

    >>> th, nu = tf.test.compute_gradient(lambda x: x * x, [constant([1.0, 2.0])])
    >>> th
    (array([[2., 0.],
           [0., 4.]], dtype=float32),)
    >>> bool(np.allclose(th[0], nu[0], atol=1e-2))
    True
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError(f"`x` must be a list or tuple of values convertible to a Tensor "
                         f"(arguments to `f`), not a {type(x)}")
    delta = 1.0 / 1024 if delta is None else delta
    xs = [np.array(convert_to_tensor(v)) for v in x]
    y = convert_to_tensor(f(*[constant(v) for v in xs]))
    allowed = ("float16", "float32", "float64")
    for i, v in enumerate(xs):
        if v.dtype.name not in allowed:
            raise AssertionError(f"Cannot compute gradient for unsupported type {v.dtype.name} "
                                 f"of argument {i}")
    if y.dtype.name not in allowed:
        raise AssertionError(f"Cannot compute gradient for unsupported type {y.dtype.name} of y")
    y_shape = tuple(y.shape)
    pairs = [(_jacobian_rows(f, xs, i, y_shape, y.dtype),
              _jacobian_numeric(f, xs, i, int(np.prod(y_shape)), y.dtype, delta))
             for i in range(len(xs))]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
