"""Issue 17's TensorFlow semantics of functions, each case stating TensorFlow 2.21's result:
arguments bound at ``get_concrete_function``, variables created on every trace, tensors
leaked out of a trace, how traced tensors print."""
import pytest

import tapeflow as tf


class _Scale(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(2.0)

    def __call__(self, x):
        return self.w * x


def _ev(model, x):
    return tf.reduce_sum(model(x))


def test_concrete_function_takes_only_the_tensor_arguments():
    model, x = _Scale(), tf.constant([4., 6.])
    cf = tf.function(_ev).get_concrete_function(model, x)
    assert float(cf(x)) == 20.0          # TF: 20.0 (model was bound by get_concrete_function)
    assert float(cf(x=x)) == 20.0        # TF: 20.0
    assert float(cf(model, x)) == 20.0   # TF: 20.0 (the full signature binds too)
    with pytest.raises(TypeError, match="missing a required argument: 'model'"):
        cf()                             # TF: TypeError ... missing a required argument: 'model'


def test_concrete_function_with_two_tensor_arguments_needs_both():
    def scaled(x, scale, flag=True):
        return x * scale if flag else x

    x = tf.constant([4., 6.])
    cf = tf.function(scaled).get_concrete_function(x, tf.constant(3.0))
    assert cf(x, tf.constant(5.0)).numpy().tolist() == [20., 30.]   # TF: [20., 30.]
    with pytest.raises(TypeError, match="missing a required argument: 'scale'"):
        cf(x)                                                        # TF: TypeError


def test_variable_created_on_every_call_raises_on_the_first():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v + x

    # TF: ValueError: tf.function only supports singleton tf.Variables created on the first call.
    with pytest.raises(ValueError, match="only supports singleton tf.Variables"):
        f(1.0)


def test_variable_created_once_behind_a_guard_is_fine():
    class Lazy(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(3.0)
            return self.v * x

    m = Lazy()
    assert float(m(tf.constant(2.0))) == 6.0   # TF: 6.0
    assert float(m(tf.constant(3.0))) == 9.0   # TF: 9.0
    assert len(m.variables) == 1


def _leak():
    leaked = []

    @tf.function
    def f(x):
        y = x * 2
        leaked.append(y)
        return y

    f(tf.constant([1., 2.]))
    return leaked[0]


def test_numpy_of_a_leaked_tensor_is_an_attribute_error():
    with pytest.raises(AttributeError, match="'SymbolicTensor' object has no attribute 'numpy'"):
        _leak().numpy()   # TF: AttributeError 'SymbolicTensor' object has no attribute 'numpy'


def test_a_leaked_tensor_used_eagerly_or_in_another_function_is_a_type_error():
    leaked = _leak()

    @tf.function
    def g(x):
        return x + leaked

    # TF: TypeError <tf.Tensor 'mul:0' shape=(2,) dtype=float32> is out of scope and cannot be used here.
    with pytest.raises(TypeError, match="out of scope and cannot be used here"):
        g(tf.constant([1., 2.]))
    with pytest.raises(TypeError, match="out of scope and cannot be used here"):
        leaked + 1
    with pytest.raises(TypeError, match="out of scope"):
        tf.reduce_sum(leaked)


def test_traced_tensors_print_as_graph_tensors():
    seen = {}

    @tf.function
    def f(x, y):
        z = x * y
        seen["x"], seen["z"] = (str(x), repr(x)), (str(z), repr(z))
        seen["sums"] = str(tf.reduce_sum(z)), str(tf.reduce_sum(x))
        seen["name"] = z.name
        return z

    f(tf.constant([1., 2.]), tf.constant(3.))
    # TF: Tensor("x:0", shape=(2,), dtype=float32) and <tf.Tensor 'x:0' shape=(2,) dtype=float32>
    assert seen["x"] == ('Tensor("x:0", shape=(2,), dtype=float32)',
                         "<tf.Tensor 'x:0' shape=(2,) dtype=float32>")
    # TF names op outputs after the Python op ("mul:0", "Sum:0", "Sum_1:0"); tapeflow after the
    # op type, made unique the same way.
    assert seen["z"] == ('Tensor("Mul:0", shape=(2,), dtype=float32)',
                         "<tf.Tensor 'Mul:0' shape=(2,) dtype=float32>")
    assert seen["sums"] == ('Tensor("Sum:0", shape=(), dtype=float32)',
                            'Tensor("Sum_1:0", shape=(), dtype=float32)')
    assert seen["name"] == "Mul:0"


def test_traced_tensor_with_a_none_dimension_prints_it():
    seen = []

    @tf.function
    def f(x):
        seen.append(str(x))
        return x

    f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    assert seen == ['Tensor("x:0", shape=(None,), dtype=float32)']   # TF: the same
