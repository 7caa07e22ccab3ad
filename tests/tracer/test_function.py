"""The surface of ``tapeflow.function`` (TensorFlow's ``tf.function``).

Results equal eager; decorator forms; methods of ``Module``; ``input_signature``
with ``None`` dimensions; the trace cache (shapes, dtypes, Python values) and its
explanations (``retrace_reasons``, ``RetracingWarning``); concrete functions;
variable capture, assignment and creation; Python control flow; output
structures; concurrent calls.
"""
import os
import threading
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.tracer import RetracingWarning, TracingError

HERE = os.path.basename(__file__)


def count(f):
    return f.experimental_get_tracing_count()


# -- results equal eager ---------------------------------------------------------------------

def _elementwise(x):
    return tf.sin(x) * tf.exp(-x) + x ** 2 / (1.0 + tf.abs(x))


def _reductions(x):
    return tf.reduce_sum(x, axis=0) + tf.reduce_max(x, axis=0) * tf.reduce_mean(x)


def _matrix(x):
    return tf.nn.softmax(tf.matmul(x, x, transpose_b=True), axis=-1)


def _shapes(x):
    y = tf.transpose(tf.reshape(x, [2, 3, 2]), [1, 0, 2])
    return tf.concat([y[:, :1, :], tf.expand_dims(y[:, 1, ::-1], 1)], axis=1)


def _mixed_dtypes(x):
    n = tf.cast(tf.reduce_sum(tf.cast(x > 0.0, tf.int32)), tf.float32)
    return tf.where(x > 0.0, x, 0.1 * x) * n


@pytest.mark.parametrize("body", [_elementwise, _reductions, _matrix, _shapes, _mixed_dtypes],
                         ids=lambda f: f.__name__)
def test_results_equal_eager(body):
    x = tf.constant(np.linspace(-1.5, 2.0, 12, dtype=np.float32).reshape(4, 3))
    want = body(x)
    got = tf.function(body)(x)
    assert isinstance(got, tf.Tensor)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


def test_hand_computed_values():
    @tf.function
    def f(x, y):
        return x * y + 1.0, tf.reduce_sum(x) - y

    a, b = f(tf.constant([1.0, 2.0, 3.0]), tf.constant(2.0))
    assert a.numpy().tolist() == [3.0, 5.0, 7.0] and b.numpy() == 4.0
    assert a.dtype == tf.float32 and b.shape == ()


# -- decorator forms ------------------------------------------------------------------------

def test_decorator_without_arguments():
    @tf.function
    def f(x):
        """Doc."""
        return x * 3.0

    assert float(f(tf.constant(2.0))) == 6.0
    assert f.__name__ == "f" and f.__doc__ == "Doc."


def test_decorator_with_arguments():
    @tf.function()
    def a(x):
        return x + 1.0

    @tf.function(jit_compile=True)
    def b(x):
        return x + 2.0

    @tf.function(reduce_retracing=True, input_signature=None)
    def c(x):
        return x + 3.0

    x = tf.constant(1.0)
    assert [float(a(x)), float(b(x)), float(c(x))] == [2.0, 3.0, 4.0]


def test_function_called_directly_and_keyword_func():
    def g(x):
        return x * x

    f1 = tf.function(g)
    f2 = tf.function(func=g, reduce_retracing=True)
    assert float(f1(tf.constant(3.0))) == float(f2(tf.constant(3.0))) == 9.0
    assert f1.python_function is g


def test_lambda_and_keyword_arguments():
    f = tf.function(lambda x, scale=2.0: x * scale)
    x = tf.constant([1.0, 2.0])
    assert f(x).numpy().tolist() == [2.0, 4.0]
    assert f(x, scale=3.0).numpy().tolist() == [3.0, 6.0]
    assert f(scale=0.5, x=x).numpy().tolist() == [0.5, 1.0]


