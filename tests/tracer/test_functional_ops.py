"""tf.scan / tf.map_fn / tf.foldl / tf.foldr: values and first/second-order gradients.

Every expected value is TensorFlow 2.21's (asked from a TF install, float64). Each program
runs eagerly and inside one shared ``tf.function`` (one While per op there, whose gradient
rules give the second order); TensorFlow's own tests that use ``foldl`` (a jacobian) and
``map_fn`` (a forward-over-back Hessian) are repeated with the same programs.
"""
import functools

import numpy as np
import pytest

import tapeflow as tf


def programs(x, w):
    f64 = tf.float64
    out = {}
    out["scan"] = tf.scan(lambda a, e: a * w + tf.sin(e), x, initializer=tf.constant(0.3, f64))
    out["scan_rev"] = tf.scan(lambda a, e: a * w + tf.sin(e), x,
                              initializer=tf.constant(0.3, f64), reverse=True)
    out["scan_noinit"] = tf.scan(lambda a, e: a * e + w, x)
    nested = tf.scan(lambda a, e: (a[0] + e[0] * e[1], a[1] * e[1]), (x, x * w),
                     initializer=(tf.constant(0., f64), tf.constant(1., f64)))
    out["scan_nested"] = nested[0] + 2.0 * nested[1]
    out["foldl"] = tf.foldl(lambda a, e: a * w + e * e, x)
    out["foldr"] = tf.foldr(lambda a, e: a * w + e * e, x)
    out["foldl_init"] = tf.foldl(lambda a, e: a * tf.cos(e) + w, x,
                                 initializer=tf.constant(1.0, f64))
    out["foldr_init"] = tf.foldr(lambda a, e: a * tf.cos(e) + w, x,
                                 initializer=tf.constant(1.0, f64))
    out["map"] = tf.map_fn(lambda e: e * e * w, x)
    out["map_sig"] = tf.map_fn(lambda e: (e * w, tf.cast(e > 0, tf.int32)), x,
                               fn_output_signature=(tf.float64, tf.int32))[0]
    out["map_nested"] = tf.map_fn(lambda e: e[0] * tf.exp(e[1] * w), (x, x * 0.5),
                                  fn_output_signature=tf.float64)
    return out


def values_and_grads(x, w):
    """Each program's value, its gradient (of a weighted sum) and a second-order gradient."""
    with tf.GradientTape(persistent=True) as t2:
        t2.watch([x, w])
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, w])
            out = programs(x, w)
            ys = {k: tf.reduce_sum(v * tf.cast(tf.range(1, tf.size(v) + 1), tf.float64))
                  for k, v in out.items()}
        gs = {k: t.gradient(ys[k], [x, w]) for k in out}
        ss = {k: tf.reduce_sum(gs[k][0] * gs[k][0]) + gs[k][1] for k in out}
    hs = {k: t2.gradient(ss[k], [x, w]) for k in out}
    return {k: (out[k], gs[k][0], gs[k][1], hs[k][0], hs[k][1]) for k in out}


