"""GradientTape and tapeflow.function together, with TensorFlow's rules (DESIGN.md,
"TensorFlow facts the seeds do not show").

*Through* a function (the compiled call is ONE op on an eager tape): an input that
reaches any output gets a tensor, zeros where the requested target does not depend
on it; an input reaching no output (unused, or only through stop_gradient) gets
None, and so do integer inputs. Second order through: 0.0 where eager gives None
for sources connected at first order; unconnected sources stay None.
*Inside* a function, a tape behaves exactly as eagerly.
"""
import numpy as np
import pytest

import tapeflow as tf


def through(body):
    return tf.function(body)


def val(g):
    return None if g is None else g.numpy().tolist()


# -- first order through a function ---------------------------------------------------------

def _two_outputs(v, x):
    return [tf.sin(v) * 2.0, x * x]


def test_input_reaching_another_output_gets_zeros_through_none_eagerly():
    v = tf.Variable([1.0, 2.0])
    x = tf.constant([3.0, 4.0, 5.0])
    results = {}
    for name, fn in (("eager", _two_outputs), ("through", through(_two_outputs))):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a, b = fn(v, x)
        results[name] = [tape.gradient(a, x), tape.gradient(a, v),
                         tape.gradient(b, v), tape.gradient(b, x)]
    e, t = results["eager"], results["through"]
    assert e[0] is None and e[2] is None
    assert t[0].shape == (3,) and t[0].dtype == tf.float32 and val(t[0]) == [0.0, 0.0, 0.0]
    assert t[2].shape == (2,) and t[2].dtype == tf.float32 and val(t[2]) == [0.0, 0.0]
    want_v = 2 * np.cos(np.array([1.0, 2.0], np.float32))
    for r in (e, t):
        np.testing.assert_allclose(r[1].numpy(), want_v, rtol=1e-6)
        assert val(r[3]) == [6.0, 8.0, 10.0]


def test_scalar_first_output_gradient_to_x_is_zero_through():
    """The DESIGN.md example: f returns [g(v), h(x)]; tape.gradient(first_output, x)."""
    v, x = tf.Variable(2.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = through(_two_outputs)(v, x)
    assert val(tape.gradient(out[0], x)) == 0.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = _two_outputs(v, x)
    assert tape.gradient(out[0], x) is None


def test_list_of_targets_through_equals_eager():
    v = tf.Variable([1.0, 2.0])
    x = tf.constant([3.0, 4.0, 5.0])
    grads = []
    for fn in (_two_outputs, through(_two_outputs)):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = fn(v, x)
        grads.append(tape.gradient(out, {"v": v, "x": x}))
    for k in ("v", "x"):
        np.testing.assert_allclose(grads[0][k].numpy(), grads[1][k].numpy(), rtol=1e-6)


def test_unused_input_gets_none_through():
    x, u = tf.constant(2.0), tf.constant(5.0)
    w = tf.Variable(1.0)
    body = lambda x, u, w: x * 3.0  # noqa: E731
    for fn in (body, through(body)):
        with tf.GradientTape() as tape:
            tape.watch([x, u])
            y = fn(x, u, w)
        gx, gu, gw = tape.gradient(y, [x, u, w])
        assert float(gx) == 3.0 and gu is None and gw is None


def test_input_reaching_outputs_only_through_stop_gradient_gets_none():
    x, s = tf.constant(2.0), tf.constant(4.0)

    def body(x, s):
        return [x * tf.stop_gradient(s), tf.stop_gradient(s * s) + 1.0]

    for fn in (body, through(body)):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, s])
            a, b = fn(x, s)
        assert float(tape.gradient(a, x)) == 4.0
        assert tape.gradient(a, s) is None and tape.gradient(b, s) is None
        assert float(b) == 17.0


def test_integer_inputs_and_outputs_get_none():
    x, n = tf.constant(2.0), tf.constant(3)

    def body(x, n):
        return x * tf.cast(n, tf.float32), n * 2

    for fn in (body, through(body)):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            with pytest.warns(UserWarning):  # watching an int32 tensor
                tape.watch(n)
            y, m = fn(x, n)
        assert int(m) == 6 and m.dtype == tf.int32
        gx, gn = tape.gradient(y, [x, n])
        assert float(gx) == 3.0 and gn is None
        assert tape.gradient(m, n) is None


