"""tf.IndexedSlices: the gradient of gather/embedding_lookup along axis 0, its aggregation, its
densification and its consumers. Every expected value is TensorFlow 2.21's (asked from
/work/tfvenv), written as a literal."""
import numpy as np
import pytest

import tapeflow as tf

V = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def _parts(g):
    """(indices, values, dense_shape, indices dtype) of an IndexedSlices."""
    assert isinstance(g, tf.IndexedSlices), type(g)
    return (g.indices.numpy().tolist(), g.values.numpy().tolist(), g.dense_shape.numpy().tolist(),
            g.indices.dtype.name)


def _grad(f, persistent=False):
    v = tf.Variable(V)
    with tf.GradientTape(persistent=persistent) as t:
        y = f(v)
    return t.gradient(y, v)


# (name, loss of the variable v, TF 2.21's (indices, values, dense_shape, indices dtype))
SPARSE = [
    ("gather", lambda v: tf.reduce_sum(tf.gather(v, [2, 0, 2]) * [[1.0, 2.0]]),
     ([2, 0, 2], [[1, 2], [1, 2], [1, 2]], [3, 2], "int32")),
    # TF's tape runs ops in queue order from the target: the shorter path's slices come first
    ("order_by_depth", lambda v: tf.reduce_sum(tf.gather(v, [0]) * 2.0) + tf.reduce_sum(tf.gather(v, [1])),
     ([1, 0], [[1, 1], [2, 2]], [3, 2], "int32")),
    ("order_three", lambda v: tf.reduce_sum(tf.gather(v, [2])) + tf.reduce_sum(tf.gather(v, [0]))
     + tf.reduce_sum(tf.gather(v, [1])), ([1, 2, 0], [[1, 1]] * 3, [3, 2], "int32")),
    ("order_concat", lambda v: tf.reduce_sum(tf.concat([tf.gather(v, [1]), tf.gather(v, [0])], 0)),
     ([1, 0], [[1, 1]] * 2, [3, 2], "int32")),
    # int32 and int64 indices together: all int64
    ("mixed_index_dtypes", lambda v: tf.reduce_sum(tf.gather(v, tf.constant([0], tf.int64)))
     + tf.reduce_sum(tf.gather(v, [1])), ([0, 1], [[1, 1]] * 2, [3, 2], "int64")),
    ("int64_indices", lambda v: tf.reduce_sum(tf.gather(v, tf.constant([0], tf.int64))),
     ([0], [[1, 1]], [3, 2], "int64")),
    ("cast_passes_it_on", lambda v: tf.reduce_sum(tf.gather(tf.cast(v, tf.float64), [1])),
     ([1], [[1, 1]], [3, 2], "int32")),
    ("identity_passes_it_on", lambda v: tf.reduce_sum(tf.gather(tf.identity(v), [1])),
     ([1], [[1, 1]], [3, 2], "int32")),
    ("reshape_after", lambda v: tf.reduce_sum(tf.reshape(tf.gather(v, [1, 0]), [-1])),
     ([1, 0], [[1, 1]] * 2, [3, 2], "int32")),
    ("gather_of_gather", lambda v: tf.reduce_sum(tf.gather(tf.gather(v, [2, 1]), [1])),
     ([2, 1], [[0, 0], [1, 1]], [3, 2], "int32")),
    ("scalar_index", lambda v: tf.reduce_sum(tf.gather(v, 1)), ([1], [[1, 1]], [3, 2], "int32")),
    ("matrix_indices", lambda v: tf.reduce_sum(tf.gather(v, [[1, 1], [0, 2]])),
     ([1, 1, 0, 2], [[1, 1]] * 4, [3, 2], "int32")),
    ("embedding_lookup", lambda v: tf.reduce_sum(tf.nn.embedding_lookup(v, [1, 1])),
     ([1, 1], [[1, 1]] * 2, [3, 2], "int32")),
    ("read_value", lambda v: tf.reduce_sum(tf.gather(v.read_value(), [1])),
     ([1], [[1, 1]], [3, 2], "int32")),
]

