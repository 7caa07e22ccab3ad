"""tf.debugging's traceback filtering (runtime/traceback_filter.py): an error escaping an entry
point (op dispatch, a function call or trace, GradientTape.gradient/jacobian, a Keras layer
call) keeps the user's frames and drops tapeflow's when filtering is on (the default, per
thread, as TensorFlow 2.21's), and keeps every frame when it is off; the error and its message
(naming the user's line) are the same either way."""
import os
import threading
import traceback

import pytest

import tapeflow as tf

PKG = os.path.dirname(os.path.abspath(tf.__file__)) + os.sep


@pytest.fixture(autouse=True)
def _filtering_restored():
    yield
    tf.debugging.enable_traceback_filtering()


def _frames(error):
    """(where, function) per frame, innermost last; where is "user" for a frame outside
    tapeflow, else the module's path inside the package."""
    out = []
    for fs in traceback.extract_tb(error.__traceback__):
        path = os.path.abspath(fs.filename)
        out.append(("user", fs.name) if not path.startswith(PKG)
                   else (path[len(PKG):].replace(os.sep, "/"), fs.name))
    return out


def _raised(call, filtering):
    (tf.debugging.enable_traceback_filtering if filtering
     else tf.debugging.disable_traceback_filtering)()
    with pytest.raises(Exception) as info:
        call()
    return info.value


# -- the switch: TF 2.21's answers ----------------------------------------------------------

def test_the_switch_is_on_by_default_per_thread_and_returns_none():
    # TF 2.21: is_traceback_filtering_enabled() is True at start; disable/enable return None
    # and take effect at once; the state is thread-local (another thread still sees True).
    assert tf.debugging.is_traceback_filtering_enabled() is True
    assert tf.debugging.disable_traceback_filtering() is None
    assert tf.debugging.is_traceback_filtering_enabled() is False
    seen = []
    t = threading.Thread(target=lambda: seen.append(tf.debugging.is_traceback_filtering_enabled()))
    t.start()
    t.join()
    assert seen == [True]
    assert tf.debugging.enable_traceback_filtering() is None
    assert tf.debugging.is_traceback_filtering_enabled() is True


# -- the frames --------------------------------------------------------------------------

def _eager_shapes():
    return tf.add(tf.ones([2]), tf.ones([3]))


def _eager_kernel():
    return tf.gather(tf.constant([1.0, 2.0]), [5])   # the kernel's IndexError, as TF's error


def _eager_conversion():
    return tf.add(tf.ones([2]), "not a number")


def _user_helper(x):
    return tf.matmul(x, x)                      # [2, 3] @ [2, 3]: fails while tracing


@tf.function
def _traced(x):
    return _user_helper(x) + 1.0


@tf.function
def _checked(x):
    tf.debugging.assert_positive(x, message="need positive")
    return x * 2.0


def _function_trace():
    return _traced(tf.ones([2, 3]))


def _function_run_fast():
    _checked(tf.constant([1.0, 2.0]))           # the generated fast __call__ serves the next call
    return _checked(tf.constant([1.0, -2.0]))


def _function_run_general():
    return _checked(x=tf.constant([1.0, -2.0]))  # a keyword: the general path


def _concrete_run():
    c = _checked.get_concrete_function(tf.TensorSpec([2], tf.float32))
    return c(tf.constant([1.0, -2.0]))


def _tape_gradient():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * x
    return tape.gradient(y, [x, 3])


def _tape_jacobian():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    return tape.jacobian(y, [x, "x"])


def _no_gradient(method):
    """A tape method failing deep inside the reverse sweep: GuaranteeConst has no gradient
    (TF's LookupError)."""
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.guarantee_const(x) * x
    return getattr(tape, method)(y, x)


def _deep_gradient():
    return _no_gradient("gradient")


def _deep_jacobian():
    return _no_gradient("jacobian")


def _deep_batch_jacobian():
    return _no_gradient("batch_jacobian")


class _Picky(tf.keras.layers.Layer):
    def call(self, inputs):
        return _picky_check(inputs)


def _picky_check(inputs):
    if inputs.shape[-1] != 4:
        raise ValueError(f"_Picky wants 4 features, got {inputs.shape[-1]}")
    return inputs


def _keras_call():
    return _Picky()(tf.ones([2, 3]))


