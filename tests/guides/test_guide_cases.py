"""Cases from TensorFlow's guide notebooks where tapeflow differed: TensorFlow 2.21's results,
quoted. tools/guide_cells.py runs the whole guides; these keep the fixes."""
import numpy as np
import pytest

import tapeflow as tf


# -- isinstance(x, tf.Tensor) ---------------------------------------------------------

def test_traced_tensors_are_tf_tensors():
    # TensorFlow 2.21 gives [True, True]: graph tensors inside tf.function are tf.Tensor
    seen = []

    @tf.function
    def f(x):
        y = x * 2.0
        seen.extend([isinstance(x, tf.Tensor), isinstance(y, tf.Tensor)])
        return y

    f(tf.constant([1.0, 2.0]))
    assert seen == [True, True]


def test_what_is_not_a_tf_tensor():
    # TensorFlow 2.21 gives True for an eager tensor, False for a Variable, a NumPy array,
    # a float; issubclass(type(eager), tf.Tensor) is True
    t = tf.constant(1.0)
    assert isinstance(t, tf.Tensor)
    assert not isinstance(tf.Variable(1.0), tf.Tensor)
    assert not isinstance(tf.Variable(1.0).assign(2.0), tf.Tensor)
    assert not isinstance(np.ones(2), tf.Tensor)
    assert not isinstance(1.0, tf.Tensor)
    assert issubclass(type(t), tf.Tensor)
    assert not issubclass(tf.Variable, tf.Tensor)
    assert tf.Tensor.__name__ == "Tensor"


def test_internal_tensor_class_still_means_eager():
    # tapeflow's own checks: the runtime class keeps plain isinstance (no traced tensors)
    from tapeflow.runtime.tensor import Tensor as EagerTensor
    seen = []

    @tf.function
    def f(x):
        seen.append(isinstance(x, EagerTensor))
        return x + 1.0

    f(tf.constant(1.0))
    assert seen == [False]
    assert type(EagerTensor) is type


# -- Keras: Lambda, and a plain function as an initializer (the basics guide) ---------------

def test_lambda_layer_in_a_trained_sequential_model(tmp_path):
    # the basics guide's model; TensorFlow 2.21 trains it and saves it
    x = tf.constant([[0.5], [1.0], [-1.0]])[:, 0]
    model = tf.keras.Sequential([
        tf.keras.layers.Lambda(lambda x: tf.stack([x, x ** 2], axis=1)),
        tf.keras.layers.Dense(units=1, kernel_initializer=tf.random.normal)])
    model.compile(loss=tf.keras.losses.MSE, optimizer=tf.keras.optimizers.SGD(learning_rate=0.1))
    history = model.fit(x, 2.0 * x ** 2, epochs=3, batch_size=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.layers[0].name == "lambda"  # TensorFlow 2.21 gives "lambda"
    model.save(tmp_path / "m.keras")
    # Keras 3: loading a lambda needs safe_mode=False, else ValueError "Requested the
    # deserialization of a `Lambda` layer whose `function` is a Python lambda..."
    with pytest.raises(ValueError, match="Requested the deserialization of a `Lambda` layer"):
        tf.keras.models.load_model(tmp_path / "m.keras")


def test_lambda_layer_arguments_and_config():
    layer = tf.keras.layers.Lambda(lambda x, k: x * k, arguments={"k": 3.0})
    assert layer(tf.constant([1.0, 2.0])).numpy().tolist() == [3.0, 6.0]
    # TensorFlow 2.21: the config's function is {'class_name': '__lambda__', 'config': {...}}
    assert layer.get_config()["function"]["class_name"] == "__lambda__"
    with pytest.raises(TypeError, match="must be callable"):
        tf.keras.layers.Lambda(3)


def test_function_initializer_serializes_by_name():
    # TensorFlow 2.21 gives {'module': 'builtins', 'class_name': 'function',
    # 'config': 'random_normal', 'registered_name': 'function'} (its function's name)
    dense = tf.keras.layers.Dense(units=1, kernel_initializer=tf.random.normal)
    config = dense.get_config()["kernel_initializer"]
    assert config == {"module": "builtins", "class_name": "function",
                      "config": tf.random.normal.__name__, "registered_name": "function"}
    with pytest.raises(TypeError, match="runs no code from a file"):
        tf.keras.initializers.deserialize(config)


def test_a_layer_refuses_python_numbers_as_inputs():
    # the modules guide's simple_layer([[2.0, 2.0, 2.0]]): TensorFlow 2.21 (Keras 3) raises
    # ValueError "Only input tensors may be passed as positional arguments. The following
    # argument value should be passed as a keyword argument: 2.0 (of type <class 'float'>)"
    class MyDense(tf.keras.layers.Layer):
        def call(self, x):
            return x * 2.0

    with pytest.raises(ValueError, match=r"keyword argument: 2.0 \(of type <class 'float'>\)"):
        MyDense()([[2.0, 2.0, 2.0]])
    assert MyDense()(np.ones((1, 2), np.float32)).numpy().tolist() == [[2.0, 2.0]]


# -- for over tf.range(start, limit) with a symbolic bound (the tf.function guide's fizzbuzz) --

def test_fizzbuzz_over_a_two_argument_range(capfd):
    # TensorFlow 2.21 prints (to stderr) 1 2 fizz 4 buzz, one a line, for fizzbuzz(5)
    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            if i % 15 == 0:
                tf.print('fizzbuzz')
            elif i % 3 == 0:
                tf.print('fizz')
            elif i % 5 == 0:
                tf.print('buzz')
            else:
                tf.print(i)

    fizzbuzz(tf.constant(5))
    assert capfd.readouterr().err.split() == ["1", "2", "fizz", "4", "buzz"]
    fizzbuzz(tf.constant(15))
    assert capfd.readouterr().err.split()[-3:] == ["13", "14", "fizzbuzz"]


# -- tf.py_function as a decorator (the tf.function guide) ------------------------------------

def test_py_function_as_a_decorator():
    # TensorFlow 2.21: tf_wrapper(1.0, 2.0).numpy() is 3.0, the Python body runs at call time
    calls = []

    @tf.py_function(Tout=tf.float32)
    def py_plus(x, y):
        calls.append(1)
        return x + y

    @tf.function
    def tf_wrapper(x, y):
        return py_plus(x, y)

    assert py_plus(tf.constant(1.0), tf.constant(2.0)).numpy() == 3.0
    n = len(calls)
    assert tf_wrapper(tf.constant(1.0), tf.constant(2.0)).numpy() == 3.0
    assert tf_wrapper(tf.constant(2.0), tf.constant(2.0)).numpy() == 4.0
    assert len(calls) > n
