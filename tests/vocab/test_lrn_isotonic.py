"""local_response_normalization (LRN, LRNGrad) and isotonic_regression against TensorFlow 2.21 (every literal is TF 2.21's
answer to the same call), eagerly and traced."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

X = [0.19525401294231415, 0.8607574701309204, 0.41105350852012634, 0.1795327365398407,
     -0.30538079142570496, 0.5835764408111572, -0.24965114891529083, 1.5670920610427856,
     1.8546510934829712, -0.4662339389324188, 1.1669001579284668, 0.11557967960834503,
     0.2721782326698303, 1.702386498451233, -1.7158557176589966, -1.6514828205108643,
     -1.9191263914108276, 1.330479383468628, 1.1126270294189453, 1.4800485372543335,
     1.9144734144210815, 1.196634292602539, -0.1540825515985489, 1.1221166849136353]
# attrs -> (LRN(X), gradient of sum(LRN(X) * [1, 2, ..., 24])), float32, shape [1, 2, 2, 6]
LRN_FACTS = [
    ({}, [0.12566877901554108, 0.5539979934692383, 0.2645609676837921, 0.11555029451847076,
          -0.1965482234954834, 0.37559962272644043, -0.0853777751326561, 0.5359271764755249,
          0.6342689990997314, -0.1594465672969818, 0.3990662395954132, 0.03952690213918686,
          0.07005003839731216, 0.43814027309417725, -0.4416068196296692, -0.42503926157951355,
          -0.49392223358154297, 0.3424231708049774, 0.3384283185005188, 0.450187087059021,
          0.5823262929916382, 0.36398082971572876, -0.04686736688017845, 0.34131479263305664],
     [0.3394657373428345, -0.05358588695526123, 1.2905442714691162, 2.2948055267333984,
      3.693782329559326, 2.9526524543762207, 2.7637946605682373, 0.4141450822353363,
      0.33009374141693115, 4.110642910003662, 2.0330235958099365, 3.93261981010437,
      3.5010716915130615, 4.57440710067749, 2.8815884590148926, 3.175682783126831,
      3.2803544998168945, 5.391698837280273, 1.375067114830017, 0.2248532772064209,
      -1.1905837059020996, 1.9550480842590332, 7.605833530426025, 2.85835599899292]),
    (dict(depth_radius=2, bias=2.0, alpha=0.5, beta=0.75),
     [0.09898073226213455, 0.43422678112983704, 0.2044990211725235, 0.08552175015211105,
      -0.16258323192596436, 0.31946808099746704, -0.07490009814500809, 0.46260419487953186,
      0.4982747733592987, -0.12565967440605164, 0.37667253613471985, 0.053451016545295715,
      0.08191465586423874, 0.42699575424194336, -0.3552854657173157, -0.31752511858940125,
      -0.4208325445652008, 0.34318530559539795, 0.30783289670944214, 0.3738512694835663,
      0.48289811611175537, 0.3014516234397888, -0.044810209423303604, 0.45241260528564453],
     [0.41458579897880554, 0.5196776986122131, 1.3669917583465576, 1.7404179573059082,
      2.8627781867980957, 3.0067102909088135, 2.362179756164551, 0.9738171100616455,
      -0.5006750822067261, 3.545945167541504, 2.05814790725708, 5.469071865081787,
      3.808868169784546, 3.5832974910736084, 1.816121220588684, 2.825162410736084,
      2.0749802589416504, 5.137379169464111, 2.031982898712158, -0.4090844392776489,
      -1.4817922115325928, -0.6509766578674316, 7.348330497741699, 6.233684539794922]),
    (dict(depth_radius=0, bias=1.0, alpha=1.0, beta=1.0),
     [0.1880834996700287, 0.4944315254688263, 0.3516388535499573, 0.1739267110824585,
      -0.2793310582637787, 0.43532243371009827, -0.23500433564186096, 0.4534701704978943,
      0.41773954033851624, -0.3829832673072815, 0.49410250782966614, 0.11405603587627411,
      0.25340569019317627, 0.4367199242115021, -0.43503695726394653, -0.44306614995002747,
      -0.40980300307273865, 0.4802870452404022, 0.4971659779548645, 0.463886022567749,
      0.4103725552558899, 0.49205055832862854, -0.15050923824310303, 0.4966995418071747],
     [0.8925251960754395, 0.17097878456115723, 1.8244736194610596, 3.63309383392334,
      3.793229818344116, 2.201669454574585, 5.816137313842773, -0.9751994609832764,
      -1.1139638423919678, 5.280877113342285, -0.713271975517273, 11.529598236083984,
      10.433795928955078, -1.7488045692443848, -1.874624490737915, -1.989302635192871,
      -2.0797927379608154, -1.8065402507781982, -0.902657151222229, -2.3390846252441406,
      -2.571629524230957, -1.6067051887512207, 21.42456817626953, -1.2186169624328613]),
]


def _lrn_all(x):
    out = []
    w = tf.reshape(tf.range(1.0, 25.0), [1, 2, 2, 6])
    for attrs, _, _ in LRN_FACTS:
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.nn.lrn(x, **attrs)
            s = tf.reduce_sum(y * w)
        out += [y, t.gradient(s, x)]
    return out


@pytest.mark.parametrize("traced", [False, True])
def test_lrn_values_and_gradients(traced, numpy_backend):
    f = tf.function(_lrn_all) if traced else _lrn_all
    got = iter(f(tf.reshape(tf.constant(X, tf.float32), [1, 2, 2, 6])))
    for attrs, want_y, want_g in LRN_FACTS:
        y, g = next(got), next(got)
        assert y.dtype == tf.float32 and y.shape == (1, 2, 2, 6)
        np.testing.assert_allclose(y.numpy().ravel(), want_y, rtol=2e-6, atol=1e-7, err_msg=str(attrs))
        np.testing.assert_allclose(g.numpy().ravel(), want_g, rtol=2e-5, atol=2e-6, err_msg=str(attrs))


def test_lrn_second_order_is_tensorflows_lookup_error():
    x = tf.reshape(tf.constant(X), [1, 2, 2, 6])
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t:
            t.watch(x)
            s = tf.reduce_sum(tf.nn.lrn(x, depth_radius=2) ** 2)
        g = t.gradient(s, x)
    with pytest.raises(LookupError, match="no entry for: LRNGrad"):
        t2.gradient(g, x)


def test_lrn_errors_and_aliases():
    assert tf.nn.lrn is tf.nn.local_response_normalization
    assert tf.nn.lrn(tf.ones([1, 1, 1, 3], tf.float16)).numpy().tolist() == [[[[0.5, 0.5, 0.5]]]]
    with pytest.raises(InvalidArgumentError, match="in must be 4-dimensional"):
        tf.nn.lrn(tf.ones([1, 2, 3]))
    with pytest.raises(InvalidArgumentError, match="depth_radius = -1 larger than int max"):
        tf.nn.lrn(tf.ones([1, 1, 1, 3]), depth_radius=-1)
    with pytest.raises(InvalidArgumentError, match="input has dtype int32"):
        tf.nn.lrn(tf.ones([1, 1, 1, 3], tf.int32))


# -- isotonic_regression ---------------------------------------------------------------------

ISO_X = [[1., 3., 2., 4.], [5., 1., 1., 6.], [0.5, 0.25, 0.75, 0.1]]
# kwargs -> (output, segments, gradient of sum(output * [1, ..., 12])) for float64 ISO_X
ISO_FACTS = [
    ({}, [[2.5, 2.5, 2.5, 2.5], [5.0, 2.6666666666666665, 2.6666666666666665, 2.6666666666666665],
          [0.5, 0.5, 0.5, 0.1]],
     [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 1, 2]],
     [[2.5, 2.5, 2.5, 2.5], [5.0, 7.0, 7.0, 7.0], [9.0, 10.5, 10.5, 12.0]]),
    (dict(decreasing=False),
     [[1.0, 2.5, 2.5, 4.0], [2.3333333333333335, 2.3333333333333335, 2.3333333333333335, 6.0],
      [0.375, 0.375, 0.425, 0.425]],
     [[0, 1, 1, 2], [0, 0, 0, 1], [0, 0, 1, 1]],
     [[1.0, 2.5, 2.5, 4.0], [6.0, 6.0, 6.0, 8.0], [9.5, 9.5, 11.5, 11.5]]),
    (dict(axis=0), [[3.0, 3.0, 2.0, 5.0], [3.0, 1.0, 1.0, 5.0], [0.5, 0.25, 0.75, 0.1]],
     [[0, 0, 0, 0], [0, 1, 1, 0], [1, 2, 2, 1]],
     [[3.0, 2.0, 3.0, 6.0], [3.0, 6.0, 7.0, 6.0], [9.0, 10.0, 11.0, 12.0]]),
    (dict(decreasing=False, axis=0),
     [[1.0, 1.4166666666666667, 1.25, 3.3666666666666667],
      [2.75, 1.4166666666666667, 1.25, 3.3666666666666667],
      [2.75, 1.4166666666666667, 1.25, 3.3666666666666667]],
     [[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]],
     [[1.0, 6.0, 7.0, 8.0], [7.0, 6.0, 7.0, 8.0], [7.0, 6.0, 7.0, 8.0]]),
]


def _iso_all(x):
    out = []
    w = tf.reshape(tf.range(1.0, 13.0, dtype=tf.float64), [3, 4])
    for kwargs, _, _, _ in ISO_FACTS:
        with tf.GradientTape() as t:
            t.watch(x)
            y, s = tf.nn.isotonic_regression(x, **kwargs)
            loss = tf.reduce_sum(y * w)
        out += [y, s, t.gradient(loss, x)]
    return out


@pytest.mark.parametrize("traced", [False, True])
def test_isotonic_values_segments_and_gradients(traced, numpy_backend):
    f = tf.function(_iso_all) if traced else _iso_all
    got = iter(f(tf.constant(ISO_X, tf.float64)))
    for kwargs, want_y, want_s, want_g in ISO_FACTS:
        y, s, g = next(got), next(got), next(got)
        assert s.dtype == tf.int32
        np.testing.assert_allclose(y, want_y, rtol=1e-15, err_msg=str(kwargs))
        assert s.numpy().tolist() == want_s, kwargs
        np.testing.assert_allclose(g, want_g, rtol=1e-15, err_msg=str(kwargs))


@pytest.mark.slow
def test_isotonic_compiled():
    """One compiled program (the Numba PAV loop) against TF's facts (tests/codegen compiles
    the op on the gradient cases' inputs in the default run)."""
    got = tf.function(lambda x: tf.nn.isotonic_regression(x, decreasing=False))(
        tf.constant(ISO_X, tf.float64))
    np.testing.assert_allclose(got.output, ISO_FACTS[1][1], rtol=1e-15)
    assert got.segments.numpy().tolist() == ISO_FACTS[1][2]