# TF 2.21's (value, d/dx, d/dw, second-order d/dx, d/dw), at x, w below
TF = {
    'scan' : ( [0.689425538604203, -0.35887310778495446, 0.6580862513762136, 1.458155362567404] , [4.600287789429333, 3.274231973560927, -2.4136516519734257, 0.2829488066708116] , 6.3013997442935885 , [-12.521216962551105, 38.03927481424161, 23.794248595970135, -2.2579201289578754] , 152.2358112875043 ),
    'scan_rev' : ( [0.75012236878845, 0.38670975740606717, 1.7545439174485198, 1.2074949866040545] , [0.8775825618903728, 1.4588162258439774, -2.034958030715526, 0.5250822479793587] , 13.255528819010898 , [-0.8414709848078965, 7.169080547427361, 16.68183770379243, -7.261584088461972] , 23.957035467181587 ),
    'scan_noinit' : ( [0.5, 0.19999999999999996, 1.0999999999999999, 2.3499999999999996] , [-19.0, 10.0, 1.7999999999999996, 4.3999999999999995] , 33.0 , [297.20000000000005, -708.6, 448.04, 398.88] , 137.99999999999997 ),
    'scan_nested' : ( [0.875, 0.38500000000000006, 2.989, 4.5297] , [-3.438399999999996, -6.680800000000001, 17.130399999999998, 6.4792] , 21.416000000000007 , [-517.6250982399997, -130.18150271999997, 339.6366758399999, 41.43992127999997] , 608.6828959999998 ),
    'foldl' : ( 5.7115 , [0.3429999999999999, -0.9799999999999999, 2.8, 3.0] , 6.135000000000001 , [1.4699999999999998, -4.720799999999999, 11.84, 12.0] , 32.99642 ),
    'foldr' : ( 3.4245 , [1.0, -1.4, 1.9599999999999997, 0.3429999999999999] , 8.805 , [4.0, -5.92, 9.441599999999998, 1.4699999999999998] , 42.86041999999999 ),
    'foldl_init' : ( 0.7038187841089526 , [0.007625221411917876, -0.03907740495003194, -0.09985032831439898, -0.053850278407926534] , 1.0253952261125816 , [0.007538093561311082, -0.06884681295057596, -0.25291816722964466, -0.6835890518063582] , 0.060289587799833046 ),
    'foldr_init' : ( 1.4941377420247932 , [-0.43383942574707035, 0.2800685512320613, -0.3323051637514745, 0.19682584523889998] , 2.154422308849497 , [-0.1902901916793055, 0.9278077583527634, -0.8103369308878023, -0.01533417875242692] , 1.0752663710770218 ),
    'map' : ( [0.175, 0.7, 2.8, 1.575] , [0.7, -2.8, 8.399999999999999, 8.399999999999999] , 23.25 , [2.96, -19.68, 82.55999999999997, 106.07999999999998] , 426.99999999999994 ),
    'map_sig' : ( [0.35, -0.7, 1.4, 1.0499999999999998] , [0.7, 1.4, 2.0999999999999996, 2.8] , 10.5 , [1.0, 2.0, 3.0, 4.0] , 42.0 ),
    'map_nested' : ( [0.595623108306179, -0.7046880897187134, 4.027505414940953, 2.535688272568637] , [1.3997143045195206, 0.9160945166343275, 10.270138808099428, 10.311798975112456] , 20.543174929324028 , [3.1863632829945194, 0.3285103192497255, 133.5756143717583, 136.04714554518165] , 616.2860978926979 ),
}

X = np.array([0.5, -1.0, 2.0, 1.5])
W = 0.7


@pytest.fixture(scope="module")
def eager():
    return values_and_grads(tf.constant(X), tf.constant(W, tf.float64))


@pytest.fixture(scope="module")
def traced():
    # the interpreter runs the traced program: the Numba program of this function takes a
    # minute to compile (see test_recurrent.py for compiled == eager of loops)
    return tf.function(values_and_grads, jit_compile=False)(tf.constant(X),
                                                            tf.constant(W, tf.float64))


@pytest.mark.parametrize("name", sorted(TF))
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_values_and_gradients_match_tensorflow(name, mode, eager, traced):
    got = (eager if mode == "eager" else traced)[name]
    for g, want in zip(got, TF[name], strict=True):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-10, atol=1e-12)


def test_function_builds_while_loops():
    graph = tf.function(programs).get_concrete_function(
        tf.TensorSpec([4], tf.float64), tf.TensorSpec([], tf.float64)).graph
    ops = [op.type for op in graph.get_operations()]
    assert ops.count("While") == 11        # one loop per program, no per-row Python


def test_unknown_length_inside_function():
    f = tf.function(lambda x: (tf.scan(lambda a, e: a + e, x), tf.map_fn(tf.square, x),
                               tf.foldr(lambda a, e: a - e, x)),
                    input_signature=[tf.TensorSpec([None], tf.float32)], jit_compile=False)
    for n in (1, 3, 5):
        x = np.arange(1, n + 1, dtype=np.float32)
        s, m, r = f(tf.constant(x))
        np.testing.assert_array_equal(s.numpy(), np.cumsum(x))
        np.testing.assert_array_equal(m.numpy(), x * x)
        np.testing.assert_array_equal(r.numpy(), x[-1] - x[:-1].sum())


