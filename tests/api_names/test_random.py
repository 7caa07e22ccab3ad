"""tf.random's counter-based names give TensorFlow 2.21's numbers bit for bit (its Philox):
stateless_* eagerly, traced and compiled, split/fold_in, and Generator with its state."""
import numpy as np
import pytest

import tapeflow as tf

S = [1, 2]
# TF 2.21's values
FACTS = [
    (lambda: tf.random.stateless_uniform([5], S), np.float32,
     [0.8440604209899902, 0.19204533100128174, 0.9962232112884521, 0.16038739681243896,
      0.27199018001556396]),
    (lambda: tf.random.stateless_uniform([3], S, dtype=tf.float64), np.float64,
     [0.7524837538451801, 0.9697857725627486, 0.17592233912897481]),
    (lambda: tf.random.stateless_uniform([4], S, dtype=tf.float16), np.float16,
     [0.54296875, 0.2353515625, 0.060546875, 0.8935546875]),
    (lambda: tf.random.stateless_normal([5], S), np.float32,
     [0.544110119342804, 0.20738030970096588, 0.0735643208026886, 0.04643455147743225,
      -1.301589846611023]),
    (lambda: tf.random.stateless_normal([3], S, dtype=tf.float64), np.float64,
     [-0.1423118100189212, 0.7406072461585091, -1.469047669443883]),
    (lambda: tf.random.stateless_normal([4], S, dtype=tf.float16), np.float16,
     [0.5439453125, 0.2073974609375, 0.07354736328125, 0.04644775390625]),
    (lambda: tf.random.stateless_truncated_normal([6], S), np.float32,
     [0.544110119342804, 0.20738030970096588, 0.0735643208026886, 0.04643455147743225,
      0.16820591688156128, -1.6850333213806152]),
    (lambda: tf.random.stateless_truncated_normal([4], S, dtype=tf.float64), np.float64,
     [-0.1423118100189212, 0.7406072461585091, -0.552387756244845, -0.734450092480207]),
    (lambda: tf.random.stateless_uniform([6], S, minval=-5, maxval=100, dtype=tf.int32),
     np.int32, [35, 24, 49, 79, 17, 50]),
    (lambda: tf.random.stateless_uniform([4], S, minval=-5, maxval=2**40, dtype=tf.int64),
     np.int64, [1036159160131, 635312348566, 846040150269, 267342743203]),
    (lambda: tf.random.stateless_uniform([3], S, minval=2., maxval=5.), np.float32,
     [4.532181262969971, 2.5761361122131348, 4.988669395446777]),
    (lambda: tf.random.stateless_normal([3], S, mean=2., stddev=3.), np.float32,
     [3.6323304176330566, 2.622140884399414, 2.2206928730010986]),
    (lambda: tf.random.stateless_normal([3], tf.constant([-7, 2**40], tf.int64)), np.float32,
     [-0.12286705523729324, -0.4360094964504242, 0.05580925941467285]),
    (lambda: tf.reshape(tf.random.stateless_truncated_normal([3, 3], [123456789, -5]), [-1]),
     np.float32, [-0.46238353848457336, 0.3331792950630188, -1.1057318449020386,
                  1.4514470100402832, -1.0678082704544067, -1.0237995386123657,
                  -0.8522578477859497, -0.24401499330997467, -1.0956083536148071]),
    (lambda: tf.reshape(tf.random.split(S, 3), [-1]), np.int32,
     [1105988140, 1738052849, -335576002, 370444179, 10670227, -246211131]),
    (lambda: tf.random.fold_in(S, 7), np.int32, [1105988140, 7]),
]