# (call, error type, frames with filtering on: the user's, then tapeflow's public functions
# between the user's code and the entry point (`tf.add` over `apply`), then, when every frame
# below is tapeflow's, the innermost one: TensorFlow's rule)
CASES = [
    (_eager_kernel, tf.errors.InvalidArgumentError,
     [("user", "_eager_kernel"), ("ops/array.py", "gather"), ("runtime/dispatch.py", "_run_kernel")]),
    (_eager_conversion, TypeError,
     [("user", "_eager_conversion"), ("ops/math.py", "add"),
      ("runtime/tensor.py", "convert_to_tensor")]),
    (_function_trace, tf.errors.InvalidArgumentError,
     [("user", "_function_trace"), ("user", "_traced"), ("user", "_user_helper")]),
    (_function_run_fast, tf.errors.InvalidArgumentError,
     [("user", "_function_run_fast"), ("runtime/interpret.py", "run_graph")]),
    (_function_run_general, tf.errors.InvalidArgumentError,
     [("user", "_function_run_general"), ("runtime/interpret.py", "run_graph")]),
    (_concrete_run, tf.errors.InvalidArgumentError,
     [("user", "_concrete_run"), ("runtime/interpret.py", "run_graph")]),
    (_tape_gradient, TypeError, [("user", "_tape_gradient"), ("autodiff/backprop.py", "flat_ids")]),
    (_tape_jacobian, TypeError, [("user", "_tape_jacobian"), ("autodiff/backprop.py", "flat_ids")]),
    (_deep_gradient, LookupError, [("user", "_deep_gradient"), ("user", "_no_gradient"),
                                   ("autodiff/grads/debug.py", "_guarantee_const")]),
    (_deep_jacobian, LookupError, [("user", "_deep_jacobian"), ("user", "_no_gradient"),
                                   ("autodiff/grads/debug.py", "_guarantee_const")]),
    (_deep_batch_jacobian, LookupError, [("user", "_deep_batch_jacobian"), ("user", "_no_gradient"),
                                         ("autodiff/grads/debug.py", "_guarantee_const")]),
    (_keras_call, ValueError, [("user", "_keras_call"), ("user", "call"), ("user", "_picky_check")]),
]


@pytest.mark.parametrize("call, error, expected", CASES, ids=[c[0].__name__ for c in CASES])
def test_filtered_tracebacks_keep_the_users_frames_and_drop_tapeflows(call, error, expected,
                                                                      numpy_backend):
    on = _raised(call, filtering=True)
    off = _raised(call, filtering=False)
    assert type(on) is type(off) is error
    assert str(on) == str(off)                         # the message is the same
    assert _frames(on)[1:] == expected                 # [0]: pytest.raises' caller, this test
    full = _frames(off)[1:]
    assert [f for f in full if f[0] == "user"] == [f for f in expected if f[0] == "user"]
    assert len(full) > len(expected) and set(expected) <= set(full)
    internal = {f for f in full if f[0] != "user"} - set(expected)
    assert internal, "filtering off keeps tapeflow's frames below the entry point"


def test_messages_still_name_the_users_line(numpy_backend):
    for filtering in (True, False):
        e = _raised(_eager_shapes, filtering)
        assert "[at " in str(e) and "return tf.add(tf.ones([2]), tf.ones([3]))" in str(e)
        # raised in apply itself: nothing below the entry point to drop, its raise line stays
        assert _frames(e)[1:] == [("user", "_eager_shapes"), ("ops/math.py", "add"),
                                  ("runtime/dispatch.py", "apply")]


def test_filtering_is_per_thread():
    # disabled in this thread, another thread's errors are still filtered (TF's thread-local)
    tf.debugging.disable_traceback_filtering()
    caught = []

    def worker():
        try:
            _eager_conversion()
        except TypeError as e:
            caught.append(_frames(e))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert caught == [[("user", "worker"), ("user", "_eager_conversion"), ("ops/math.py", "add"),
                       ("runtime/tensor.py", "convert_to_tensor")]]
    e = _raised(_eager_conversion, filtering=False)
    assert ("runtime/dispatch.py", "_convert_inputs") in _frames(e)


def test_a_cause_and_the_error_object_are_kept():
    class Boom(Exception):
        pass

    def failing_kernel_caller():
        try:
            raise Boom("inner")
        except Boom as b:
            raise ValueError("outer") from b

    @tf.function
    def f(x):
        failing_kernel_caller()
        return x

    with pytest.raises(ValueError) as info:
        f(tf.constant(1.0))
    e = info.value
    assert isinstance(e.__cause__, Boom) and str(e.__cause__) == "inner"
    assert [f for f in _frames(e)][-2:] == [("user", "f"), ("user", "failing_kernel_caller")]