# (name, loss, TF 2.21's dense gradient)
DENSE = [
    ("gather_and_dense", lambda v: tf.reduce_sum(tf.gather(v, [0])) + tf.reduce_sum(v * v),
     [[3, 5], [6, 8], [10, 12]]),
    ("axis_1", lambda v: tf.reduce_sum(tf.gather(v, [1, 1], axis=1)), [[0, 2], [0, 2], [0, 2]]),
    ("multiplied_first", lambda v: tf.reduce_sum(tf.gather(v * 2.0, [1])), [[0, 0], [2, 2], [0, 0]]),
    ("reshaped_first", lambda v: tf.reduce_sum(tf.gather(tf.reshape(v, [6]), [1, 0])),
     [[1, 1], [0, 0], [0, 0]]),
    ("slice", lambda v: tf.reduce_sum(v[1]), [[0, 0], [1, 1], [0, 0]]),
]


@pytest.mark.parametrize("name,loss,want", SPARSE, ids=[c[0] for c in SPARSE])
def test_gradient_is_tensorflows_indexed_slices(name, loss, want):
    got = _parts(_grad(loss))
    assert got[0] == want[0] and got[2:] == want[2:]
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("name,loss,want", DENSE, ids=[c[0] for c in DENSE])
def test_gradient_is_dense_where_tensorflows_is(name, loss, want):
    g = _grad(loss)
    assert isinstance(g, tf.Tensor)
    np.testing.assert_array_equal(g.numpy(), want)


def test_a_target_among_sources_makes_it_dense():
    x = tf.constant(V)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.gather(x, [2, 1])
    assert t.gradient([y, x], x).numpy().tolist() == [[1, 1], [2, 2], [2, 2]]


def test_output_gradients_several_targets_and_unconnected_zero():
    x = tf.constant(V)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.gather(x, [2, 1])
    g = t.gradient(y, x, output_gradients=tf.constant([[7.0, 8.0], [9.0, 10.0]]))
    assert _parts(g) == ([2, 1], [[7, 8], [9, 10]], [3, 2], "int32")
    v = tf.Variable(V)
    with tf.GradientTape() as t:
        y, y2 = tf.reduce_sum(tf.gather(v, [1])), tf.reduce_sum(tf.gather(v, [0]))
    assert _parts(t.gradient([y, y2], v))[0] == [0, 1]      # TF: the last target's op first
    x1 = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x1)
        y = tf.reduce_sum(tf.gather(x1, [1, 1]))
    g, other = t.gradient(y, [x1, tf.constant(1.0)], unconnected_gradients="zero")
    assert _parts(g) == ([1, 1], [1, 1], [3], "int32") and float(other) == 0.0


def test_persistent_tape_keeps_slices_when_its_gradient_runs_compiled(numpy_backend):
    v = tf.Variable(V)
    with tf.GradientTape(persistent=True) as t:
        y = tf.reduce_sum(tf.gather(v, [1, 2]))
    for _ in range(5):       # from the 3rd call the sweep is one compiled program
        assert _parts(t.gradient(y, v)) == ([1, 2], [[1, 1]] * 2, [3, 2], "int32")


def test_embedding_lookup_max_norm():
    g = _grad(lambda v: tf.reduce_sum(tf.nn.embedding_lookup(v, [1, 1], max_norm=1.0)))
    idx, values, shape, _ = _parts(g)
    assert idx == [1, 1] and shape == [3, 2]
    np.testing.assert_allclose(values, [[0.03199999, -0.024]] * 2, rtol=1e-5)


def test_jacobian_densifies():
    v = tf.Variable(V)
    with tf.GradientTape() as t:
        y = tf.gather(v, [1, 1])
    j = t.jacobian(y, v)
    want = np.zeros((2, 2, 3, 2), np.float32)
    want[:, 0, 1, 0] = want[:, 1, 1, 1] = 1
    np.testing.assert_array_equal(j.numpy(), want)


# -- the class ---------------------------------------------------------------------------

def _slices():
    return tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([2, 0]),
                            tf.constant([3, 2]))