@pytest.mark.parametrize("i", range(len(FACTS)))
def test_stateless_values_are_tensorflows(i):
    call, dtype, want = FACTS[i]
    got = call().numpy()
    assert got.dtype == dtype
    if np.dtype(dtype) == np.float64:
        # float64 normals go through libm's log/sin/cos, whose last bits differ between
        # builds (seen: 3 ulp in a fresh venv); the bits of the Philox stream are exact.
        np.testing.assert_array_max_ulp(got, np.array(want, dtype), maxulp=4)
    else:
        np.testing.assert_array_equal(got, np.array(want, dtype))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_stateless_in_a_function(backend):
    tf.set_backend(backend)
    f = tf.function(lambda seed: (tf.random.stateless_normal([3], seed),
                                  tf.random.stateless_uniform([2], seed, minval=0, maxval=9,
                                                              dtype=tf.int64)),
                    input_signature=[tf.TensorSpec([2], tf.int32)],
                    jit_compile=backend == "numba")
    normal, ints = f(tf.constant([3, 4]))
    np.testing.assert_array_equal(normal.numpy(), np.array(      # TF 2.21, traced
        [-0.17393383383750916, 1.6723546981811523, 0.3481701612472534], np.float32))
    np.testing.assert_array_equal(ints.numpy(),
                                  tf.random.stateless_uniform([2], [3, 4], minval=0, maxval=9,
                                                              dtype=tf.int64).numpy())
    if backend == "numba":
        assert f.get_concrete_function().program.fallback is None


@pytest.mark.usefixtures("numpy_backend")   # its ops compile in test_stateless_in_a_function
def test_generator_draws_tensorflows_numbers_and_state():
    g = tf.random.Generator.from_seed(5)
    assert g.state.numpy().tolist() == [5, 0, 0] and g.algorithm == 1
    np.testing.assert_array_equal(g.normal([6]).numpy(), np.array(      # TF 2.21
        [1.0278524160385132, 0.2797411382198334, -0.013479231856763363, 1.8451809883117676,
         0.970611035823822, -1.0242515802383423], np.float32))
    np.testing.assert_array_equal(g.uniform([3]).numpy(), np.array(
        [0.7652734518051147, 0.6307785511016846, 0.4499545097351074], np.float32))
    assert g.state.numpy().tolist() == [2309, 0, 0]
    assert g.uniform([2], minval=0, maxval=10, dtype=tf.int32).numpy().tolist() == [0, 2]
    np.testing.assert_array_equal(g.truncated_normal([3]).numpy(), np.array(
        [-0.7815420031547546, -0.319424033164978, -0.07648174464702606], np.float32))
    assert g.state.numpy().tolist() == [3589, 0, 0]
    assert [x.state.numpy().tolist() for x in g.split(2)] == \
        [[0, 0, -5451549617255049866], [0, 0, 3409298132332453852]]
    assert g.make_seeds(2).numpy().tolist() == \
        [[2415240746602099447, -3398125994851751412], [0, 0]]
    assert tf.random.create_rng_state(5, "philox").numpy().tolist() == [5, 0, 0]
    assert tf.random.create_rng_state([1, 2], "philox").numpy().tolist() == [0, 1, 2]

    h = tf.random.Generator.from_seed(5)

    @tf.function
    def draw():
        return h.normal([6])

    np.testing.assert_array_equal(draw().numpy(), g.__class__.from_seed(5).normal([6]).numpy())
    assert h.state.numpy().tolist() == [1541, 0, 0]       # the function advanced the state
    draw()
    assert h.state.numpy().tolist() == [3077, 0, 0]


def test_errors_are_tensorflows():
    with pytest.raises(ValueError, match="must be both None or not None"):
        tf.random.stateless_uniform([3], S, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        tf.random.stateless_uniform([3], [1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval, got 5 >= 5"):
        tf.random.stateless_uniform([3], S, minval=5, maxval=5, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'Tseed' of float32 is not in the list"):
        tf.random.stateless_uniform([3], [1., 2.])
    with pytest.raises(ValueError, match="Unsupported algorithm"):
        tf.random.stateless_uniform([3], S, alg="threefry")


def test_stateful_categorical_and_shuffle():
    tf.random.set_seed(3)
    draws = tf.random.categorical(tf.math.log([[0.0, 1.0], [1.0, 0.0]]), 4)
    assert draws.dtype == tf.int64 and draws.numpy().tolist() == [[1] * 4, [0] * 4]
    x = tf.random.shuffle(tf.range(6))
    assert sorted(x.numpy().tolist()) == list(range(6))
    p = tf.random.categorical(tf.math.log([[0.3, 0.7]]), 4000, dtype=tf.int32, seed=1)
    assert p.dtype == tf.int32 and abs(float(tf.reduce_mean(tf.cast(p, tf.float32))) - 0.7) < 0.03