def test_wrong_arguments_raise_type_error():
    f = tf.function(lambda x: x)
    with pytest.raises(TypeError):
        f()
    with pytest.raises(TypeError):
        f(tf.constant(1.0), tf.constant(2.0))


# -- methods of Module ----------------------------------------------------------------------

class Scale(tf.Module):
    def __init__(self, w, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(w)
        self.b = tf.Variable(1.0)

    @tf.function
    def __call__(self, x):
        return self.w * x + self.b


def test_method_each_instance_has_its_own_cache():
    a, b = Scale(2.0), Scale(3.0)
    x = tf.constant(1.0)
    assert float(a(x)) == 3.0 and float(b(x)) == 4.0
    assert count(a.__call__) == 1 and count(b.__call__) == 1
    a(tf.constant([1.0, 2.0]))  # a new shape retraces a, not b
    assert count(a.__call__) == 2 and count(b.__call__) == 1
    assert float(b(tf.constant(2.0))) == 7.0 and count(b.__call__) == 1
    assert a.__call__ is a.__call__  # one bound Function per instance


def test_method_uses_variables_created_in_init_without_retracing():
    m = Scale(2.0)
    x = tf.constant([1.0, 2.0])
    assert m(x).numpy().tolist() == [3.0, 5.0]
    m.w.assign(-1.0)
    m.b.assign_add(1.0)
    assert m(x).numpy().tolist() == [1.0, 0.0]  # -1*x + 2
    assert count(m.__call__) == 1


def test_method_gradient_with_respect_to_module_variables():
    m = Scale(2.0)
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(m(x) ** 2)
    gw, gb = tape.gradient(y, [m.w, m.b])
    # y = sum((w x + b)^2): dy/dw = sum(2 (w x + b) x) = 2 (3*1 + 5*2 + 7*3), dy/db = 2 (3 + 5 + 7)
    assert float(gw) == 68.0 and float(gb) == 30.0


def test_method_with_input_signature_on_module():
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable([1.0, 2.0, 3.0])

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def dot(self, x):
            return tf.reduce_sum(x) * self.v[0]

    m = M()
    assert float(m.dot(tf.constant([1.0, 2.0]))) == 3.0
    assert float(m.dot(tf.constant([1.0, 2.0, 4.0]))) == 7.0
    assert count(m.dot) == 1


# -- input_signature ------------------------------------------------------------------------

def test_none_dims_trace_once_for_several_shapes():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return tf.reduce_sum(x * x, axis=1)

    for n in (1, 3, 5):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        np.testing.assert_allclose(f(tf.constant(x)).numpy(), (x * x).sum(1))
    assert count(f) == 1
    assert f.retrace_reasons == []


def test_unknown_rank_signature_accepts_any_rank():
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def f(x):
        return x * 2.0

    assert float(f(tf.constant(1.5))) == 3.0
    assert f(tf.ones([2, 3])).shape == (2, 3)
    assert f(tf.ones([1, 1, 4])).numpy().sum() == 8.0
    assert count(f) == 1


def test_several_specs_and_keyword_call():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])
    def f(x, n):
        return x * tf.cast(n, tf.float32)

    assert f(tf.constant([1.0, 2.0]), tf.constant(3)).numpy().tolist() == [3.0, 6.0]
    assert f(n=tf.constant(2), x=tf.constant([1.0])).numpy().tolist() == [2.0]
    assert count(f) == 1


@pytest.mark.parametrize("bad", [
    pytest.param(lambda: tf.ones([3], dtype=tf.float64), id="dtype"),
    pytest.param(lambda: tf.ones([3, 2]), id="rank"),
    pytest.param(lambda: tf.ones([]), id="scalar"),
    pytest.param(lambda: tf.constant([1, 2, 3]), id="int"),
])
def test_incompatible_argument_raises_type_error(bad):
    # TensorFlow 2.21: TypeError "Binding inputs to tf.function failed due to `Can not cast
    # TensorSpec(shape=(2, 2), ...) to TensorSpec(shape=(None,), ...)`"
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return x + 1.0

    f(tf.ones([2]))
    with pytest.raises(TypeError, match="Binding inputs to tf.function `f` failed due to `Can not cast"):
        f(bad())
    assert count(f) == 1


