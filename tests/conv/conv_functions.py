"""The public functions not in conv_table.py, each as ``fn(tf) -> tensor`` on fixed inputs, for
test_conv_functions.py (values) and make_tf_facts.py (TensorFlow 2.21's)."""
import numpy as np


def _x(*shape, phase=0.1):
    return np.sin(0.37 * np.arange(int(np.prod(shape))) + phase).reshape(shape)


X4, X3, X5 = _x(2, 7, 6, 3), _x(2, 9, 3), _x(1, 5, 4, 3, 2)
W4 = _x(3, 2, 3, 4, phase=0.5)
FUNCS = {
    "conv1d_transpose": lambda tf: tf.nn.conv1d_transpose(X3, _x(3, 2, 3), [2, 18, 2], 2),
    "conv1d_transpose_valid": lambda tf: tf.nn.conv1d_transpose(X3, _x(3, 2, 3), [2, 19, 2], 2,
                                                                "VALID"),
    "conv3d_transpose": lambda tf: tf.nn.conv3d_transpose(X5, _x(2, 2, 2, 3, 2), [1, 10, 8, 6, 3],
                                                          [1, 2, 2, 2, 1]),
    "conv_transpose": lambda tf: tf.nn.conv_transpose(X4, _x(3, 3, 2, 3), [2, 14, 12, 2], 2),
    "conv2d_transpose_dilated": lambda tf: tf.nn.conv2d_transpose(
        X4.astype(np.float32), _x(3, 3, 2, 3).astype(np.float32), [2, 7, 6, 2], 1, dilations=2),
    "convolution_1d": lambda tf: tf.nn.convolution(X3, _x(2, 3, 4), 1, "SAME"),
    "convolution_2d": lambda tf: tf.nn.convolution(X4, W4, [2, 1], "VALID", dilations=None),
    "convolution_3d": lambda tf: tf.nn.convolution(X5, _x(2, 2, 2, 2, 3), padding="SAME"),
    "conv1d_ncw": lambda tf: tf.nn.conv1d(np.transpose(X3, [0, 2, 1]).astype(np.float32),
                                          _x(3, 3, 4).astype(np.float32), 1, "SAME",
                                          data_format="NCW"),
    "atrous_conv2d": lambda tf: tf.nn.atrous_conv2d(X4, W4, 2, "SAME"),
    "atrous_conv2d_transpose": lambda tf: tf.nn.atrous_conv2d_transpose(
        X4.astype(np.float32), _x(3, 3, 2, 3).astype(np.float32), [2, 7, 6, 2], 2, "SAME"),
    "separable_conv2d": lambda tf: tf.nn.separable_conv2d(X4, _x(3, 3, 3, 2), _x(1, 1, 6, 5),
                                                          [1, 1, 1, 1], "SAME"),
    "depthwise_backprop_input": lambda tf: tf.nn.depthwise_conv2d_backprop_input(
        [2, 7, 6, 3], _x(3, 2, 3, 2), _x(2, 4, 3, 6), [1, 2, 2, 1], "SAME"),
    "depthwise_backprop_filter": lambda tf: tf.nn.depthwise_conv2d_backprop_filter(
        X4, [3, 2, 3, 2], _x(2, 4, 3, 6), [1, 2, 2, 1], "SAME"),
    "max_pool_1d": lambda tf: tf.nn.max_pool(X3, 3, 2, "SAME"),
    "max_pool1d": lambda tf: tf.nn.max_pool1d(X3, [2], [1], "VALID"),
    "avg_pool1d": lambda tf: tf.nn.avg_pool1d(X3, 3, 2, "SAME"),
    "avg_pool_3d": lambda tf: tf.nn.avg_pool(X5.astype(np.float32), 2, 1, "SAME"),
    "max_pool_4d": lambda tf: tf.nn.max_pool(X4.astype(np.float32), [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    "pool_max": lambda tf: tf.nn.pool(X4, [2, 3], "MAX", [1, 2], "SAME"),
    "pool_avg": lambda tf: tf.nn.pool(X4, [3, 2], "AVG", padding="VALID"),
    "space_to_depth": lambda tf: tf.nn.space_to_depth(_x(2, 4, 6, 3), 2),
    "depth_to_space": lambda tf: tf.nn.depth_to_space(_x(2, 2, 3, 8), 2),
    "space_to_batch": lambda tf: tf.space_to_batch(_x(2, 4, 6, 3), [2, 3], [[0, 0], [1, 2]]),
    "batch_to_space": lambda tf: tf.batch_to_space(_x(12, 2, 3, 3), [2, 3], [[0, 1], [1, 2]]),
    "nn_space_to_batch": lambda tf: tf.nn.space_to_batch(_x(2, 4, 6, 3), [2, 2], [[1, 1], [0, 2]]),
}


def facts(tf, fn):
    y = fn(tf)
    w = np.cos(0.23 * np.arange(int(np.prod(y.shape))) + 0.3).reshape(tuple(y.shape))
    return [float(v) for v in y.shape] + [float(np.sum(np.asarray(y.numpy(), np.float64) * w)),
                                          float(y.dtype == tf.float32)]
