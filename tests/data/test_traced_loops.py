"""``for x in dataset`` (and iterators) inside a ``tapeflow.function``: one While node whose body
is traced once, the elements fed at each call (data/traced.py). Expected values are TensorFlow
2.21's, printed from /work/tfvenv; semantics run on the interpreter (numpy_backend), one test
compiles."""
import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset
X = np.arange(30, dtype=np.float32).reshape(10, 3)
Y = np.arange(10, dtype=np.int64)


def _pipeline():
    return D.from_tensor_slices((X, Y)).batch(4).map(lambda a, b: (a * 2.0, b + 1)).prefetch(2)


def _whiles(concrete):
    return sum(node.op == "While" for node in concrete.graph.nodes)


def test_pipeline_elements_in_tf_order(numpy_backend):
    # TF 2.21's elements of from_tensor_slices -> batch -> map -> prefetch
    got = [(a.numpy().tolist(), b.numpy().tolist()) for a, b in _pipeline()]
    assert got == [([[0.0, 2.0, 4.0], [6.0, 8.0, 10.0], [12.0, 14.0, 16.0], [18.0, 20.0, 22.0]], [1, 2, 3, 4]),
                   ([[24.0, 26.0, 28.0], [30.0, 32.0, 34.0], [36.0, 38.0, 40.0], [42.0, 44.0, 46.0]], [5, 6, 7, 8]),
                   ([[48.0, 50.0, 52.0], [54.0, 56.0, 58.0]], [9, 10])]


def _stats(ds):
    total = tf.constant(0.0)
    sizes = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    last = tf.constant(-1, tf.int64)
    for step, (a, b) in enumerate(ds):
        total += tf.reduce_sum(a) * tf.cast(step + 1, tf.float32)
        sizes = sizes.write(tf.cast(step, tf.int32), tf.shape(a)[0])
        last = step
    return total, sizes.stack(), last


def _until(ds):
    total = tf.constant(0.0)
    for a, b in ds:
        if tf.reduce_sum(b) > 20:
            break
        total += tf.reduce_sum(a)
    return total


def test_loop_over_a_dataset_is_one_while_traced_once(numpy_backend):
    traces = []

    def counted(ds):
        traces.append(1)
        return _stats(ds)
    f = tf.function(counted)
    ds = _pipeline()
    for _ in range(2):
        total, sizes, last = f(ds)
        # TF 2.21: 1926.0, [4 4 2] (the last batch has 2 rows), step 2 as int64
        assert float(total) == 1926.0 and sizes.numpy().tolist() == [4, 4, 2]
        assert last.dtype == tf.int64 and int(last) == 2
    assert len(traces) == 1 and f.experimental_get_tracing_count() == 1
    concrete = f.get_concrete_function(ds)
    assert _whiles(concrete) == 1
    # the graph does not grow with the data: a dataset of 25 batches gives the same graph
    bigger = D.from_tensor_slices((np.tile(X, (10, 1)), np.tile(Y, 10))).batch(4)
    assert len(f.get_concrete_function(bigger).graph.nodes) == len(concrete.graph.nodes)
    eager = _stats(ds)          # compiled == eager
    assert float(eager[0]) == 1926.0 and eager[1].numpy().tolist() == [4, 4, 2]
    # break on a tensor (TF 2.21: 132.0), dict elements (TF 2.21: 390.0)
    assert float(tf.function(_until)(ds)) == 132.0 == float(_until(ds))

    @tf.function
    def dict_sum(ds):
        s = tf.constant(0.0)
        for e in ds:
            s += tf.reduce_sum(e["u"]) - tf.cast(tf.reduce_sum(e["v"]), tf.float32)
        return s
    assert float(dict_sum(D.from_tensor_slices({"u": X, "v": Y}).batch(3))) == 390.0


