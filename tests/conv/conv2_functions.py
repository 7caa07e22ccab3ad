"""The dilated, raw and morphological functions (ops/dilated.py, ops/conv_raw.py,
ops/morphology.py) as ``fn(tf, x) -> tensor`` on a fixed float64 ``x``, for
test_conv2_functions.py and make_conv2_facts.py (TensorFlow 2.21's facts: output shape,
weighted output, the weighted output's gradient with respect to ``x`` weighted again)."""
import numpy as np


def _x(*shape, phase=0.1):
    return np.sin(0.37 * np.arange(int(np.prod(shape))) + phase).reshape(shape)


X4, X3, X5 = _x(2, 7, 6, 3), _x(2, 9, 3), _x(1, 5, 4, 3, 2)
W4 = _x(3, 2, 3, 4, phase=0.5)
DY = _x(2, 7, 6, 4, phase=0.9)
D_IN = _x(2, 7, 8, 3)
D_FILTER = _x(3, 2, 3, phase=0.4)


def _pool_op(tf, kind):
    return lambda v, n, p: tf.nn.pool(v, [2] * n, kind, padding=p)


def _s2b_conv(tf):
    return lambda v, n, p: tf.nn.convolution(v, W4, padding=p)


# name -> (fn(tf, x), x)
FUNCS = {
    "pool_max_dilated": (lambda tf, x: tf.nn.pool(x, [2, 3], "MAX", dilations=[2, 1]), X4),
    "pool_avg_dilated": (lambda tf, x: tf.nn.pool(x, [3, 2], "AVG", dilations=[2, 2]), X4),
    "pool_max_1d_dilated": (lambda tf, x: tf.nn.pool(x, [3], "MAX", dilations=[3]), X3),
    "pool_avg_3d_dilated": (lambda tf, x: tf.nn.pool(tf.cast(x, tf.float32), [2, 2, 1], "AVG",
                                                     dilations=[2, 1, 2]), X5),
    "pool_avg_strided": (lambda tf, x: tf.nn.pool(x, [3, 3], "AVG", strides=[2, 3],
                                                  padding="SAME"), X4),
    "with_s2b_conv_same": (lambda tf, x: tf.nn.with_space_to_batch(
        x, [2, 2], "SAME", _s2b_conv(tf), filter_shape=[3, 2]), X4),
    "with_s2b_conv_valid": (lambda tf, x: tf.nn.with_space_to_batch(
        x, [3, 1], "VALID", _s2b_conv(tf)), X4),
    "with_s2b_pool_spatial_dims": (lambda tf, x: tf.nn.with_space_to_batch(
        x, [2], "VALID", lambda v, n, p: tf.nn.pool(v, [1, 2], "MAX", padding=p),
        spatial_dims=[2]), X4),
    "with_s2b_rate1": (lambda tf, x: tf.nn.with_space_to_batch(
        x, [1, 1], "SAME", lambda v, n, p: tf.nn.max_pool2d(v, 3, 1, p)), X4),
    "space_to_batch_nd": (lambda tf, x: tf.space_to_batch_nd(x, [2, 3], [[1, 0], [2, 1]]), X4),
    "conv_raw_same": (lambda tf, x: tf.conv(x, W4, [1, 1, 1, 1], "SAME"), X4),
    "conv_raw_dilated": (lambda tf, x: tf.conv(x, W4, [1, 2, 1, 1], "VALID",
                                               dilations=[1, 1, 2, 1]), X4),
    "conv_raw_explicit": (lambda tf, x: tf.conv(x, W4, [1, 1, 1, 1], "EXPLICIT",
                                                explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0]), X4),
    "conv_raw_3d": (lambda tf, x: tf.conv(x, _x(2, 2, 2, 2, 3), [1, 1, 2, 1, 1], "SAME"), X5),
    "conv_raw_batch_dims": (lambda tf, x: tf.conv(tf.reshape(x, [2, 1, 7, 6, 3]), W4,
                                                  [1, 1, 1, 1], "VALID", batch_dims=2), X4),
    "volume_patches_valid": (lambda tf, x: tf.extract_volume_patches(
        x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"), X5),
    "volume_patches_same": (lambda tf, x: tf.extract_volume_patches(
        x, [1, 2, 3, 2, 1], [1, 2, 2, 3, 1], "SAME"), X5),
    "volume_patches_strided": (lambda tf, x: tf.extract_volume_patches(
        x, [1, 3, 1, 2, 1], [1, 2, 3, 1, 1], "VALID"), X5),
}

MORPH_FUNCS = {
    "dilation2d_valid": (lambda tf, x: tf.nn.dilation2d(x, D_FILTER, [1, 1, 1, 1], "VALID",
                                                        "NHWC", [1, 1, 1, 1]), D_IN),
    "dilation2d_same_strided": (lambda tf, x: tf.nn.dilation2d(
        x, D_FILTER, [1, 2, 3, 1], "SAME", "NHWC", [1, 1, 1, 1]), D_IN),
    "dilation2d_rates": (lambda tf, x: tf.nn.dilation2d(x, D_FILTER, [1, 1, 1, 1], "SAME",
                                                        "NHWC", [1, 2, 3, 1]), D_IN),
    "dilation2d_filter_grad": (lambda tf, x: tf.nn.dilation2d(
        tf.constant(D_IN), x, [1, 2, 1, 1], "VALID", "NHWC", [1, 1, 2, 1]), D_FILTER),
    "erosion2d_valid": (lambda tf, x: tf.nn.erosion2d(x, D_FILTER, [1, 1, 1, 1], "VALID",
                                                      "NHWC", [1, 1, 1, 1]), D_IN),
    "erosion2d_same": (lambda tf, x: tf.nn.erosion2d(x, D_FILTER, [1, 2, 1, 1], "SAME",
                                                     "NHWC", [1, 2, 2, 1]), D_IN),
    "erosion2d_filter_grad": (lambda tf, x: tf.nn.erosion2d(
        tf.constant(D_IN), x, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]), D_FILTER),
}