def test_fixed_dimension_must_match():
    @tf.function(input_signature=[tf.TensorSpec([2, None], tf.float32)])
    def f(x):
        return x

    assert f(tf.ones([2, 7])).shape == (2, 7)
    with pytest.raises(TypeError, match=r"Can not cast TensorSpec\(shape=\(3, 7\)"):   # as TF 2.21
        f(tf.ones([3, 7]))


def test_tensor_spec_fields():
    s = tf.TensorSpec([None, 3], tf.float64, name="x")
    assert s.shape == (None, 3) and s.dtype == tf.float64 and s.name == "x"
    assert tf.TensorSpec([None, 3], tf.float64) == s
    # TensorFlow 2.21: TensorSpec(None).shape is TensorShape(None) (any rank), == None
    assert repr(tf.TensorSpec(None).shape) == "TensorShape(None)" and tf.TensorSpec(None).shape == None  # noqa: E711
    assert tf.TensorSpec(None).dtype == tf.float32 and repr(s.shape) == "TensorShape([None, 3])"


def test_python_number_matching_signature_is_converted_to_a_tensor():
    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def f(x):
        return x + 1.0

    y = f(2.0)
    assert isinstance(y, tf.Tensor) and y.dtype == tf.float32 and float(y) == 3.0
    assert isinstance(f(5.0), tf.Tensor) and float(f(5.0)) == 6.0
    assert count(f) == 1


# -- the trace cache ------------------------------------------------------------------------

def test_same_shape_and_dtype_do_not_retrace():
    f = tf.function(lambda x: x * 2.0)
    for v in (1.0, -3.0, 7.5):
        assert float(f(tf.constant(v))) == 2 * v
    assert count(f) == 1


def test_keyed_by_shape_dtype_and_python_value():
    @tf.function
    def f(x, k):
        return x * k

    f(tf.constant(1.0), 2.0)
    assert count(f) == 1
    f(tf.constant(5.0), 2.0)                      # same key
    assert count(f) == 1
    f(tf.constant([1.0, 2.0]), 2.0)                # shape
    assert count(f) == 2
    y = f(tf.constant(1.0, dtype=tf.float64), 2.0)  # dtype
    assert count(f) == 3 and y.dtype == tf.float64
    assert float(f(tf.constant(1.0), 3.0)) == 3.0   # Python value: baked into the trace
    assert count(f) == 4
    assert float(f(tf.constant(1.0), 2.0)) == 2.0   # the first trace again
    assert count(f) == 4


def test_numpy_arrays_are_keyed_like_tensors():
    f = tf.function(lambda x: x + 1.0)
    a = f(np.array([1.0, 2.0], np.float32))
    b = f(np.array([5.0, 6.0], np.float32))
    assert isinstance(a, tf.Tensor) and a.numpy().tolist() == [2.0, 3.0] and b.numpy().tolist() == [6.0, 7.0]
    assert count(f) == 1


def test_variables_of_the_same_spec_share_a_trace():
    f = tf.function(lambda v, x: v * x)
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    assert float(f(a, tf.constant(1.0))) == 2.0
    assert float(f(b, tf.constant(1.0))) == 3.0
    assert count(f) == 1


def test_reduce_retracing_generalizes_a_dimension():
    @tf.function(reduce_retracing=True)
    def f(x):
        return tf.reduce_sum(x)

    for n in (3, 4, 5, 6, 7):
        assert float(f(tf.ones([n]))) == n
    assert count(f) == 2
    assert f.retrace_reasons == ["argument 'x' changed from float32[3] to float32[?]"]