def test_dataset_loops_nest_branch_and_inline(numpy_backend, tmp_path):
    # TF 2.21: 90 (a function calling one that loops), 135 (inside a tf.range loop, three
    # times 45), 45 and -1 (in one side of a tensor `if`)
    ds = D.range(10).batch(3)

    @tf.function
    def inner():
        s = tf.constant(0, tf.int64)
        for x in ds:
            s += tf.reduce_sum(x)
        return s

    @tf.function
    def outer():
        return inner() * 2

    @tf.function
    def nested(n):
        t = tf.constant(0, tf.int64)
        for i in tf.range(n):
            for x in ds:
                t += tf.reduce_sum(x)
        return t

    @tf.function
    def branch(c):
        if c > 0:
            s = tf.constant(0, tf.int64)
            for x in ds:
                s += tf.reduce_sum(x)
        else:
            s = tf.constant(-1, tf.int64)
        return s
    assert int(outer()) == 90 and int(outer()) == 90
    module = tf.Module()
    module.total = inner
    with pytest.raises(ValueError, match="iterates a tf.data dataset"):   # not saved (TF saves it)
        tf.saved_model.save(module, str(tmp_path))
    assert int(nested(tf.constant(3))) == 135
    assert int(branch(tf.constant(1))) == 45 and int(branch(tf.constant(-1))) == -1


def test_shuffled_loop_reshuffles_per_call_reproducibly(numpy_backend):
    def orders(seed):
        ds = D.from_tensor_slices(np.arange(12)).shuffle(12, seed=seed).batch(5)

        @tf.function
        def firsts():
            out = tf.TensorArray(tf.int64, size=0, dynamic_size=True, infer_shape=False)
            i = 0
            for x in ds:
                out = out.write(i, x)
                i += 1
            return out.concat()
        return [firsts().numpy().tolist() for _ in range(3)]
    a = orders(7)
    assert all(sorted(o) == list(range(12)) for o in a)     # the same multiset each epoch
    assert a[0] != a[1] or a[1] != a[2]                      # reshuffled per call, as TF
    assert orders(7) == a                                    # a fixed seed: the same orders


def test_iterators_inside_a_function(numpy_backend):
    # TF 2.21: next(it) gives [0 1], [2 3], [4 5], [6], then OutOfRangeError; one trace
    ds = D.range(7).batch(2)
    it = iter(ds)
    take = tf.function(lambda it: next(it))
    assert [take(it).numpy().tolist() for _ in range(4)] == [[0, 1], [2, 3], [4, 5], [6]]
    with pytest.raises(tf.errors.OutOfRangeError):
        take(it)
    assert take.experimental_get_tracing_count() == 1

    @tf.function
    def rest(it):
        s = tf.constant(0, tf.int64)
        for x in it:
            s += tf.reduce_sum(x)
        return s
    it = iter(ds)
    next(it)
    assert int(rest(it)) == 20 and int(rest(it)) == 0      # TF 2.21: 20, then 0 (used up)

    @tf.function
    def fresh():
        s = tf.constant(0, tf.int64)
        for x in iter(ds):          # made inside: a new iterator per call
            s += tf.reduce_sum(x)
        return s
    assert int(fresh()) == 21 and int(fresh()) == 21       # TF 2.21: 21, 21


def test_unfed_dataset_unrolls_and_warns_when_shuffled(numpy_backend):
    # padded_batch pads each batch to its longest element: a component of unknown size, so
    # the loop is unrolled with the order drawn at trace time (the warning says so)
    ds = D.range(1, 5).map(lambda n: tf.fill([n], n)).shuffle(4, seed=1).padded_batch(2)

    @tf.function
    def total():
        s = tf.constant(0, tf.int64)
        for x in ds:
            s += tf.reduce_sum(x)
        return s
    with pytest.warns(UserWarning, match="order drawn at trace time"):
        assert int(total()) == 30

    @tf.function
    def forever():
        s = tf.constant(0, tf.int64)
        for x in D.range(3).repeat():
            s += x
        return s
    with pytest.raises(ValueError, match="infinite dataset"):
        forever()


