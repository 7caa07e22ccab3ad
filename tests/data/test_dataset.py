"""tf.data for in-memory data: elements, order, specs and cardinality as TensorFlow 2.21 gives
them (the expected values below are TF 2.21's, printed from /work/tfvenv)."""
import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset


def _plain(e):
    if isinstance(e, dict):
        return {k: _plain(v) for k, v in e.items()}
    if isinstance(e, tuple):
        return tuple(_plain(v) for v in e)
    return np.asarray(e).tolist()


def _spec(shape, dtype):
    return tf.TensorSpec(shape, dtype)


def _fill(x):
    return tf.fill([x], x)


# (name, dataset builder, TF 2.21's elements, TF 2.21's cardinality, TF's element_spec repr)
CASES = [
    ("slices", lambda: D.from_tensor_slices(np.arange(6.).reshape(3, 2)),
     [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], 3, "TensorSpec(shape=(2,), dtype=tf.float64, name=None)"),
    ("slices_list", lambda: D.from_tensor_slices([1., 2., 3.]), [1.0, 2.0, 3.0], 3,
     "TensorSpec(shape=(), dtype=tf.float32, name=None)"),
    ("slices_tuple", lambda: D.from_tensor_slices(([1, 2, 3], [4, 5, 6])), [(1, 4), (2, 5), (3, 6)], 3,
     "(TensorSpec(shape=(), dtype=tf.int32, name=None), TensorSpec(shape=(), dtype=tf.int32, name=None))"),
    ("slices_dict", lambda: D.from_tensor_slices({"a": [1, 2], "b": [[1., 2.], [3., 4.]]}),
     [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}], 2, None),
    ("tensors", lambda: D.from_tensors([1, 2, 3]), [[1, 2, 3]], 1,
     "TensorSpec(shape=(3,), dtype=tf.int32, name=None)"),
    ("range", lambda: D.range(5), [0, 1, 2, 3, 4], 5, "TensorSpec(shape=(), dtype=tf.int64, name=None)"),
    ("range2", lambda: D.range(2, 10, 3), [2, 5, 8], 3, None),
    ("batch", lambda: D.range(7).batch(3), [[0, 1, 2], [3, 4, 5], [6]], 3,
     "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"),
    ("batch_drop", lambda: D.range(7).batch(3, drop_remainder=True), [[0, 1, 2], [3, 4, 5]], 2,
     "TensorSpec(shape=(3,), dtype=tf.int64, name=None)"),
    ("padded", lambda: D.range(1, 5).map(_fill).padded_batch(2),
     [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]], 2,
     "TensorSpec(shape=(None, None), dtype=tf.int64, name=None)"),
    ("padded2", lambda: D.range(1, 5).map(_fill).padded_batch(
        2, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64)),
     [[[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]], [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]], 2,
     "TensorSpec(shape=(None, 5), dtype=tf.int64, name=None)"),
    ("unbatch", lambda: D.range(7).batch(3).unbatch(), [0, 1, 2, 3, 4, 5, 6], -2, None),
    ("filter", lambda: D.range(10).filter(lambda x: x % 3 == 0), [0, 3, 6, 9], -2, None),
    ("repeat", lambda: D.range(3).repeat(2), [0, 1, 2, 0, 1, 2], 6, None),
    ("take_skip", lambda: D.range(10).skip(2).take(3), [2, 3, 4], 3, None),
    ("take_neg", lambda: D.range(4).take(-1), [0, 1, 2, 3], 4, None),
    ("enumerate", lambda: D.range(3).map(lambda x: x * 10).enumerate(start=5),
     [(5, 0), (6, 10), (7, 20)], 3, None),
    ("concat", lambda: D.range(3).concatenate(D.range(5, 7)), [0, 1, 2, 5, 6], 5, None),
    ("zip", lambda: D.zip(D.range(3), D.range(10, 14)), [(0, 10), (1, 11), (2, 12)], 3, None),
    ("zip_nested", lambda: D.zip((D.range(3), (D.range(3), D.range(3)))),
     [(0, (0, 0)), (1, (1, 1)), (2, (2, 2))], 3, None),
    ("window", lambda: D.range(7).window(3, shift=2).flat_map(lambda w: w.batch(3)),
     [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]], -2, None),
    ("window_drop", lambda: D.range(7).window(3, shift=2, stride=2, drop_remainder=True).flat_map(
        lambda w: w.batch(3)), [[0, 2, 4], [2, 4, 6]], -2, None),
    ("scan", lambda: D.range(5).scan(np.int64(0), lambda s, x: (s + x, s * 2)), [0, 0, 2, 6, 12], 5, None),
    ("flat_map", lambda: D.range(3).flat_map(lambda x: D.from_tensors(x).repeat(x)), [1, 2, 2], -2, None),
    ("interleave", lambda: D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(3), cycle_length=2,
                                                    block_length=2), [1, 1, 2, 2, 1, 2, 3, 3, 3], -2, None),
    ("unique", lambda: D.from_tensor_slices([1, 2, 1, 3, 2]).unique(), [1, 2, 3], -2, None),
    ("take_while", lambda: D.range(10).take_while(lambda x: x < 4), [0, 1, 2, 3], -2, None),
    ("shard", lambda: D.range(10).shard(3, 1), [1, 4, 7], 3, None),
    ("rebatch", lambda: D.range(10).batch(4).rebatch(3), [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]], -2, None),
    ("infinite_take", lambda: D.range(3).repeat().take(7), [0, 1, 2, 0, 1, 2, 0], 7, None),
    ("gen", lambda: D.from_generator(lambda: iter([(1, [1., 2.]), (2, [3., 4.])]), output_signature=(
        tf.TensorSpec((), tf.int32), tf.TensorSpec((2,), tf.float32))),
     [(1, [1.0, 2.0]), (2, [3.0, 4.0])], -2, None),
    ("map_tuple", lambda: D.from_tensor_slices(([1., 2.], [3, 4])).map(
        lambda a, b: a * tf.cast(b, tf.float32)), [3.0, 8.0], 2, None),
    ("map_dict", lambda: D.from_tensor_slices({"a": [1., 2.]}).map(lambda d: d["a"] + 1), [2.0, 3.0], 2, None),
    ("counter", lambda: D.counter(start=3).take(3), [3, 4, 5], 3, None),
    ("choose", lambda: D.choose_from_datasets([D.range(3), D.range(10, 13)], D.from_tensor_slices(
        np.array([0, 1, 1, 0], np.int64))), [0, 10, 11, 1], -2, None),
    ("bucket", lambda: D.range(1, 8).map(_fill).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], bucket_boundaries=[3, 5], bucket_batch_sizes=[2, 2, 2]),
     [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]], [[5, 5, 5, 5, 5, 0], [6, 6, 6, 6, 6, 6]],
      [[7, 7, 7, 7, 7, 7, 7]]], -2, None),
    ("group_by_window", lambda: D.range(10).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda k, ds: ds.batch(3), window_size=3),
     [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]], -2, None),
]


