"""Issue 18's crashes and error types: converted loops with a None output (C1), jacobians
without pfor on a non-persistent tape in a function (E4), custom gradients checked only where
a gradient needs them (E5), and TensorFlow's exception types. Expected results are TensorFlow
2.21's for the same programs."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InternalError, InvalidArgumentError


# -- C1: a converted loop with break, an assign, and a None output --------------------------

@pytest.mark.parametrize("x,expected", [(0.9, 1.125), (0.5, 1.220703125), (0.1, 0.30517578125)])
def test_c1_loop_with_break_assign_and_none_output(x, expected):
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        v.assign(2.0)
        t = x
        i = tf.constant(0)
        while i < 5:
            t = t * 1.25
            i += 1
            if t > 1.0:
                break
        return [t, None]
    t, none = f(tf.constant(x))
    assert none is None and np.isclose(t.numpy(), expected) and v.numpy() == 2.0


# -- E4: jacobian without pfor, non-persistent tape, inside a function -------------------------

def test_e4_loop_jacobian_on_a_non_persistent_tape_inside_a_function():
    x = tf.constant([1.0, 2.0])

    @tf.function
    def f():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.jacobian(y, x, experimental_use_pfor=False)
    assert f().numpy().tolist() == [[2.0, 0.0], [0.0, 4.0]]


def test_e4_the_tape_is_used_up_afterwards_and_eagerly_it_needs_persistent():
    x = tf.constant([1.0, 2.0])

    @tf.function
    def f():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.batch_jacobian(tf.reshape(y, [2, 1]), tf.reshape(x, [2, 1]),
                            experimental_use_pfor=False)
        return tape.gradient(y, x)
    with pytest.raises(RuntimeError):
        f()
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.jacobian(y, x, experimental_use_pfor=False)


# -- E5 and custom gradients returning the wrong number of gradients -------------------------

def _cg():
    @tf.custom_gradient
    def cg(a, b):
        return a * b, lambda dy: tf.ones_like(a)    # one gradient for two inputs
    return cg


def test_e5_checked_only_where_a_source_needs_it():
    x, w, cg = tf.constant([1.0]), tf.Variable([2.0]), _cg()

    @tf.function
    def f():
        with tf.GradientTape() as tape:
            y = cg(x, x) + w
        return tape.gradient(y, w)
    assert f().numpy().tolist() == [1.0]
    assert tf.function(lambda: cg(x, x))().numpy().tolist() == [1.0]   # no gradient at all


def test_wrong_gradient_count_on_a_needed_path():
    x, cg = tf.constant([1.0]), _cg()

    @tf.function
    def inside():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = cg(x, x)
        return tape.gradient(y, x)
    with pytest.raises(InternalError):          # TensorFlow's tape inside a function
        inside()
    with pytest.raises(ValueError):             # through a function (raised by the call
        with tf.GradientTape() as tape:         # here, which builds its gradient program)
            tape.watch(x)
            y = tf.function(lambda x: cg(x, x))(x)
        tape.gradient(y, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = cg(x, x)
    with pytest.raises(ValueError, match="expected to return 2 gradients"):   # eagerly
        tape.gradient(y, x)


# -- exception types ---------------------------------------------------------------------------

def test_non_scalar_if_condition_is_a_value_error():
    @tf.function
    def f(x):
        if x > 0:
            y = x * 2.0
        else:
            y = x * 3.0
        return y
    with pytest.raises(ValueError, match="scalar"):
        f(tf.constant([1.0, 2.0]))


@pytest.mark.parametrize("method", ["assign_add", "assign_sub"])
def test_update_with_a_wrong_shape(method):
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(InvalidArgumentError):   # eagerly: the op rejects it when it runs
        getattr(v, method)([1.0, 2.0, 3.0])
    with pytest.raises(InvalidArgumentError):   # no broadcasting either
        getattr(v, method)(1.0)

    @tf.function
    def f():
        getattr(v, method)([1.0, 2.0, 3.0])
    with pytest.raises(ValueError) as err:      # in a function: shape inference, ValueError
        f()
    assert type(err.value) is ValueError
    assert v.numpy().tolist() == [1.0, 2.0]