def _linear_problem():
    rng = np.random.RandomState(0)
    x = rng.randn(20, 3).astype(np.float32)
    y = (x @ np.array([[1.], [-2.], [0.5]], np.float32) + 0.1).astype(np.float32)
    w, b = tf.Variable(np.zeros((3, 1), np.float32)), tf.Variable(0.0)

    def epoch(ds):      # one epoch of SGD inside the function: the variables are loop state
        losses = tf.constant(0.0)
        for xb, yb in ds:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((xb @ w + b - yb) ** 2)
            gw, gb = tape.gradient(loss, [w, b])
            w.assign_sub(0.1 * gw)
            b.assign_sub(0.1 * gb)
            losses += loss
        return losses
    return x, y, w, b, epoch


def test_training_loop_over_a_dataset(numpy_backend):
    # TF 2.21 trains this linear model (zeros initial weights, SGD 0.1, batches of 6, the last
    # of 2) for 3 epochs: epoch losses [12.157175, 2.4006552, 0.55188376],
    # w [0.96976680, -1.7978991, 0.32729498], b 0.015784774
    x, y, w, b, epoch = _linear_problem()
    compiled = tf.function(epoch)
    ds = D.from_tensor_slices((x, y)).batch(6)
    got = [float(compiled(ds)) for _ in range(3)]
    np.testing.assert_allclose(got, [12.157175, 2.4006552, 0.55188376], rtol=2e-6)
    np.testing.assert_allclose(w.numpy().ravel(), [0.9697668, -1.7978991, 0.32729498], rtol=2e-6)
    np.testing.assert_allclose(float(b.numpy()), 0.015784774, rtol=2e-5)
    assert _whiles(compiled.get_concrete_function(ds)) == 1
    w.assign(np.zeros((3, 1), np.float32))
    b.assign(0.0)
    np.testing.assert_allclose([float(epoch(ds)) for _ in range(3)], got, rtol=1e-6)   # eager


@pytest.mark.slow
@pytest.mark.parametrize("drop_remainder", [True, False])
def test_training_loop_over_a_dataset_is_one_numba_program(drop_remainder):
    # batches of a known size (drop_remainder), and batches whose size only the run knows (the
    # last one smaller: each batch one gather of its rows), both compile to one Numba program
    x, y, w, b, epoch = _linear_problem()
    compiled = tf.function(epoch, jit_compile=True)
    ds = D.from_tensor_slices((x, y)).batch(6, drop_remainder=drop_remainder)
    first = float(compiled(ds))
    concrete = compiled.get_concrete_function(ds)
    assert _whiles(concrete) == 1
    assert [p.fallback for p in concrete._specialized.values()] == [None]    # Numba's
    w.assign(np.zeros((3, 1), np.float32))
    b.assign(0.0)
    np.testing.assert_allclose(first, float(epoch(ds)), rtol=1e-6)


def test_reduce_inside_a_function_is_one_loop(numpy_backend):
    ds = D.range(5).shuffle(5, seed=1)

    @tf.function
    def total(s0):
        return ds.reduce(s0, lambda s, x: s + x * 2)

    @tf.function
    def digits():
        return ds.reduce(tf.constant(0, tf.int64), lambda s, x: s * 10 + x)
    # TF 2.21: 21 and 23 (a state from the argument); the digits a new order per call
    assert int(total(tf.constant(1, tf.int64))) == 21 and int(total(tf.constant(3, tf.int64))) == 23
    orders = {str(int(digits())).zfill(5) for _ in range(4)}
    assert all(sorted(o) == list("01234") for o in orders) and len(orders) > 1
    assert _whiles(digits.get_concrete_function()) == 1
    pairs = D.from_tensor_slices((np.arange(6.0, dtype=np.float32), np.arange(6))).batch(4)

    def fold(st, e):        # TF passes the element whole: (15.0, 6)
        return st[0] + tf.reduce_sum(e[0]), st[1] + tf.size(e[1], out_type=tf.int64)
    start = (tf.constant(0.0), tf.constant(0, tf.int64))
    for got in (tf.function(lambda: pairs.reduce(start, fold))(), pairs.reduce(start, fold)):
        assert (float(got[0]), int(got[1])) == (15.0, 6)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        pairs.reduce(tf.constant(0.0), lambda st, a, b: st)    # TF 2.21's TypeError too
