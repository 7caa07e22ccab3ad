"""GradientTape semantics, case by case against what TensorFlow does."""
import threading

import numpy as np
import pytest

import tapeflow as tf


def val(t):
    return None if t is None else np.asarray(t)


def test_watched_constant_and_automatic_variable():
    x = tf.constant(3.0)
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x * v
    gx, gv = tape.gradient(y, [x, v])
    assert float(gx) == 12.0 and float(gv) == 9.0
    assert gx.dtype == tf.float32


def test_unwatched_tensor_and_non_trainable_variable_get_none():
    x = tf.constant(3.0)
    nt = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as tape:
        y = x * nt
    assert tape.gradient(y, [x, nt]) == [None, None]


def test_watch_nested_structures_and_variables():
    a, b = tf.constant(1.0), tf.constant(2.0)
    nt = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        tape.watch({"a": a, "rest": [b, (nt,)]})
        y = a * b * nt
    g = tape.gradient(y, {"a": a, "rest": [b, (nt,)]})
    assert float(g["a"]) == 6.0 and float(g["rest"][0]) == 3.0 and float(g["rest"][1][0]) == 2.0


def test_watch_rejects_non_tensors():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="not tf.Tensor"):
            tape.watch(3.0)


def test_watch_accessed_variables_false():
    x0, x1 = tf.Variable(0.0), tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y = x0 * x1
    g = tape.gradient(y, {"x0": x0, "x1": x1})
    assert g["x0"] is None and float(g["x1"]) == 0.0
    assert [v.name for v in tape.watched_variables()] == [x1.name]


def test_watched_variables_in_creation_order():
    # TF 2.21: ['a:0', 'b:0', 'c:0'] (creation order, not first access), eagerly and in a function
    a, b, c = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
    with tf.GradientTape() as tape:
        _ = c * a
        _ = b * a
    assert [v.name for v in tape.watched_variables()] == ["a:0", "b:0", "c:0"]
    with tf.GradientTape() as tape:
        tape.watch(b)
        _ = c * a
    assert [v.name for v in tape.watched_variables()] == ["a:0", "b:0", "c:0"]

    @tf.function
    def traced():
        with tf.GradientTape() as tape:
            _ = c * a
            _ = b * a
        return [v.name for v in tape.watched_variables()]
    assert traced() == ["a:0", "b:0", "c:0"]


def test_non_scalar_target_is_summed_and_list_targets_add():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = x * 3.0
    np.testing.assert_allclose(val(tape.gradient(y, x)), [2, 4, 6])
    np.testing.assert_allclose(val(tape.gradient([y, z], x)), [5, 7, 9])


def test_output_gradients_weight_the_target():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=tf.constant([10.0, -1.0]))
    np.testing.assert_allclose(val(g), [20.0, -4.0])


def test_non_persistent_second_call_raises():
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(y, x)


def test_persistent_allows_many_calls_and_frees_nothing_early():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(z, x)) == 108.0
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, y)) == 18.0


def test_integer_dtypes_block_gradients():
    x = tf.Variable([[2, 2], [2, 2]])
    with tf.GradientTape() as tape:
        y = tf.cast(x, tf.float32)
        y = tf.reduce_sum(y)
    assert tape.gradient(y, x) is None
    f = tf.constant(1.5)
    with tf.GradientTape() as tape:
        tape.watch(f)
        i = tf.cast(f, tf.int32)
        back = tf.cast(i, tf.float32) * 2.0
    assert tape.gradient(back, f) is None


def test_watching_an_int_tensor_warns_and_self_gradient_is_ones():
    i = tf.constant([1, 2], dtype=tf.int32)
    with tf.GradientTape() as tape:
        with pytest.warns(UserWarning, match="must be floating"):
            tape.watch(i)
    g = tape.gradient(i, i)
    assert g.dtype == tf.int32 and val(g).tolist() == [1, 1]


def test_unconnected_gradients_zero():
    x, y = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        z = y * y
    g = tape.gradient(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(val(g[0]), [0.0, 0.0])
    assert float(g[1]) == 6.0
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x, unconnected_gradients="zero").shape == (2,)