def test_docstring_and_structure_cases():
    assert int(tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))) == 123
    assert int(tf.foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))) == 321
    # TF 2.21: scan over a dict of elems with a dict initializer
    out = tf.scan(lambda a, e: {"s": a["s"] + e["u"] * e["v"]},
                  {"u": tf.constant([1., 2., 3.]), "v": tf.constant([4., 5., 6.])},
                  initializer={"s": tf.constant(0.)})
    np.testing.assert_array_equal(out["s"].numpy(), [4., 14., 32.])
    # a TensorSpec signature fixes the element shape
    m = tf.map_fn(lambda r: tf.reduce_sum(r), tf.ones([3, 2]),
                  fn_output_signature=tf.TensorSpec([], tf.float32))
    np.testing.assert_array_equal(m.numpy(), [2., 2., 2.])
    # the older dtype= argument
    m = tf.map_fn(lambda r: tf.cast(r, tf.int32), tf.constant([1.5, 2.5]), dtype=tf.int32)
    np.testing.assert_array_equal(m.numpy(), [1, 2])


def test_errors():
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tf.map_fn(tf.square, tf.constant(1.0))
    with pytest.raises(ValueError, match="same leading dimension"):
        tf.map_fn(lambda e: e[0], (tf.ones([2]), tf.ones([3])))
    with pytest.raises(TypeError, match="same nested structure"):
        tf.scan(lambda a, e: (a, a), tf.ones([2]))
    with pytest.raises(TypeError, match="fn_output_signature"):
        tf.map_fn(lambda e: tf.cast(e, tf.int32), tf.ones([2]))


# -- TensorFlow's own tests that use foldl and map_fn -------------------------------------

@pytest.mark.parametrize("use_pfor", [True, False])
def test_tf_backprop_jacobian_through_foldl(use_pfor):
    """backprop_test.py: jacobian of foldl(a + b) over zeros([3]) is ones([3])."""
    x = tf.zeros([3])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        result = functools.partial(tf.foldl, lambda a, b: a + b)(x)
    np.testing.assert_array_equal(
        tape.jacobian(result, x, experimental_use_pfor=use_pfor).numpy(), [1., 1., 1.])


def _hvp(f, primals, tangents):
    with tf.autodiff.ForwardAccumulator(primals, tangents) as acc:
        with tf.GradientTape() as tape:
            tape.watch(primals)
            f_out = f(*primals)
        f_out.shape.assert_is_compatible_with([])
        return acc.jvp(tape.gradient(f_out, primals))


def _forward_over_back_hessian(f, params, use_pfor, dtype=None):
    """forwardprop_test.py's: one HVP per one-hot tangent, looped with map_fn."""
    sizes = [tf.size(p) for p in params]
    total = tf.add_n(sizes)

    def wrapper(index):
        parts = tf.split(tf.one_hot(index, total), sizes)
        return _hvp(f, params, [tf.reshape(v, tf.shape(p)) for p, v in zip(params, parts)])

    return tf.map_fn(wrapper, tf.range(total), dtype)


def test_tf_forwardprop_hessian_1d_with_map_fn():
    """forwardprop_test.py testHessian1D (use_pfor=False): Hessian = mat + mat.T."""
    m = 4
    rng = np.random.RandomState([1, 2, 3])
    mat_value = rng.randn(m, m).astype("float32")
    x_value = rng.randn(m).astype("float32")
    mat = tf.Variable(mat_value)

    def f(x):
        return tf.reduce_sum(x[:, None] * mat * x[None, :])

    hess_value = mat_value + mat_value.T
    eager, = _forward_over_back_hessian(f, [tf.constant(x_value)], use_pfor=False,
                                        dtype=[tf.float32])
    np.testing.assert_allclose(eager.numpy(), hess_value, rtol=1e-5, atol=1e-5)
    traced, = tf.function(_forward_over_back_hessian)(f, [tf.constant(x_value)],
                                                      use_pfor=False, dtype=[tf.float32])
    np.testing.assert_allclose(traced.numpy(), hess_value, rtol=1e-5, atol=1e-5)


def first_order(x, w):
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, w])
        out = programs(x, w)
        ys = {k: tf.reduce_sum(v * tf.cast(tf.range(1, tf.size(v) + 1), tf.float64))
              for k, v in out.items()}
    return {k: (out[k],) + tuple(t.gradient(ys[k], [x, w])) for k in out}


@pytest.mark.slow
def test_compiled_first_order_matches_tensorflow():
    """The Numba program (values and first-order gradients; see test_values_and_gradients_
    match_tensorflow for the second order, run on the interpreter)."""
    got = tf.function(first_order, jit_compile=True)(tf.constant(X), tf.constant(W, tf.float64))
    for name, parts in got.items():
        for g, want in zip(parts, TF[name][:3], strict=True):
            np.testing.assert_allclose(np.asarray(g), want, rtol=1e-10, atol=1e-12)