def test_retrace_reason_names_argument_and_specs():
    f = tf.function(lambda x, y: x + tf.reduce_sum(y))
    f(tf.ones([3]), tf.ones([]))
    f(tf.ones([4]), tf.ones([]))
    f(tf.ones([4]), tf.ones([2]))
    assert f.retrace_reasons == [
        "argument 'x' changed from float32[3] to float32[4]",
        "argument 'y' changed from float32[] to float32[2]",
    ]


def test_retrace_reason_for_dtype_and_structure():
    f = tf.function(lambda x: x * 2)
    f(tf.ones([3]))
    f(tf.ones([3], dtype=tf.float64))
    assert f.retrace_reasons == ["argument 'x' changed from float32[3] to float64[3]"]
    g = tf.function(lambda xs: xs[0])
    g([tf.ones([2])])
    g([tf.ones([2]), tf.ones([2])])
    assert count(g) == 2 and "structure" in g.retrace_reasons[0]


def test_retrace_reason_for_python_values_shows_the_values():
    @tf.function
    def f(x, n, training=False):
        return x * n if training else x

    f(tf.ones([2]), 3)
    f(tf.ones([2]), 4)
    f(tf.ones([2]), 4, training=True)
    assert f.retrace_reasons == ["argument 'n' changed from 3 to 4",
                                 "argument 'training' changed from False to True"]


def test_retrace_reason_compares_with_the_nearest_trace():
    f = tf.function(lambda x: x)
    for shape in ([], [3], [4]):
        f(tf.ones(shape))
    assert f.retrace_reasons[-1] == "argument 'x' changed from float32[3] to float32[4]"


def test_fifth_trace_warns_with_the_reason():
    f = tf.function(lambda x: x + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetracingWarning)
        for n in range(1, 5):
            f(tf.ones([n]))  # traces 1..4: no warning
    assert count(f) == 4
    with pytest.warns(RetracingWarning) as rec:
        f(tf.ones([5]))
    assert count(f) == 5
    msg = str(rec[0].message)
    assert f.retrace_reasons[-1] in msg
    assert "argument 'x' changed from float32[" in msg and "to float32[5]" in msg
    assert issubclass(RetracingWarning, UserWarning)


def test_retracing_warning_points_at_the_call_site():
    f = tf.function(lambda x: x + 1.0)
    for n in range(1, 5):
        f(tf.ones([n]))
    with pytest.warns(RetracingWarning) as rec:
        f(tf.ones([5]))
    assert os.path.basename(rec[0].filename) == HERE


# -- concrete functions ---------------------------------------------------------------------

def test_concrete_function_prints_its_graph():
    @tf.function
    def f(x):
        return tf.sin(x) * x

    cf = f.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    for text in (str(cf), repr(cf)):
        assert "Sin" in text and "Mul" in text and "f32[?,3]" in text
    assert count(f) == 1
    cf2 = f.get_concrete_function(tf.constant([1.0, 2.0]))  # from a tensor: its exact shape
    assert "f32[2]" in str(cf2) and count(f) == 2
    f(tf.constant([3.0, 4.0]))                             # already traced
    assert count(f) == 2


def test_concrete_function_is_callable():
    f = tf.function(lambda x: x * x)
    cf = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    assert cf(tf.constant([2.0, 3.0])).numpy().tolist() == [4.0, 9.0]


def test_get_concrete_function_of_input_signature():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return x + 1.0

    assert "Add" in str(f.get_concrete_function())
    assert "Add" in str(f.get_concrete_function(tf.TensorSpec([None], tf.float32)))


def test_get_concrete_function_unknown_rank_traces_per_rank():
    """tapeflow traces with known ranks: the unknown-rank concrete function traces each rank it
    is called with (TensorFlow's results; its graph is a clear error,
    test_concrete_inspection.py)."""
    f = tf.function(lambda x: x + 1.0)
    c = f.get_concrete_function(tf.TensorSpec(None, tf.float32))
    assert c(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 3.0]
    assert float(c(tf.constant(1.0))) == 2.0