F_IN = _x(2, 10, 9, 3)


def _global_seeded(tf, x):
    tf.random.set_seed(5)
    try:
        return tf.nn.fractional_max_pool(x, [1.0, 1.6, 1.3, 1.0], seed=11)[0]
    finally:
        tf.random.set_seed(None)


FRACTIONAL_FUNCS = {
    "fractional_max_random": (lambda tf, x: tf.nn.fractional_max_pool(
        x, [1.0, 1.44, 1.73, 1.0], seed=7)[0], F_IN),
    "fractional_max_pseudo_overlapping": (lambda tf, x: tf.nn.fractional_max_pool(
        x, 1.5, pseudo_random=True, overlapping=True, seed=3)[0], F_IN),
    "fractional_avg_random_overlapping": (lambda tf, x: tf.nn.fractional_avg_pool(
        x, [1.0, 2.0, 1.3, 1.0], overlapping=True, seed=12345)[0], F_IN),
    "fractional_avg_pseudo": (lambda tf, x: tf.nn.fractional_avg_pool(
        x, [1.0, 1.44, 1.73, 1.0], pseudo_random=True, seed=1)[0], F_IN),
    "fractional_max_global_seed": (_global_seeded, F_IN),
}

FLOAT32 = {"pool_avg_3d_dilated"}      # TensorFlow's CPU AvgPool3D has no float64 kernel

# TensorFlow 2.21's CPU build has no kernel for the V2 backprops (NotFoundError): their facts
# are those of the V1 ops they define (Conv2DBackpropFilter/Input with the sizes given).
V2_FUNCS = {
    "conv2d_backprop_filter_v2": (
        lambda tf, x: tf.conv2d_backprop_filter_v2(x, tf.zeros([3, 2, 3, 4], tf.float64), DY,
                                                   [1, 1, 1, 1], "SAME"),
        lambda tf, x: tf.compat.v1.nn.conv2d_backprop_filter(x, [3, 2, 3, 4], DY, [1, 1, 1, 1],
                                                             "SAME"), X4),
    "conv2d_backprop_input_v2": (
        lambda tf, x: tf.conv2d_backprop_input_v2(tf.zeros([2, 7, 6, 3], tf.float64), W4, x,
                                                  [1, 1, 1, 1], "SAME"),
        lambda tf, x: tf.compat.v1.nn.conv2d_backprop_input([2, 7, 6, 3], W4, x, [1, 1, 1, 1],
                                                            "SAME"), DY),
    "conv2d_backprop_filter_v2_explicit": (
        lambda tf, x: tf.conv2d_backprop_filter_v2(
            x, tf.zeros([3, 2, 3, 4], tf.float64), _x(2, 3, 5, 4), [1, 2, 1, 1], "EXPLICIT",
            explicit_paddings=[0, 0, 1, 0, 0, 0, 0, 0], dilations=[1, 1, 1, 1]),
        lambda tf, x: tf.compat.v1.nn.conv2d_backprop_filter(
            x, [3, 2, 3, 4], _x(2, 3, 5, 4), [1, 2, 1, 1], [[0, 0], [1, 0], [0, 0], [0, 0]]),
        X4),
}


def facts(tf, fn, x):
    """[*shape, sum(y * w), sum(dx * w2)] (dx of sum(y * w); nan where it is None, None
    where TensorFlow has no gradient at all)."""
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = fn(tf, xv)
        w = np.cos(0.23 * np.arange(int(np.prod(y.shape))) + 0.3).reshape(tuple(y.shape))
        loss = tf.reduce_sum(y * w)
    try:
        g = tape.gradient(loss, xv)
    except LookupError:                   # TensorFlow registers no gradient (its Conv op)
        return [float(v) for v in y.shape] + [float(loss.numpy()), None]
    w2 = np.cos(0.19 * np.arange(x.size) + 0.7).reshape(x.shape)
    dx = float("nan") if g is None else float(np.sum(np.asarray(g) * w2))
    return [float(v) for v in y.shape] + [float(loss.numpy()), dx]