def test_attributes_str_and_spec():
    s = _slices()
    assert s.shape == tf.TensorShape([3, 2]) and s.dtype == tf.float32
    assert tf.is_tensor(s) is True and not isinstance(s, tf.Tensor)
    assert str(s) == ("IndexedSlices(indices=tf.Tensor([2 0], shape=(2,), dtype=int32), values=tf.Tensor(\n"
                      "[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32), dense_shape=tf.Tensor([3 2], "
                      "shape=(2,), dtype=int32))")
    assert repr(s._type_spec) == ("IndexedSlicesSpec(TensorShape([3, 2]), tf.float32, tf.int32, "
                                  "tf.int32, TensorShape([2]))")
    bare = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]))
    assert bare.dense_shape is None and bare.shape.rank is None
    assert repr(bare._type_spec) == ("IndexedSlicesSpec(TensorShape([None, 2]), tf.float32, "
                                     "tf.int32, None, TensorShape([1]))")
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(bare)


def test_densified_by_ops_and_convert_to_tensor():
    s = _slices()
    assert tf.convert_to_tensor(s).numpy().tolist() == [[3, 4], [0, 0], [1, 2]]
    assert tf.multiply(s, 2.0).numpy().tolist() == [[6, 8], [0, 0], [2, 4]]
    assert tf.add(s, 1.0).numpy().tolist() == [[4, 5], [1, 1], [2, 3]]
    assert float(tf.reduce_sum(s)) == 10.0
    assert (s * tf.constant(2.0)).numpy().tolist() == [[6, 8], [0, 0], [2, 4]]
    assert _parts(-s)[1] == [[-1, -2], [-3, -4]]
    dup = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1, 1]), tf.constant([3, 2]))
    assert tf.convert_to_tensor(dup).numpy().tolist() == [[0, 0], [4, 6], [0, 0]]
    assert tf.convert_to_tensor(s, dtype=tf.float32).dtype == tf.float32
    with pytest.raises(ValueError, match="Incompatible tensor conversion requested to `dtype` float64"):
        tf.convert_to_tensor(s, dtype=tf.float64)
    for op in (lambda: s * 2, lambda: s + 1, lambda: s + s):   # TF defines no such operators
        with pytest.raises(TypeError):
            op()


# -- consumers ---------------------------------------------------------------------------

def _scaled():
    v = tf.Variable(V)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.gather(v, [1, 1]) * 3.0)
    return t.gradient(y, v)


def test_clipping_uses_the_values():
    g = _scaled()
    assert _parts(tf.clip_by_norm(g, 1.0))[1] == [[0.5, 0.5]] * 2        # ||values|| = 6
    assert _parts(tf.clip_by_value(g, 0.0, 1.0))[1] == [[1, 1]] * 2
    clipped, norm = tf.clip_by_global_norm([g, tf.constant([3.0, 4.0])], 1.0)
    np.testing.assert_allclose(_parts(clipped[0])[1], [[0.38411063] * 2] * 2, rtol=1e-6)
    np.testing.assert_allclose(float(norm), 7.81025, rtol=1e-6)
    np.testing.assert_allclose(float(tf.linalg.global_norm([_slices()])), 5.4772258, rtol=1e-6)


def test_clip_by_global_norm():
    out, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), None, tf.constant(12.0)], 6.5)
    assert out[0].numpy().tolist() == [1.5, 2.0] and out[1] is None and float(out[2]) == 6.0
    assert float(norm) == 13.0
    out, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0])], 1.0, use_norm=tf.constant(10.0))
    np.testing.assert_allclose(out[0].numpy(), [0.3, 0.4], rtol=1e-6)
    with pytest.raises(TypeError, match="`t_list` should be a sequence of tensors"):
        tf.clip_by_global_norm(tf.constant([3.0, 4.0]), 1.0)


@pytest.mark.parametrize("make", [lambda: tf.keras.optimizers.SGD(0.5),
                                  lambda: tf.keras.optimizers.SGD(0.5, momentum=0.05),
                                  lambda: tf.keras.optimizers.Adam(0.1),
                                  lambda: tf.keras.optimizers.Adam(0.1, global_clipnorm=1.0)])
def test_optimizers_apply_slices_as_the_dense_gradient(make):
    """Keras 3's own test (optimizer_sparse_test): the same numbers as the dense gradient."""
    sparse_var, dense_var = tf.Variable(np.ones((5, 3, 2), np.float32)), tf.Variable(np.ones((5, 3, 2), np.float32))
    sparse_opt, dense_opt = make(), make()
    for i in range(3):
        g = tf.IndexedSlices(tf.ones((3, 3, 2)) * (10.0 - i), tf.constant([0, 2, 4]), tf.constant([5, 3, 2]))
        sparse_opt.apply_gradients([(g, sparse_var)])
        dense_opt.apply_gradients([(tf.convert_to_tensor(g), dense_var)])
    np.testing.assert_allclose(sparse_var.numpy(), dense_var.numpy(), rtol=1e-6)
    assert not np.allclose(sparse_var.numpy(), 1.0)