# -- variables ------------------------------------------------------------------------------

def test_captured_variable_is_read_at_every_call():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        return v * x

    x = tf.constant(3.0)
    assert f(x).numpy().tolist() == [3.0, 6.0]
    v.assign([-1.0, 0.5])
    assert f(x).numpy().tolist() == [-3.0, 1.5]
    assert count(f) == 1


def test_assign_inside_writes_back_after_the_call():
    v = tf.Variable(1.0)

    @tf.function
    def step(x):
        v.assign(v * x)      # 1*2 = 2, then 4*2 = 8
        v.assign_add(3.0)    # 5, then 11
        v.assign_sub(1.0)    # 4, then 10
        return v * 10.0      # reads the new value

    assert float(step(tf.constant(2.0))) == 40.0 and float(v) == 4.0
    assert float(step(tf.constant(2.0))) == 100.0 and float(v) == 10.0
    assert count(step) == 1


def test_assign_inside_returns_nothing_and_still_writes():
    v = tf.Variable(np.zeros(3, np.float32))

    @tf.function
    def add(x):
        v.assign_add(x)

    assert add(tf.constant([1.0, 2.0, 3.0])) is None
    add(tf.constant([1.0, 1.0, 1.0]))
    assert v.numpy().tolist() == [2.0, 3.0, 4.0]


def test_assign_returns_the_new_value_inside():
    v = tf.Variable(1.0)
    inc = tf.function(lambda: v.assign_add(1.0))
    assert float(inc()) == 2.0 and float(inc()) == 3.0 and float(v) == 3.0
    twice = tf.function(lambda x: v.assign(x) * 2.0)
    assert float(twice(tf.constant(10.0))) == 20.0 and float(v) == 10.0
    read_after = tf.function(lambda: (v.assign_sub(4.0), v)[1])
    out = read_after()
    assert isinstance(out, tf.Tensor) and float(out) == 6.0 and float(v) == 6.0


def test_assign_to_a_variable_argument_writes_to_that_variable():
    @tf.function
    def add1(var):
        var.assign_add(1.0)
        return var * 1.0

    a, b = tf.Variable(1.0), tf.Variable(10.0)
    assert float(add1(a)) == 2.0
    assert float(add1(b)) == 11.0
    assert float(a) == 2.0 and float(b) == 11.0


