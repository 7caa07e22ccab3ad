"""The public tf.nn functions beyond conv_table.py (transposes in 1-D/3-D/N-D, atrous,
separable, depthwise backprops, pools by rank, space/depth/batch moves) against TensorFlow
2.21's facts, and their gradients against finite differences."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.testing import check_gradients

from conv import conv_functions
from conv.tf_facts import FUNCTIONS


@pytest.mark.parametrize("name", sorted(conv_functions.FUNCS))
def test_matches_tensorflow(name):
    want = FUNCTIONS[name]
    got = conv_functions.facts(tf, conv_functions.FUNCS[name])
    tol = dict(rtol=2e-5, atol=1e-4) if want[-1] else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, want, **tol)


def test_composites_differentiate():
    """space_to_depth & co. are reshapes and transposes: their gradients come for free."""
    x = np.sin(np.arange(2 * 4 * 6 * 3) * 0.3).reshape(2, 4, 6, 3)
    check_gradients(lambda v: tf.nn.depth_to_space(tf.nn.space_to_depth(v, 2) ** 2, 2), x,
                    order=1)
    check_gradients(lambda v: tf.batch_to_space(tf.space_to_batch(v, [2, 3], [[0, 0], [1, 2]])
                                                ** 2, [2, 3], [[0, 0], [1, 2]]), x, order=1)
    check_gradients(lambda v: tf.nn.separable_conv2d(v, tf.ones([2, 2, 3, 1], tf.float64),
                                                     tf.ones([1, 1, 3, 2], tf.float64),
                                                     [1, 1, 1, 1], "VALID") ** 2, x, order=2)


def test_argument_errors():
    x = tf.ones([1, 4, 4, 2])
    with pytest.raises(ValueError, match="strides should be of length 1, 2 or 4"):
        tf.nn.conv2d(x, tf.ones([2, 2, 2, 1]), [1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(x, tf.ones([2, 2, 2, 1]), 1, "same")
    with pytest.raises(ValueError, match="Explicit padding of the batch"):
        tf.nn.conv2d(x, tf.ones([2, 2, 2, 1]), 1, [[1, 0], [0, 0], [0, 0], [0, 0]])
    with pytest.raises(TypeError, match="Expected string for argument 'padding'"):
        tf.nn.avg_pool2d(x, 2, 1, [[0, 0], [1, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="rank 3, 4 or 5"):
        tf.nn.max_pool(tf.ones([4, 4]), 2, 2, "VALID")
    with pytest.raises(ValueError, match="divisible"):
        tf.nn.depth_to_space(tf.ones([1, 2, 2, 3]), 2)


@pytest.mark.parametrize("name", ["tapeflow.ops.conv", "tapeflow.ops.dilated",
                                  "tapeflow.ops.conv_raw", "tapeflow.keras.conv_layers",
                                  "tapeflow.keras.pooling_layers",
                                  "tapeflow.keras.adaptive_pooling", "tapeflow.ops.morphology",
                                  "tapeflow.ops.fractional_pool", "tapeflow.keras.conv_lstm"])
def test_docstring_examples_run(name, numpy_backend):
    import doctest
    import importlib
    import io
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    tests = finder.find(module, globs=dict(vars(module)), extraglobs={"tf": tf, "np": np})
    assert sum(len(t.examples) for t in tests) >= 2
    for test in tests:
        runner.run(test, out=out.write)
    assert runner.summarize(verbose=False).failed == 0, out.getvalue()
