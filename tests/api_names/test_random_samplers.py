"""tf.random's stateless samplers and tf.random_index_shuffle give TensorFlow 2.21's values
bit for bit (runtime/philox_samplers.py): eagerly, and in one compiled function holding them
all; gamma's and the truncated normal's implicit gradients are TensorFlow's; errors too."""
import math

import numpy as np
import pytest

import tapeflow as tf

S = [1, 2]
INF = np.inf
R = tf.random
# (call, dtype, TF 2.21's values, flattened)
FACTS = {
    "cat1": (lambda: R.stateless_categorical(tf.math.log([[0.5, 0.5], [0.1, 0.9]]), 5, seed=S),
             np.int64, [1, 1, 0, 1, 1, 1, 1, 1, 1, 1]),
    "cat2": (lambda: R.stateless_categorical([[1., 2., 3., -INF], [0., 0., 0., 0.], [5., -3., 2., 2.]],
                                             7, seed=[7, 17], dtype=tf.int32),
             np.int32, [2, 0, 2, 2, 0, 2, 2, 2, 1, 0, 1, 1, 0, 3, 0, 2, 0, 0, 3, 0, 0]),
    "cat3": (lambda: R.stateless_categorical(tf.constant([[0.3, -1.2, 2.0]], tf.float64), 3,
                                             seed=tf.constant([-5, 2**40], tf.int64)),
             np.int64, [2, 1, 2]),
    "cat4": (lambda: R.stateless_categorical(tf.constant([[0.3, -1.2, 2.0], [1, 1, 1]], tf.float16),
                                             1, seed=S), np.int64, [2, 2]),
    "gam1": (lambda: R.stateless_gamma([3, 2], seed=S, alpha=[0.5, 1.5]), np.float32,
             [0.0669536143541336, 1.636942982673645, 0.6282354593276978, 1.6748675107955933,
              0.18136732280254364, 1.0241045951843262]),
    "gam2": (lambda: R.stateless_gamma([2, 3, 2], seed=[12, 34], alpha=[[1.], [3.], [5.]],
                                       beta=[[3., 4.]], dtype=tf.float64), np.float64,
             [0.30108993015818164, 0.1376164466157666, 0.9677592813577348, 0.7622326364104237,
              2.875089304995951, 1.1359261956267814, 0.21087572959125178, 0.02020389148314795,
              1.1931167224609398, 0.3793218827405048, 2.116671322193198, 1.048083836120928]),
    "gam3": (lambda: R.stateless_gamma([4], seed=S, alpha=1.0), np.float32,
             [3.4994423389434814, 1.7193093299865723, 2.248735189437866, 1.8935091495513916]),
    "gam4": (lambda: R.stateless_gamma([3], seed=S, alpha=[0.01, 1e-3, 7.], dtype=tf.float16),
             np.float16, [6.103515625e-05, 6.103515625e-05, 9.625]),   # tiny: TF's floor
    "poi1": (lambda: R.stateless_poisson([3, 2], seed=S, lam=[0.5, 3.]), np.int32,
             [3, 6, 2, 3, 1, 6]),
    "poi2": (lambda: R.stateless_poisson([4, 3], seed=[12, 34], lam=[12., 100.5, 1e4],
                                         dtype=tf.float32), np.float32,
             [13., 109., 10185., 12., 110., 10146., 11., 109., 9927., 6., 94., 10066.]),
    "poi3": (lambda: R.stateless_poisson([5], seed=S, lam=tf.constant(4, tf.int64), dtype=tf.int64),
             np.int64, [6, 5, 6, 6, 4]),
    "poi4": (lambda: R.stateless_poisson([3], seed=S, lam=tf.constant([2.5, 20., -1.], tf.float64),
                                         dtype=tf.float64), np.float64, [4., 23., 0.]),
    "bin1": (lambda: R.stateless_binomial([3, 2], seed=S, counts=[10., 20.], probs=[0.8]),
             np.int32, [7, 14, 8, 14, 7, 15]),
    "bin2": (lambda: R.stateless_binomial([2, 2, 4], seed=[123, 456], counts=[[5.], [100.]],
                                          probs=[0.1, 0.5, 0.9, 0.97], output_dtype=tf.float32),
             np.float32, [1., 3., 4., 5., 8., 56., 90., 99., 1., 3., 5., 5., 15., 51., 93., 95.]),
    "bin3": (lambda: R.stateless_binomial([4], seed=S, counts=tf.constant([0., 7., 50., 30.], tf.float64),
                                          probs=tf.constant([0.5, 1., 0.3, 0.], tf.float64),
                                          output_dtype=tf.int64), np.int64, [0, 7, 20, 0]),
    "bin4": (lambda: R.stateless_binomial([3], seed=S, counts=tf.constant([30., 40., 1000.], tf.float16),
                                          probs=tf.constant([0.35, 0.7, 0.01], tf.float16),
                                          output_dtype=tf.float16), np.float16, [14., 26., 15.]),
    "ptn1": (lambda: R.stateless_parameterized_truncated_normal([6], seed=S), np.float32,
             [0.544110119342804, 0.20738030970096588, 0.0735643208026886, 0.04643455147743225,
              -1.301589846611023, -0.9538565278053284]),
    "ptn2": (lambda: R.stateless_parameterized_truncated_normal(
        [3, 2], seed=[7, 17], means=[0., 1.], stddevs=[1., 2.], minvals=[-1., 3.],
        maxvals=[10000., 4.]), np.float32,
        [0.38154512643814087, 3.5805492401123047, -0.9604987502098083, 3.349125385284424,
         0.3225516080856323, 3.173295736312866]),
    "ptn3": (lambda: R.stateless_parameterized_truncated_normal(
        [2, 3], seed=S, means=tf.constant(0., tf.float64), stddevs=tf.constant(1., tf.float64),
        minvals=tf.constant([-3., 0.1, 2.5], tf.float64),
        maxvals=tf.constant([-2.9, 0.2, INF], tf.float64)), np.float64,
        [-2.975248375384518, 0.18397480553512233, 3.037765251735384, -2.951481187173122,
         0.182115020294145, 2.662998470665593]),
    "ptn4": (lambda: R.stateless_parameterized_truncated_normal(
        [5], seed=S, means=1., stddevs=0.5, minvals=-INF, maxvals=0.), np.float32,
        [-0.035111069679260254, -0.0007836818695068359, -0.26965081691741943,
         -0.46297597885131836, -0.17033612728118896]),
    "ptn5": (lambda: R.stateless_parameterized_truncated_normal(
        [4, 2], seed=S, minvals=[0.5, -0.25], maxvals=[0.75, 0.25]), np.float32,
        [0.7110151052474976, -0.030324280261993408, 0.548011302947998, -0.2076159119606018,
         0.749055802822113, -0.14951598644256592, 0.5400968790054321, -0.18039584159851074]),
    # tf.random.experimental.index_shuffle(tf.range(10), [5, 8], 9) pads the seed so
    "ris1": (lambda: tf.random_index_shuffle(tf.range(10), [498247692, 5, 8], 9), np.int32,
             [3, 8, 0, 1, 2, 7, 6, 9, 4, 5]),
    "ris2": (lambda: tf.random_index_shuffle(tf.constant([0, 3, 7], tf.int64),
                                             tf.constant([1, 2, 3], tf.int64),
                                             tf.constant(100, tf.int64)), np.int64, [63, 54, 31]),
    "ris3": (lambda: tf.random_index_shuffle(
        tf.constant([0, 1, 2, 3], tf.uint32),
        tf.constant([[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1]], tf.uint64),
        tf.constant([3, 3, 1000, 2**31], tf.uint32), rounds=6), np.uint32, [1, 3, 391, 4611470]),
}


