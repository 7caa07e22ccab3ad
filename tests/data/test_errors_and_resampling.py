"""Dataset.ignore_errors (and how an element's error travels: iterators survive it, batches and
zips fail with it, take/skip do not count it) and Dataset.rejection_resample, against what
TensorFlow 2.21 returns for the same pipelines."""
import logging

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.data.resampling import acceptance_probs_with_mixing

# semantics, not codegen: traced functions run on the NumPy interpreter (no compile time)
pytestmark = pytest.mark.usefixtures("numpy_backend")


def _reciprocals(values):
    ds = tf.data.Dataset.from_tensor_slices(np.array(values, np.float32))
    return ds.map(lambda x: tf.debugging.check_numerics(1. / x, "error"))


SEVEN = [1., 2., 0., 4., 5., 0., 7.]
# TF 2.21's elements for each pipeline over 1/x of SEVEN (0 fails check_numerics)
CASES = {
    "plain": (lambda d: d.ignore_errors(), [1.0, 0.5, 0.25, 0.2, 0.1428571492433548]),
    "batch2": (lambda d: d.batch(2).ignore_errors(), [[1.0, 0.5], [0.1428571492433548]]),
    "batch3": (lambda d: d.batch(3).ignore_errors(), [[0.1428571492433548]]),
    "take4": (lambda d: d.take(4).ignore_errors(), [1.0, 0.5, 0.25, 0.2]),
    "skip2": (lambda d: d.skip(2).ignore_errors(), [0.25, 0.2, 0.1428571492433548]),
    "filter": (lambda d: d.filter(lambda x: x > 0.3).ignore_errors(), [1.0, 0.5]),
    "enumerate": (lambda d: d.enumerate().ignore_errors(),
                  [(0, 1.0), (1, 0.5), (3, 0.25), (4, 0.2), (6, 0.1428571492433548)]),
    "repeat": (lambda d: d.take(3).repeat(2).ignore_errors(), [1.0, 0.5, 0.25, 1.0, 0.5, 0.25]),
    # batch not right after a map: the error comes out alone, the next batch starts after it
    "filter-batch": (lambda d: d.filter(lambda x: True).batch(2).ignore_errors(),
                     [[1.0, 0.5], [0.25, 0.2], [0.1428571492433548]]),
    "prefetch-batch": (lambda d: d.prefetch(1).batch(2).ignore_errors(), [[1.0, 0.5], [0.25, 0.2], [0.1428571492433548]]),
    "padded_batch": (lambda d: d.padded_batch(2).ignore_errors(), [[1.0, 0.5], [0.25, 0.2], [0.1428571492433548]]),
    "scan": (lambda d: d.scan(0., lambda s, x: (s + x, s + x)).ignore_errors(),
             [1.0, 1.5, 1.75, 1.95, 2.0928571224212646]),
    "unbatch": (lambda d: d.map(lambda x: tf.stack([x, x])).unbatch().ignore_errors(),
                [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2, 0.1428571492433548, 0.1428571492433548]),
    "flat_map": (lambda d: d.flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(2)).ignore_errors(),
                 [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2, 0.1428571492433548, 0.1428571492433548]),
}


def _rounded(x):
    if isinstance(x, (tuple, list)):
        return [_rounded(v) for v in x]
    return round(float(x), 6)


@pytest.mark.parametrize("case", list(CASES))
def test_ignore_errors_pipelines(case):
    build, expected = CASES[case]
    got = [np.asarray(x).tolist() if not isinstance(x, tuple) else x
           for x in build(_reciprocals(SEVEN)).as_numpy_iterator()]
    assert _rounded(got) == _rounded(expected)


def test_an_iterator_raises_the_error_and_goes_on():
    it, out = iter(_reciprocals(SEVEN)), []
    while True:
        try:
            out.append(round(float(next(it)), 4))
        except tf.errors.InvalidArgumentError:
            out.append("error")
        except StopIteration:
            break
    assert out == [1.0, 0.5, "error", 0.25, 0.2, "error", 0.1429]       # TF 2.21's


def test_a_failing_predicate_and_the_log(caplog):
    ds = tf.data.Dataset.from_tensor_slices(np.array([1., 2., 0., 4.], np.float32))
    ds = ds.filter(lambda x: tf.debugging.check_numerics(1. / x, "e") > 0.3)
    assert [float(x) for x in ds.ignore_errors()] == [1.0, 2.0]
    assert int(ds.ignore_errors().cardinality()) == -2
    with caplog.at_level(logging.WARNING, logger="tapeflow"):
        assert len(list(_reciprocals([0., 1.]).ignore_errors(log_warning=True))) == 1
    assert "Error raised with error message" in caplog.text
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(_reciprocals([0.]).as_numpy_iterator())
    with pytest.raises(tf.errors.InvalidArgumentError):
        _reciprocals(SEVEN).reduce(0., lambda s, x: s + x)
    assert repr(tf.data.Dataset.range(3).prefetch(1)) == \
        "<_PrefetchDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"


def test_acceptance_probabilities_are_tfs():
    accept, m = acceptance_probs_with_mixing([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    np.testing.assert_allclose(accept, [0.0, 0.2857142984867096, 1.0], rtol=1e-6)   # TF 2.21's
    assert m == pytest.approx(0.4000000059604645)


CLASSES = np.array([0] * 90 + [1] * 10, np.int32)


def test_rejection_resample_deterministic_cases():
    ds = tf.data.Dataset.from_tensor_slices(CLASSES)
    same = ds.rejection_resample(lambda c: c, [0.9, 0.1], initial_dist=[0.9, 0.1])
    out = [(int(c), int(x)) for c, x in same.as_numpy_iterator()]
    assert out == [(int(c), int(c)) for c in CLASSES]                     # target = initial: all, in order
    only_ones = ds.rejection_resample(lambda c: c, [0.0, 1.0], initial_dist=[0.9, 0.1], seed=1)
    assert [int(c) for c, _ in only_ones] == [1] * 10
    pairs = tf.data.Dataset.from_tensor_slices((CLASSES, CLASSES.astype(np.float32)))
    spec = pairs.rejection_resample(lambda c, f: c, [0.5, 0.5], seed=1).element_spec
    assert repr(spec) == ("(TensorSpec(shape=(), dtype=tf.int32, name=None), (TensorSpec(shape=(), "
                          "dtype=tf.int32, name=None), TensorSpec(shape=(), dtype=tf.float32, name=None)))")
    assert int(pairs.rejection_resample(lambda c, f: c, [0.5, 0.5]).cardinality()) == -2
    with pytest.raises(ValueError, match="integer scalar"):
        pairs.rejection_resample(lambda c, f: f, [0.5, 0.5])


def _resampled(initial):
    tf.random.set_seed(3)
    features = np.arange(100, dtype=np.float32)
    ds = tf.data.Dataset.from_tensor_slices((CLASSES, features)).shuffle(100, seed=1).repeat()
    ds = ds.rejection_resample(lambda c, f: c, [0.5, 0.5], initial_dist=initial, seed=2)
    return list(ds.take(800).as_numpy_iterator())


@pytest.mark.parametrize("initial", [[0.9, 0.1], None])
def test_rejection_resample_reaches_the_target(initial):
    out = _resampled(initial)
    classes = np.array([c for c, _ in out])
    assert 0.44 < classes.mean() < 0.56                                   # the data has 10% ones
    assert all(c == inner == CLASSES[int(f)] for c, (inner, f) in out)   # each element intact
    again = _resampled(initial)                                          # seeded: the same draws
    assert [int(f) for _, (_, f) in again] == [int(f) for _, (_, f) in out]