def test_stop_recording_and_reset():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    g = t.gradient(z, {"x": x, "y": y})
    assert float(g["x"]) == 4.0 and g["y"] is None
    with tf.GradientTape() as t:
        y_sq = y * y
        t.reset()
        z = x * x + y_sq
    g = t.gradient(z, {"x": x, "y": y})
    assert float(g["x"]) == 4.0 and g["y"] is None


def test_nested_tapes_give_second_order():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy = t1.gradient(y, x)
    assert float(dy) == 3.0 and float(t2.gradient(dy, x)) == 6.0


def test_second_order_none_where_first_gradient_does_not_depend_on_source():
    w1, w2 = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            z = w1 * w2
        g1 = t1.gradient(z, w1)
    assert t2.gradient(g1, [w1, w2])[0] is None


def test_gradient_inside_persistent_context_is_recorded():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x * x
        with pytest.warns(UserWarning, match="less efficient"):
            dy = t.gradient(y, x)
    assert float(dy) == 12.0
    assert float(t.gradient(dy, x)) == 12.0


def test_multiple_tapes_each_see_what_they_watch():
    x0, x1 = tf.constant(0.0), tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = tf.sin(x0) + x1 * x1
    assert float(tape0.gradient(ys, x0)) == 1.0
    assert tape1.gradient(ys, x0) is None


def test_tapes_are_local_to_their_thread():
    v = tf.Variable(2.0)
    seen = {}
    with tf.GradientTape() as tape:
        def worker():
            seen["y"] = v * v  # another thread: not recorded on this tape
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        z = v * 3.0
    assert tape.gradient(seen["y"], v) is None
    with tf.GradientTape() as tape:
        z = v * 3.0
    assert float(tape.gradient(z, v)) == 3.0


def test_reentering_an_active_tape_raises():
    tape = tf.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="still recording"):
            tape.__enter__()


def test_gradient_wrt_intermediate_and_self():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(z, y)) == 18.0
    assert float(tape.gradient(z, z)) == 1.0


def test_bad_target_and_sources_name_the_problem():
    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match=r"sources\[1\]"):
        tape.gradient(y, [x, 3.0])
    with pytest.raises(TypeError, match="target"):
        tape.gradient("loss", x)


def test_memory_rules_keep_only_what_they_read():
    x = tf.constant(np.ones(1000, np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x + x  # Add reads nothing
    assert tape.saved_bytes() == 0
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sin(x)  # Sin reads its input: 4000 bytes
    assert tape.saved_bytes() == 4000
    tape.gradient(y, x)
    assert tape.saved_bytes() == 0  # a non-persistent tape frees after gradient


def test_jacobian_shapes_and_values():
    x = tf.constant([1.0, 2.0, 3.0])
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = w * w
    j = tape.jacobian(y, x)
    np.testing.assert_allclose(val(j), np.diag([2.0, 4.0, 6.0]))
    jw = tape.jacobian(z, w)
    assert jw.shape == (2, 2, 2, 2)
    assert tape.jacobian(y, w) is None
    jz = tape.jacobian(y, w, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert jz.shape == (3, 2, 2) and not val(jz).any()
    jl = tape.jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(val(jl), val(j))


def test_jacobian_loop_mode_needs_persistent():
    x = tf.constant([1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_shapes_values_and_errors():
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.stack([x * x, x * 3.0], axis=1)  # [3, 2, 2]
    bj = tape.batch_jacobian(y, x)
    assert bj.shape == (3, 2, 2, 2)
    full = val(tape.jacobian(y, x))
    np.testing.assert_allclose(val(bj), np.einsum("bijbk->bijk", full))
    with pytest.raises(ValueError, match="rank at least 2"):
        tape.batch_jacobian(tf.reduce_sum(x, axis=1), x)
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y, tf.constant(np.ones((4, 2), np.float32)))
    other = tf.constant(np.ones((3, 5), np.float32))  # unconnected: zeros, as TensorFlow gives
    unconnected = tape.batch_jacobian(y, other)
    assert unconnected.shape == (3, 2, 2, 5) and not val(unconnected).any()