@pytest.mark.usefixtures("numpy_backend")
@pytest.mark.parametrize("name", sorted(FACTS))
def test_values_are_tensorflows(name):
    call, dtype, want = FACTS[name]
    got = call().numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.ravel(), np.array(want, dtype))


# compiled once: every sampler (float32/int dtypes: float16 runs on the interpreter)
COMPILED = ["cat1", "cat2", "gam1", "poi1", "poi2", "bin1", "bin2", "ptn1", "ptn2", "ptn4", "ris1",
            "ris3"]


def test_compiled_values_are_tensorflows():
    tf.set_backend("numba")
    f = tf.function(lambda: [FACTS[k][0]() for k in COMPILED], jit_compile=True)
    for k, got in zip(COMPILED, f()):
        np.testing.assert_array_equal(got.numpy().ravel(), np.array(FACTS[k][2], FACTS[k][1]),
                                      err_msg=k)
    assert f.get_concrete_function().program.fallback is None


@pytest.mark.usefixtures("numpy_backend")
def test_traced_with_a_seed_argument_matches_eager():
    f = tf.function(lambda seed, lam: (R.stateless_poisson([4], seed, lam),
                                       R.stateless_categorical([[0., 1., 2.]], 4, seed)),
                    input_signature=[tf.TensorSpec([2], tf.int64), tf.TensorSpec([], tf.float32)])
    for seed in ([3, 4], [-9, 2**40]):
        p, c = f(tf.constant(seed, tf.int64), tf.constant(25.0))
        np.testing.assert_array_equal(p.numpy(), R.stateless_poisson([4], seed, 25.0).numpy())
        np.testing.assert_array_equal(c.numpy(),
                                      R.stateless_categorical([[0., 1., 2.]], 4, seed).numpy())