def test_isotonic_dtypes_nan_and_second_order():
    for dt, out_dt in [(tf.int32, tf.float64), (tf.int8, tf.float32), (tf.float16, tf.float16),
                       (tf.int64, tf.float64), (tf.int16, tf.float32)]:
        y, s = tf.nn.isotonic_regression(tf.constant([1, 3, 2], dt))
        assert y.dtype == out_dt and y.numpy().tolist() == [2.0, 2.0, 2.0]
        assert s.numpy().tolist() == [0, 0, 1]
    y, s = tf.nn.isotonic_regression(tf.constant([1., np.nan, 3., 2.]))
    assert np.isnan(y[1]) and y.numpy()[[0, 2, 3]].tolist() == [1.0, 3.0, 2.0]
    assert s.numpy().tolist() == [0, 1, 2, 3]
    y, s = tf.nn.isotonic_regression(tf.constant([0.1, 0.2, 0.3, 0.7], tf.float32))
    assert y.numpy().tolist() == [0.32499998807907104] * 4 and s.numpy().tolist() == [0] * 4
    y, s = tf.nn.isotonic_regression(tf.constant(1.0))
    assert float(y) == 1.0 and int(s) == 0 and s.shape == ()
    assert tf.nn.isotonic_regression(tf.zeros([2, 0])).output.shape == (2, 0)
    x = tf.constant(ISO_X, tf.float64)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t:
            t.watch(x)
            y, _ = tf.nn.isotonic_regression(x)
            loss = tf.reduce_sum(y * y)
        g = t.gradient(loss, x)
    np.testing.assert_allclose(g, [[5.0, 5.0, 5.0, 5.0], [10.0] + [5.333333333333333] * 3,
                                   [1.0, 1.0, 1.0, 0.2]], rtol=1e-15)
    np.testing.assert_allclose(t2.gradient(g, x), np.full((3, 4), 2.0), rtol=1e-15)   # TF 2.21's