def test_unconnected_gradients_zero_through():
    x, u = tf.constant([1.0, 2.0]), tf.constant([[5.0]])
    body = lambda x, u: x * 2.0  # noqa: E731
    for fn in (body, through(body)):
        with tf.GradientTape() as tape:
            tape.watch([x, u])
            y = fn(x, u)
        gx, gu = tape.gradient(y, [x, u], unconnected_gradients=tf.UnconnectedGradients.ZERO)
        assert val(gx) == [2.0, 2.0] and val(gu) == [[0.0]] and gu.dtype == tf.float32


def test_output_gradients_through():
    x = tf.constant(3.0)
    fn = through(lambda x: tf.stack([x, x * x, tf.sin(x)]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x, output_gradients=tf.constant([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(float(g), 1.0 + 60.0 + 100.0 * np.cos(3.0), rtol=1e-6)


def test_captured_variable_and_captured_tensor_get_gradients():
    w = tf.Variable([1.0, -1.0])
    c = tf.constant(3.0)
    fn = through(lambda x: tf.reduce_sum(w * x * c))
    x = tf.constant([2.0, 5.0])
    with tf.GradientTape() as tape:
        tape.watch(c)
        y = fn(x)
    gw, gc, gx = tape.gradient(y, [w, c, x])
    assert val(gw) == [6.0, 15.0] and float(gc) == -3.0 and gx is None
    assert [v.name for v in tape.watched_variables()] == [w.name]


def test_non_trainable_variable_needs_watching_through():
    w = tf.Variable(2.0, trainable=False)
    fn = through(lambda x: w * x)
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = fn(x)
    assert tape.gradient(y, w) is None
    with tf.GradientTape() as tape:
        tape.watch(w)
        y = fn(x)
    assert float(tape.gradient(y, w)) == 3.0


def test_watch_accessed_variables_false_through():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    fn = through(lambda: a * b)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(b)
        y = fn()
    ga, gb = tape.gradient(y, [a, b])
    assert ga is None and float(gb) == 2.0


def test_variable_argument_gets_gradient_through():
    v = tf.Variable([1.0, 2.0])
    fn = through(lambda v, x: tf.reduce_sum(v * v * x))
    with tf.GradientTape() as tape:
        y = fn(v, tf.constant(3.0))
    assert val(tape.gradient(y, v)) == [6.0, 12.0]


def test_chained_calls_and_identity_outputs():
    sq = through(lambda a: a * a)
    ident = through(lambda a: (a, a))
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        p, q = ident(x)
        y = sq(sq(p)) + 3.0 * q
    assert float(tape.gradient(y, x)) == 4 * 8.0 + 3.0


def test_float64_through():
    x = tf.constant([0.5, 1.0], dtype=tf.float64)
    fn = through(lambda x: tf.exp(x) * x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x)
    assert g.dtype == tf.float64
    np.testing.assert_allclose(g.numpy(), np.exp([0.5, 1.0]) * (1 + np.array([0.5, 1.0])), rtol=1e-12)


def test_non_persistent_eager_tape_through_a_function_raises_on_second_gradient():
    x = tf.constant(2.0)
    fn = through(lambda x: x * x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    assert float(tape.gradient(y, x)) == 4.0
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


# -- second order through a function --------------------------------------------------------

def _second_order(fn, sources):
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            z = fn(*sources)
        first = inner.gradient(z, sources)
    second = [[None if g is None else outer.gradient(g, s) for s in sources] for g in first]
    return first, second


def test_second_order_product_zero_through_none_eagerly():
    w1, w2 = tf.Variable(5.0), tf.Variable(3.0)
    body = lambda w1, w2: w1 * w2  # noqa: E731
    first, second = _second_order(body, [w1, w2])
    assert [float(g) for g in first] == [3.0, 5.0]
    assert second[0][0] is None and float(second[0][1]) == 1.0
    assert float(second[1][0]) == 1.0 and second[1][1] is None
    first, second = _second_order(through(body), [w1, w2])
    assert [float(g) for g in first] == [3.0, 5.0]
    assert [[float(g) for g in row] for row in second] == [[0.0, 1.0], [1.0, 0.0]]


def test_second_order_square_plus_linear():
    w1, w2 = tf.Variable(5.0), tf.Variable(3.0)
    body = lambda w1, w2: w1 * w1 + w2  # noqa: E731
    first, second = _second_order(body, [w1, w2])
    assert [float(g) for g in first] == [10.0, 1.0]
    assert float(second[0][0]) == 2.0 and second[0][1] is None
    assert second[1][0] is None and second[1][1] is None  # d(dz/dw2)/dw2 eagerly: None
    first, second = _second_order(through(body), [w1, w2])
    assert [float(g) for g in first] == [10.0, 1.0]
    assert float(second[0][0]) == 2.0 and float(second[0][1]) == 0.0
    assert float(second[1][1]) == 0.0  # through a function: 0.0
    assert float(second[1][0]) == 0.0


def test_source_unconnected_at_first_order_stays_none_through():
    w1, w2, w3 = tf.Variable(5.0), tf.Variable(3.0), tf.Variable(7.0)
    body = lambda w1, w2, w3: w1 * w1 + w2  # noqa: E731
    for fn in (body, through(body)):
        first, second = _second_order(fn, [w1, w2, w3])
        assert first[2] is None
        assert second[0][2] is None and second[1][2] is None
        assert float(second[0][0]) == 2.0


def test_hessian_by_outer_jacobian_through():
    x = tf.Variable([0.5, -1.0, 2.0])

    def body(x):
        return tf.reduce_sum(tf.sin(x) * x[::-1]) + tf.reduce_prod(x)

    hs = []
    for fn in (body, through(body)):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = fn(x)
            g = inner.gradient(y, x)
        hs.append(outer.jacobian(g, x))
    assert hs[0].shape == hs[1].shape == (3, 3)
    np.testing.assert_allclose(hs[1].numpy(), hs[0].numpy(), rtol=1e-5, atol=1e-6)
    # by hand: d2/dxi dxj of sum_i sin(x_i) x_{2-i} + x0 x1 x2
    a = np.array([0.5, -1.0, 2.0])
    h = np.zeros((3, 3))
    for i in range(3):  # i = 1 is sin(x1) x1: -sin(x1) x1 + 2 cos(x1) on the diagonal
        h[i, i] += -np.sin(a[i]) * a[2 - i]
        h[i, 2 - i] += np.cos(a[i])
        h[2 - i, i] += np.cos(a[i])
    h += np.array([[0, a[2], a[1]], [a[2], 0, a[0]], [a[1], a[0], 0]])
    np.testing.assert_allclose(hs[1].numpy(), h, rtol=1e-5, atol=1e-6)


# -- tapes inside a function: exactly as eagerly --------------------------------------------

def test_tape_inside_function_is_like_eager():
    v, x = tf.Variable(2.0), tf.constant(3.0)

    def run(v, x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a, b = _two_outputs(v, x)
        return tape.gradient(a, x), tape.gradient(a, v), tape.gradient(b, v), tape.gradient(b, x)

    eager = run(v, x)
    inside = tf.function(run)(v, x)
    for e, i in zip(eager, inside, strict=True):
        assert (e is None) == (i is None)
        if e is not None:
            np.testing.assert_allclose(i.numpy(), e.numpy(), rtol=1e-6)
    assert inside[0] is None and inside[2] is None and float(inside[3]) == 6.0


def test_second_order_inside_function_is_like_eager():
    w1, w2 = tf.Variable(5.0), tf.Variable(3.0)

    def run(w1, w2):
        return _second_order(lambda a, b: a * b, [w1, w2])[1]

    second = tf.function(run)(w1, w2)
    assert second[0][0] is None and float(second[0][1]) == 1.0
    assert float(second[1][0]) == 1.0 and second[1][1] is None


def test_unconnected_and_stop_gradient_inside_function():
    @tf.function
    def run(x, u):
        with tf.GradientTape() as tape:
            tape.watch([x, u])
            y = x * 2.0 + tf.stop_gradient(u)
        return tape.gradient(y, [x, u])

    gx, gu = run(tf.constant(1.0), tf.constant(2.0))
    assert float(gx) == 2.0 and gu is None


def test_non_persistent_tape_inside_function_raises_on_second_gradient():
    @tf.function
    def twice(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
        return tape.gradient(y, x)

    with pytest.raises(RuntimeError):
        twice(tf.constant(2.0))

    @tf.function
    def jac_after_grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
        return tape.jacobian(y, x)

    with pytest.raises(RuntimeError):
        jac_after_grad(tf.constant([1.0, 2.0]))


def test_persistent_tape_inside_function_allows_several_gradients():
    @tf.function
    def run(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        return tape.gradient(z, x), tape.gradient(y, x)

    gz, gy = run(tf.constant([1.0, 3.0]))
    assert val(gz) == [4.0, 108.0] and val(gy) == [2.0, 6.0]


# -- higher order through compiled code -----------------------------------------------------

X0 = 1.5  # x**4: 5.0625, 4x^3 = 13.5, 12x^2 = 27, 24x = 36


def _three_derivatives(fn, x):
    """``fn(x)`` and its first three derivatives by three nested tapes (eager, or traced)."""
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = fn(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    return y, d1, d2, t3.gradient(d2, x)


def _third_order(fn, x):
    return [float(v) for v in _three_derivatives(fn, x)]


def test_third_order_of_x4_through_a_function():
    x = tf.constant(X0)
    body = lambda x: x ** 4  # noqa: E731
    assert _third_order(body, x) == [5.0625, 13.5, 27.0, 36.0]
    assert _third_order(through(body), x) == [5.0625, 13.5, 27.0, 36.0]


def test_third_order_of_x4_when_first_gradient_is_compiled():
    """'Mixed': the inner tape and first gradient in a function, the outer tapes eager."""
    @tf.function
    def d1(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x ** 4
        return t.gradient(y, x)

    x = tf.constant(X0)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            g1 = d1(x)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    assert [float(g1), float(g2), float(g3)] == [13.5, 27.0, 36.0]


def test_third_order_of_x4_inside_a_function():
    x = tf.constant(X0)
    got = tf.function(_inside3)(x)
    assert [float(g) for g in got] == [13.5, 27.0, 36.0]


def _inside3(x):
    return _three_derivatives(lambda x: x ** 4, x)[1:]


def test_third_order_of_x4_vector_through():
    xs = np.array([-1.0, 0.5, 2.0], np.float32)
    x = tf.constant(xs)
    d3 = _three_derivatives(through(lambda x: tf.reduce_sum(x ** 4)), x)[3]
    np.testing.assert_allclose(d3.numpy(), 24 * xs, rtol=1e-6)


# -- jacobian and batch_jacobian ------------------------------------------------------------

XB = np.arange(6, dtype=np.float32).reshape(3, 2) / 6 - 0.3
W = np.array([[1.0, -1.0, 0.5], [0.3, 0.2, -0.4]], np.float32)


def _net(x, w):
    return tf.tanh(x @ w) * 2.0


def _jacobians(fn, x, w):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = fn(x, w)
    return tape.jacobian(y, x), tape.jacobian(y, w), tape.batch_jacobian(y, x)


def _eager_jacobians():
    x, w = tf.constant(XB), tf.Variable(W)
    return _jacobians(_net, x, w)


def _check_jacobians(got):
    want = _eager_jacobians()
    shapes = [(3, 3, 3, 2), (3, 3, 2, 3), (3, 3, 2)]
    for g, e, s in zip(got, want, shapes, strict=True):
        assert g.shape == e.shape == s
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)
    # by hand: dy[b,o]/dx[b,i] = 2 (1 - tanh^2) W[i,o]
    t = np.tanh(XB @ W)
    jb = 2 * (1 - t ** 2)[:, :, None] * W.T[None]
    np.testing.assert_allclose(got[2].numpy(), jb, rtol=1e-5, atol=1e-7)


def test_jacobian_and_batch_jacobian_through_a_function():
    _check_jacobians(_jacobians(through(_net), tf.constant(XB), tf.Variable(W)))


def test_jacobian_and_batch_jacobian_inside_a_function():
    w = tf.Variable(W)
    _check_jacobians(tf.function(lambda x: _jacobians(_net, x, w))(tf.constant(XB)))


def test_jacobian_of_unconnected_target_is_zeros_through_none_eagerly():
    v = tf.Variable([1.0, 2.0])
    x = tf.constant([3.0, 4.0, 5.0])
    for name, fn in (("eager", _two_outputs), ("through", through(_two_outputs))):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a, b = fn(v, x)
        j = tape.jacobian(a, x)
        if name == "eager":
            assert j is None
        else:
            assert j.shape == (2, 3) and not j.numpy().any()
        np.testing.assert_allclose(tape.jacobian(b, x).numpy(), np.diag([6.0, 8.0, 10.0]))