@pytest.mark.usefixtures("numpy_backend")
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_gamma_gradients_are_tensorflows(dtype):
    alpha, beta = tf.constant([[0.5], [2.0]], dtype), tf.constant([1.5, 3.0], dtype)
    with tf.GradientTape() as tape:
        tape.watch([alpha, beta])
        y = R.stateless_gamma([3, 2, 2], seed=S, alpha=alpha, beta=beta, dtype=dtype)
        loss = tf.reduce_sum(y * tf.constant([1., 2.], dtype))
    ga, gb = tape.gradient(loss, [alpha, beta])
    # TF 2.21's (float64); its RandomGammaGrad is Eigen's series, ours igamma's: close, not bits
    rtol = 1e-5 if dtype == tf.float32 else 1e-10
    np.testing.assert_allclose(ga.numpy().ravel(), [3.6233472325368217, 4.136599030465781], rtol=rtol)
    np.testing.assert_allclose(gb.numpy(), [-3.9112897774254027, -1.099237511263535], rtol=rtol)
    assert ga.shape == alpha.shape and gb.shape == beta.shape


@pytest.mark.usefixtures("numpy_backend")
def test_gamma_has_no_second_derivative_and_the_others_no_gradient():
    alpha = tf.constant(1.5, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(alpha)
        with tf.GradientTape() as inner:
            inner.watch(alpha)
            y = tf.reduce_sum(R.stateless_gamma([3], seed=S, alpha=alpha, dtype=tf.float64))
        g = inner.gradient(y, alpha)
    with pytest.raises(LookupError):      # TF: no entry for RandomGammaGrad
        outer.gradient(g, alpha)
    lam, logits = tf.constant([3.0, 4.0]), tf.constant([[0.5, 1.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([lam, logits])
        p = tf.cast(R.stateless_poisson([2], S, lam, dtype=tf.float32), tf.float32)
        c = tf.cast(R.stateless_categorical(logits, 2, S), tf.float32)
        b = R.stateless_binomial([2], S, counts=lam, probs=0.5, output_dtype=tf.float32)
    assert tape.gradient(p, lam) is None and tape.gradient(c, logits) is None
    assert tape.gradient(b, lam) is None


@pytest.mark.usefixtures("numpy_backend")
def test_truncated_normal_gradients_are_tensorflows():
    m, s = tf.constant([0., 1.], tf.float64), tf.constant(1.5, tf.float64)
    lo, hi = tf.constant([-1., 0.5], tf.float64), tf.constant(2., tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([m, s, lo, hi])
        y = R.stateless_parameterized_truncated_normal([3, 2], seed=[3, 4], means=m, stddevs=s,
                                                       minvals=lo, maxvals=hi)
        loss = tf.reduce_sum(y * y)
    np.testing.assert_array_equal(y.numpy().ravel(), [       # TF 2.21's
        -0.4966268395733171, 1.9046372798818132, 0.041718599497472364, 1.467051533272664,
        1.5693096905920854, 1.4864670644728353])
    got = tape.gradient(loss, [m, s, lo, hi])
    want = [[2.2288029010324815, 9.716311755254624], 7.789897852857709,
            [-0.2747165466329179, 2.1459671063264736], 8.791669884764545]
    for g, w, x in zip(got, want, [m, s, lo, hi]):
        assert g.shape == x.shape
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)


@pytest.mark.usefixtures("numpy_backend")
def test_errors_are_tensorflows():
    bad = tf.errors.InvalidArgumentError
    cases = [
        (ValueError, "Argument `dtype` got invalid value",
         lambda: R.stateless_categorical([[1., 2.]], 2, seed=S, dtype=tf.float32)),
        (bad, "logits should be a matrix", lambda: R.stateless_categorical([1., 2.], 2, seed=S)),
        (bad, r"seed must have shape \[2\], not \[3\]",
         lambda: R.stateless_categorical([[1., 2.]], 2, seed=[1, 2, 3])),
        (bad, "num_classes should be positive",
         lambda: R.stateless_categorical(tf.zeros([2, 0]), 3, seed=S)),
        (bad, "must end with broadcasted shape", lambda: R.stateless_gamma([3], S, alpha=[1., 2.])),
        (bad, "must end with broadcasted shape", lambda: R.stateless_poisson([3, 2], S, [1., 2., 3.])),
        (TypeError, "'dtype' of uint8 is not in the list",
         lambda: R.stateless_poisson([3], S, 1., dtype=tf.uint8)),
        (bad, "must end with broadcasted shape",
         lambda: R.stateless_binomial([3], S, counts=[1., 2.], probs=0.5)),
        (ValueError, r"Incompatible shapes: \[2\] vs. \[3\]",
         lambda: R.stateless_binomial([3], S, counts=[1., 2.], probs=[0.5, 0.1, 0.2])),
        (bad, "Invalid parameters",
         lambda: R.stateless_parameterized_truncated_normal([3], S, minvals=2., maxvals=1.)),
        (bad, r"Seed must be a vector of size \[3\] or a matrix of size \[1, 3\] but got \[2\]",
         lambda: tf.random_index_shuffle(3, [1, 2], 10)),
        (bad, "max_index must be >= 0 but was -1",
         lambda: tf.random_index_shuffle(tf.constant([1, 5]), [1, 2, 3], -1)),
        (bad, "index must be >= 0 but was -2",
         lambda: tf.random_index_shuffle(tf.constant([-2, 5]), [1, 2, 3], 7)),
        (bad, "max_index must be >= index, but 3 < 5",
         lambda: tf.random_index_shuffle(tf.constant([1, 5], tf.uint32), [1, 2, 3],
                                         tf.constant(3, tf.uint32))),
    ]
    for exc, msg, call in cases:
        with pytest.raises(exc, match=msg):
            call()
    assert R.stateless_poisson([0, 2], S, [1., 2.]).shape == [0, 2]     # empty, as TF
    assert R.stateless_categorical([[1., 2.]], 0, S).shape == [1, 0]
    assert tf.random_index_shuffle(3, [1, 2, 3], 10).numpy() == 4       # scalar in, scalar out


# TF 2.21's values with its intra-op threads set to 1, 2 and 4: large categorical and truncated
# normal draws are split between the threads, each part restarting the stream at its own place
# (row sums / fsum and a few values of each draw)
SHARDED = {
    1: ([2334, 2291, 1895, 2146, 2479, 2158, 1757, 2048, 1866, 1745, 1872, 2092],
        (747.9636387825012, [0.7110151052474976, 0.638953685760498, 0.6164357662200928,
                             0.7259309887886047, 0.5029119849205017, 0.5391135811805725]),
        (2329.5691524092354, [0.8926007150989261, 3.1892658118950483, 3.5297992805120684,
                              0.5257846741394689, 4.026569786916293])),
    2: ([2334, 2291, 2291, 1979, 2015, 2311, 2369, 2356, 2418, 1853, 1862, 1916],
        (746.0338343977928, [0.7110151052474976, 0.7397804260253906, 0.7261141538619995,
                             0.6485390663146973, 0.5110997557640076, 0.6044952869415283]),
        (2350.6460266212343, [0.8926007150989261, 3.225826001035642, 3.907264403065054,
                              0.44358166542804645, 3.233116039800392])),
    4: ([2334, 2291, 1895, 2194, 1955, 2505, 2369, 2356, 2065, 2155, 1832, 2025],
        (742.5187276601791, [0.7110151052474976, 0.638953685760498, 0.7399286031723022,
                             0.5003715753555298, 0.6011303663253784, 0.5797512531280518]),
        (2350.6460266212343, [0.8926007150989261, 3.225826001035642, 3.907264403065054,
                              0.44358166542804645, 3.233116039800392])),
}


@pytest.mark.usefixtures("numpy_backend")
@pytest.mark.parametrize("threads", sorted(SHARDED))
def test_large_draws_are_tensorflows_for_its_thread_count(threads):
    cat, (sum32, some32), (sum64, some64) = SHARDED[threads]
    old = tf.config.threading.get_intra_op_parallelism_threads()
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    try:
        logits = tf.reshape(tf.linspace(-2.0, 2.0, 1200), [12, 100])
        c = R.stateless_categorical(logits, 40, seed=S).numpy()
        p = R.stateless_parameterized_truncated_normal([1200], S, minvals=0.5, maxvals=0.75).numpy()
        f64 = lambda x: tf.constant(x, tf.float64)   # noqa: E731
        q = R.stateless_parameterized_truncated_normal(
            [600, 2], [3, 4], means=f64(0.), stddevs=f64(2.), minvals=f64([-1., 3.]),
            maxvals=f64([1., 9.])).numpy().ravel()
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(old)
    assert c.sum(axis=1).tolist() == cat
    assert math.fsum(p.astype(np.float64)) == sum32
    assert p[[0, 299, 300, 599, 600, 1199]].tolist() == some32
    assert math.fsum(q) == sum64 and q[[0, 1, 599, 600, 1199]].tolist() == some64