@pytest.mark.parametrize("name,build,elements,card,spec", CASES, ids=[c[0] for c in CASES])
def test_elements_order_cardinality(name, build, elements, card, spec):
    ds = build()
    assert [_plain(e) for e in ds.as_numpy_iterator()] == elements
    assert int(ds.cardinality()) == card
    if spec is not None:
        assert repr(ds.element_spec) == spec


def test_constants_reduce_single_element_and_types():
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY, tf.data.AUTOTUNE) == (-1, -2, -1)
    assert int(D.range(5).reduce(np.int64(0), lambda s, x: s + x)) == 10
    assert int(D.from_tensors(5).get_single_element()) == 5
    first = next(iter(D.from_tensor_slices((np.zeros(2), [1, 2]))))
    assert all(isinstance(t, tf.Tensor) for t in first)
    assert (first[0].dtype, first[1].dtype) == (tf.float64, tf.int32)
    assert isinstance(next(D.range(3).as_numpy_iterator()), np.int64)
    assert repr(D.range(3)) == "<_RangeDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert len(D.range(7).batch(3)) == 3
    with pytest.raises(TypeError):
        len(D.range(3).repeat())
    with pytest.raises(tf.errors.InvalidArgumentError):
        D.range(2).get_single_element()


def test_map_traced_once_and_spec():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1
    ds = D.range(5).batch(2).map(f, num_parallel_calls=tf.data.AUTOTUNE)
    assert [_plain(e) for e in ds] == [[1, 2], [3, 4], [5]]
    list(ds)
    assert len(calls) == 1      # TF 2.21: 1
    assert repr(ds.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"


def test_shuffle_multiset_and_reproducibility():
    ds = D.range(10).shuffle(10, seed=1)
    a, b = list(ds.as_numpy_iterator()), list(ds.as_numpy_iterator())
    assert sorted(a) == sorted(b) == list(range(10))
    assert a != b                                   # reshuffled each iteration, as TF
    again = D.range(10).shuffle(10, seed=1)
    assert list(again.as_numpy_iterator()) == a     # the same seed, the same orders
    fixed = D.range(10).shuffle(4, seed=1, reshuffle_each_iteration=False)
    assert list(fixed.as_numpy_iterator()) == list(fixed.as_numpy_iterator())
    assert sorted(fixed.as_numpy_iterator()) == list(range(10))


def test_pipeline_batches_are_views_or_one_gather():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    ds = D.from_tensor_slices((x, np.arange(10))).batch(4)
    first = next(ds._iterate())
    assert np.shares_memory(first[0], x)             # consecutive rows: a view
    shuffled = D.from_tensor_slices(x).shuffle(10, seed=0).batch(4).map(lambda v: v * 2.0).prefetch(2)
    rows = np.concatenate([b.numpy() for b in shuffled])
    assert sorted(rows[:, 0].tolist()) == sorted((2 * x[:, 0]).tolist())


def test_for_loop_inside_function_is_one_trace():
    traces = []

    @tf.function
    def total(ds):
        traces.append(1)
        s = tf.constant(0, tf.int64)
        for x in ds:
            s += tf.reduce_sum(x)
        return s
    ds = D.range(10).batch(3)
    assert int(total(ds)) == 45     # TF 2.21: 45
    assert int(total(ds)) == 45
    assert len(traces) == 1


def test_fit_evaluate_predict_take_a_dataset():
    rng = np.random.RandomState(0)
    x = rng.randn(48, 3).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    train = D.from_tensor_slices((x, y)).shuffle(48, seed=1).batch(16).prefetch(tf.data.AUTOTUNE)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    history = model.fit(train, epochs=4, verbose=0, validation_data=D.from_tensor_slices((x, y)).batch(16))
    losses = history.history["loss"]
    assert losses[-1] < losses[0] / 4 and len(history.history["val_loss"]) == 4
    assert model.predict(D.from_tensor_slices(x).batch(10), verbose=0).shape == (48, 1)
    assert model.evaluate(D.from_tensor_slices((x, y)).batch(16), verbose=0) < losses[0]
    steps = model.fit(train.repeat(), epochs=2, steps_per_epoch=2, verbose=0)
    assert len(steps.history["loss"]) == 2
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(train.repeat(), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="`y` should not be passed"):
        model.fit(train, y, verbose=0)