def test_embedding_model_trains_on_slices():
    v = tf.Variable(V)
    opt = tf.keras.optimizers.SGD(0.5)
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(v, [2, 2, 0]))
    opt.apply_gradients([(t.gradient(loss, v), v)])
    assert v.numpy().tolist() == [[0.5, 1.5], [3, 4], [4, 5]]


# -- inside and through functions ----------------------------------------------------------

def test_inside_a_function_and_tf_gradients(numpy_backend):
    v = tf.Variable(V)

    @tf.function
    def inside(idx):
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.gather(v, idx))
        g = t.gradient(y, v)
        return g, tf.convert_to_tensor(g)

    g, d = inside(tf.constant([2, 0]))
    assert _parts(g) == ([2, 0], [[1, 1]] * 2, [3, 2], "int32")    # TF returns it as it is
    assert d.numpy().tolist() == [[1, 1], [0, 0], [1, 1]]

    @tf.function
    def graph_grads(x):
        return tf.gradients(tf.reduce_sum(tf.gather(x, [0, 0])), x)[0]

    assert _parts(graph_grads(tf.constant(V))) == ([0, 0], [[1, 1]] * 2, [3, 2], "int32")


def test_through_a_function_it_comes_back_as_tensorflows(numpy_backend):
    """A function called under a tape: its backward returns the IndexedSlices TF's does."""
    v = tf.Variable(V)
    x = tf.constant(V)
    f = tf.function(lambda idx: tf.reduce_sum(tf.gather(v, idx)))
    with tf.GradientTape() as t:
        y = f(tf.constant([2, 0]))
    assert _parts(t.gradient(y, v)) == ([2, 0], [[1, 1]] * 2, [3, 2], "int32")
    doubled = tf.function(lambda idx: tf.gather(v, idx) * 2.0)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(doubled(tf.constant([1, 1])))
    assert _parts(t.gradient(y, v)) == ([1, 1], [[2, 2]] * 2, [3, 2], "int32")
    rows = tf.function(lambda xx: tf.gather(xx, [2, 1]))
    with tf.GradientTape() as t:
        t.watch(x)
        y = rows(x)
    g = t.gradient(y, x, output_gradients=tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert _parts(g) == ([2, 1], [[1, 2], [3, 4]], [3, 2], "int32")
    with tf.GradientTape() as t:        # with eager slices: concatenated, the call's first
        t.watch(x)
        y = tf.reduce_sum(rows(x)) + tf.reduce_sum(tf.gather(x, [0]))
    assert _parts(t.gradient(y, x)) == ([2, 1, 0], [[1, 1]] * 3, [3, 2], "int32")
    with tf.GradientTape() as t:        # consumed by a Mul: dense
        t.watch(x)
        y = tf.reduce_sum(rows(x) * x[:2])
    assert t.gradient(y, x).numpy().tolist() == [[5, 6], [6, 8], [1, 2]]
    mixed = tf.function(lambda xx: tf.reduce_sum(tf.gather(xx, [0])) + tf.reduce_sum(xx))
    with tf.GradientTape() as t:
        t.watch(x)
        y = mixed(x)
    assert t.gradient(y, x).numpy().tolist() == [[2, 2], [1, 1], [1, 1]]


def test_control_flow(numpy_backend):
    v = tf.Variable(V)

    def cond_case():
        with tf.GradientTape() as t:
            y = tf.cond(tf.constant(True), lambda: tf.reduce_sum(tf.gather(v, [1])),
                        lambda: tf.reduce_sum(v))
        return t.gradient(y, v)

    def while_case():
        with tf.GradientTape() as t:
            y = tf.while_loop(lambda i, s: i < 2,
                              lambda i, s: (i + 1, s + tf.reduce_sum(tf.gather(v, [i]))), (0, 0.0))[1]
        return t.gradient(y, v)

    assert _parts(cond_case()) == ([1], [[1, 1]], [3, 2], "int32")
    assert _parts(tf.function(cond_case)()) == ([1], [[1, 1]], [3, 2], "int32")
    assert _parts(while_case()) == ([1, 0], [[1, 1]] * 2, [3, 2], "int32")     # a Python loop
    assert tf.function(while_case)().numpy().tolist() == [[1, 1], [1, 1], [0, 0]]   # TF: dense


def test_second_order_through_the_values():
    v = tf.Variable(V)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = tf.reduce_sum(tf.gather(v, [1, 1]) ** 2)
        z = tf.reduce_sum(t1.gradient(y, v).values)
    assert _parts(t2.gradient(z, v)) == ([1, 1], [[2, 2]] * 2, [3, 2], "int32")


def test_ops_tensorflow_dispatches_on_it():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    assert _parts(tf.identity(s)) == ([1], [[1, 2]], [3, 2], "int32")
    assert _parts(tf.stop_gradient(s)) == ([1], [[1, 2]], [3, 2], "int32")
    assert _parts(tf.math.scalar_mul(2.0, s)) == ([1], [[2, 4]], [3, 2], "int32")
    cast = tf.cast(s, tf.int32)
    assert _parts(cast)[:3] == ([1], [[1, 2]], [3, 2]) and cast.dtype == tf.int32
    assert tf.add_n([s, s]).numpy().tolist() == [[0, 0], [2, 4], [0, 0]]
    assert tf.reshape(s, [-1]).numpy().tolist() == [0, 0, 1, 2, 0, 0]
    assert tf.zeros_like(s).numpy().tolist() == [[0, 0]] * 3
    assert tf.nest.map_structure(lambda t: t, s) is not None


# -- tf.register_tensor_conversion_function -------------------------------------------------

class _Meters:
    def __init__(self, v):
        self.v = v


def test_register_tensor_conversion_function():
    seen = []

    def conv(value, dtype=None, name=None, as_ref=False):
        seen.append(dtype)
        return tf.constant(value.v, dtype=dtype)

    tf.register_tensor_conversion_function(_Meters, conv)
    assert tf.convert_to_tensor(_Meters([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]
    assert tf.convert_to_tensor(_Meters([1.0]), dtype=tf.float64).dtype == tf.float64
    assert tf.convert_to_tensor(_Meters([1.0]), dtype_hint=tf.float64).dtype == tf.float64
    assert tf.add(_Meters([1.0, 2.0]), 1.0).numpy().tolist() == [2.0, 3.0]
    assert seen[:3] == [None, tf.float64, tf.float64]

    class Sub(_Meters):
        pass

    tf.register_tensor_conversion_function(Sub, lambda value, dtype=None, name=None, as_ref=False:
                                           tf.constant(99.0), priority=50)
    assert float(tf.convert_to_tensor(Sub([3.0]))) == 99.0     # lower priority first


def test_register_tensor_conversion_function_errors():
    conv = lambda value, dtype=None, name=None, as_ref=False: tf.constant(1)   # noqa: E731
    for base in (int, np.ndarray, np.float32):
        with pytest.raises(TypeError, match="Cannot register conversions for Python numeric types"):
            tf.register_tensor_conversion_function(base, conv)
    with pytest.raises(TypeError, match="Argument `conversion_func` must be callable. Received 3."):
        tf.register_tensor_conversion_function(_Meters, 3)
    with pytest.raises(TypeError, match="Argument `base_type` must be a type or a tuple of types"):
        tf.register_tensor_conversion_function(3, conv)

    class Bad:
        pass

    tf.register_tensor_conversion_function(Bad, conv)
    with pytest.raises(RuntimeError, match="returned incompatible dtype: requested = float32, actual = int32"):
        tf.convert_to_tensor(Bad(), dtype=tf.float32)

    class Declines:
        pass

    tf.register_tensor_conversion_function(Declines, lambda *a, **k: NotImplemented)
    with pytest.raises(ValueError, match="Attempt to convert a value"):
        tf.convert_to_tensor(Declines())

    class NotTensor:
        pass

    tf.register_tensor_conversion_function(NotTensor, lambda *a, **k: 5)
    with pytest.raises(RuntimeError, match="returned non-Tensor: 5"):
        tf.convert_to_tensor(NotTensor())