def test_variable_created_on_first_call_is_reused():
    class Lazy(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None
            self.created = 0

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(2.0)
                self.created += 1
            return self.v * x

    m = Lazy()
    assert m(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    first = m.v
    assert isinstance(first, tf.Variable) and float(first) == 2.0
    assert m(tf.constant([3.0, 4.0, 5.0])).numpy().tolist() == [6.0, 8.0, 10.0]  # a retrace
    assert m.v is first and m.created == 1 and count(m.__call__) == 2
    m.v.assign(-1.0)
    assert m(tf.constant([1.0, 2.0])).numpy().tolist() == [-1.0, -2.0]


def test_variable_created_on_every_trace_raises_value_error_on_the_first_call():
    # TensorFlow 2.21 traces again after a trace that created variables and raises
    # "ValueError: tf.function only supports singleton tf.Variables created on the first call"
    # on the very first call when that trace creates one more.
    def body(x):
        w = tf.Variable(1.0)
        return w * x

    line = body.__code__.co_firstlineno + 1
    f = tf.function(body)
    with pytest.raises(ValueError, match="only supports singleton tf.Variables created on the "
                                         "first call") as e:
        f(tf.constant(3.0))
    msg = str(e.value)
    assert f"{HERE}:{line}" in msg and "tf.Variable(1.0)" in msg


def test_variable_returned_is_read_as_a_tensor():
    v = tf.Variable([1.0, 2.0])
    f = tf.function(lambda: v)
    out = f()
    assert isinstance(out, tf.Tensor) and not isinstance(out, tf.Variable)
    assert out.numpy().tolist() == [1.0, 2.0]


# -- Python control flow --------------------------------------------------------------------

def test_python_control_flow_on_python_values():
    @tf.function
    def f(x, n, square=False):
        for _ in range(n):
            x = x * 2.0
        if square:
            x = x * x
        while n > 1:
            x = x + 1.0
            n -= 1
        return x

    x = tf.constant(1.5)
    assert float(f(x, 3)) == 14.0             # 1.5*8 = 12, then +1 twice
    assert float(f(x, 1, square=True)) == 9.0  # 3^2
    assert float(f(x, 0)) == 1.5
    assert count(f) == 3


def test_python_control_flow_on_static_shapes():
    @tf.function
    def f(x):
        if x.shape[0] > 2:
            return tf.reduce_sum(x)
        return tf.reduce_prod(x)

    assert float(f(tf.constant([2.0, 3.0]))) == 6.0
    assert float(f(tf.constant([2.0, 3.0, 4.0]))) == 9.0


def test_python_while_on_a_tensor_not_converted_raises_tracing_error_naming_the_line():
    def body(x):
        while x > 0:        # converted to a While node, but for the `return` (test_python_while.py)
            x = x - 1.0
            if x > 100.0:
                return x
        return x

    line = body.__code__.co_firstlineno + 1
    f = tf.function(body)
    with pytest.raises(TracingError) as e:
        f(tf.constant(3.0))
    assert isinstance(e.value, TypeError)
    msg = str(e.value)
    assert f"{HERE}:{line}" in msg and "while x > 0" in msg and "tf.while_loop" in msg
    assert "not converted to a While node because its body has a `return`" in msg


def test_float_of_a_tensor_inside_raises_tracing_error():
    f = tf.function(lambda x: float(x) + 1.0)
    with pytest.raises(TracingError) as e:
        f(tf.constant(1.0))
    assert HERE in str(e.value)


# -- outputs --------------------------------------------------------------------------------

def test_returns_nested_structures():
    @tf.function
    def f(x):
        return {"sq": x * x, "parts": [x + 1.0, None, (x - 1.0, {"neg": -x})], "none": None}

    out = f(tf.constant(3.0))
    assert set(out) == {"sq", "parts", "none"} and out["none"] is None
    assert float(out["sq"]) == 9.0
    plus, nothing, (minus, inner) = out["parts"]
    assert isinstance(out["parts"], list) and nothing is None
    assert float(plus) == 4.0 and float(minus) == 2.0 and float(inner["neg"]) == -3.0


def test_returns_python_numbers_and_none():
    @tf.function
    def f(x, n):
        return x * n, n, 2.5, None

    y, n, k, nothing = f(tf.constant(2.0), 3)
    assert float(y) == 6.0 and nothing is None
    assert int(n) == 3 and float(k) == 2.5


def test_python_number_outputs_become_tensors_like_tensorflow():
    @tf.function
    def f(x):
        return x, 3, 2.5, None

    _, n, k, nothing = f(tf.constant(1.0))
    assert isinstance(n, tf.Tensor) and n.dtype == tf.int32 and int(n) == 3
    assert isinstance(k, tf.Tensor) and k.dtype == tf.float32 and float(k) == 2.5
    assert nothing is None


def test_returns_none_and_tuples():
    assert tf.function(lambda x: None)(tf.constant(1.0)) is None
    a, b = tf.function(lambda x: (x, x * 2.0))(tf.constant(1.0))
    assert (float(a), float(b)) == (1.0, 2.0)


def test_returning_an_input_or_a_constant():
    @tf.function
    def f(x):
        return x, tf.constant([1.0, 2.0]), tf.zeros([2])

    x = tf.constant([5.0, 6.0])
    a, b, c = f(x)
    assert a.numpy().tolist() == [5.0, 6.0] and b.numpy().tolist() == [1.0, 2.0]
    assert c.numpy().tolist() == [0.0, 0.0]


def test_captured_eager_tensor_is_an_input():
    c = tf.constant([1.0, 2.0])
    f = tf.function(lambda x: x * c)
    assert f(tf.constant(2.0)).numpy().tolist() == [2.0, 4.0]


# -- nested functions -----------------------------------------------------------------------

def test_function_calling_a_function():
    inner = tf.function(lambda x: x * x)

    @tf.function
    def outer(x):
        return inner(x) + inner(x + 1.0)

    x = tf.constant(2.0)
    assert float(outer(x)) == 13.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = outer(x)
    assert float(tape.gradient(y, x)) == 10.0  # 2x + 2(x+1)


# -- threads --------------------------------------------------------------------------------

def test_eight_threads_call_one_function_concurrently():
    w = tf.Variable(np.array([1.0, -2.0, 0.5, 3.0], np.float32))

    @tf.function
    def f(x, k):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x) * w) * k
        return y, tape.gradient(y, x)

    barrier = threading.Barrier(8)
    errors, results = [], {}

    def work(i):
        try:
            barrier.wait()
            for r in range(10):
                xv = np.linspace(0, 1, 4, dtype=np.float32) + i + r / 10
                y, g = f(tf.constant(xv), tf.constant(float(i + 1)))
                np.testing.assert_allclose(y.numpy(), np.sum(np.sin(xv) * w.numpy()) * (i + 1), rtol=1e-5)
                np.testing.assert_allclose(g.numpy(), np.cos(xv) * w.numpy() * (i + 1), rtol=1e-5)
                # an eager tape on this thread, through the same function
                x = tf.constant(xv)
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y2, _ = f(x, tf.constant(float(i + 1)))
                np.testing.assert_allclose(tape.gradient(y2, x).numpy(), g.numpy(), rtol=1e-6)
            results[i] = True
        except Exception as e:  # reported below
            errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 8
    assert count(f) == 1


