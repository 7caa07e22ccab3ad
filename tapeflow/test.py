"""``tf.test.compute_gradient``: theoretical and numerical Jacobians, as TensorFlow's
``gradient_checker_v2`` computes them (the rest of ``tf.test`` is TF's unittest harness)."""
from __future__ import annotations

import numpy as np

from .autodiff.tape import GradientTape
from .runtime.tensor import convert_to_tensor


def _flat_outputs(f, xs):
    y = convert_to_tensor(f(*xs))
    return y


def compute_gradient(f, x, delta=None) -> tuple:
    """(theoretical, numerical): per argument in ``x``, the Jacobian of ``f`` as a 2-D array of
    ``y.size`` rows and ``x_i.size`` columns, from the tape (one backward pass per entry of y,
    with a one-hot upstream gradient) and from central differences of step ``delta`` (default
    1/1024, exactly representable, as TF's).

    >>> theoretical, numerical = tf.test.compute_gradient(lambda x: x * x, [tf.constant([3.0])])
    >>> theoretical[0].tolist(), numerical[0].round(3).tolist()
    ([[6.0]], [[6.0]])
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError("`x` must be a list or tuple of values convertible to a Tensor "
                         f"(arguments to `f`), not a {type(x)}")
    xs = [convert_to_tensor(v) for v in x]
    delta = 1.0 / 1024 if delta is None else float(delta)
    with GradientTape(persistent=True) as tape:
        for v in xs:
            tape.watch(v)
        y = _flat_outputs(f, xs)
    y_size = int(np.prod(y.shape, dtype=np.int64))
    theoretical = [np.zeros((y_size, int(np.prod(v.shape, dtype=np.int64))), v.dtype.np) for v in xs]
    for row in range(y_size):
        onehot = np.zeros(y_size, y.dtype.np)
        onehot[row] = 1
        grads = tape.gradient(y, xs, output_gradients=convert_to_tensor(onehot.reshape(y.shape)))
        for jac, g in zip(theoretical, grads):
            if g is not None:
                jac[row] = np.asarray(convert_to_tensor(g)).ravel()
    del tape
    numerical = []
    for i, v in enumerate(xs):
        base = np.array(v.numpy(), copy=True)
        jac = np.zeros((y_size, base.size), base.dtype)
        flat = base.reshape(-1)
        for col in range(base.size):
            values = []
            for sign in (1, -1):
                moved = flat.copy()
                moved[col] = moved[col] + delta if sign > 0 else moved[col] - delta
                args = list(xs)
                args[i] = convert_to_tensor(moved.reshape(base.shape))
                values.append(np.asarray(_flat_outputs(f, args)).reshape(-1))
            scale = np.asarray(2 * delta, dtype=y.dtype.np)[()]
            jac[:, col] = (values[0] - values[1]) / scale
        numerical.append(jac)
    return tuple(theoretical), tuple(numerical)


__all__ = ["compute_gradient"]