def test_two_threads_tracing_different_functions_at_once():
    a_in, b_in, a_done = threading.Event(), threading.Event(), threading.Event()

    def body_a(x):
        y = x * 2.0
        a_in.set()
        b_in.wait(5)   # B is tracing now
        return y + 1.0

    def body_b(x):
        b_in.set()
        a_done.wait(5)  # A's trace (and call) has finished; B is still tracing
        return x * 3.0

    fa, fb = tf.function(body_a), tf.function(body_b)
    results, errors = {}, []

    def run(name, f, before=None, after=None):
        try:
            if before is not None:
                before.wait(5)
            results[name] = float(f(tf.constant(2.0)))
        except Exception as e:  # reported below
            errors.append(f"{name}: {e!r}")
        finally:
            if after is not None:
                after.set()

    threads = [threading.Thread(target=run, args=("a", fa, None, a_done)),
               threading.Thread(target=run, args=("b", fb, a_in, None))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == {"a": 5.0, "b": 6.0}


def test_a_symbolic_tensor_leaked_out_of_its_trace_is_an_error_naming_the_op():
    leaked = []

    @tf.function
    def f(x):
        leaked.append(x * 2.0)
        return x

    f(tf.constant(1.0))
    # TensorFlow: TypeError "... is out of scope and cannot be used here"
    with pytest.raises(TypeError, match=r"out of scope and cannot be used here \(op Add at .*test_function.py"):
        leaked[0] + 1.0


def test_a_concrete_function_keeps_the_python_values_it_was_traced_with():
    # TensorFlow 2.21: the same call with b=2 gives 100.0; b=3 raises TypeError "Binding
    # inputs to tf.function failed due to `Can not cast 3 to Literal[2]`"
    @tf.function
    def pw(a, b):
        return a ** b

    square = pw.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert float(square(tf.constant(10.0))) == 100.0
    assert float(square(tf.constant(10.0), 2)) == 100.0
    with pytest.raises(TypeError, match=r"Can not cast 3 to Literal\[2\]"):
        square(tf.constant(10.0), b=3)
