"""tf.print: TensorFlow 2.21's text (asked of TensorFlow itself), eagerly and in compiled code,
printed when the program runs, in program order, once per run."""
import sys

import numpy as np
import pytest

import tapeflow as tf

# (arguments, keywords, what TensorFlow 2.21 printed)
FACTS = [
    (("hello", tf.constant(1.5), tf.constant([1.0, 2.5, 3.0]), 7, tf.constant([[1, 2], [3, 4]])), {},
     "hello 1.5 [1 2.5 3] 7 [[1 2]\n [3 4]]\n"),
    ((tf.range(10),), {}, "[0 1 2 ... 7 8 9]\n"),
    ((tf.reshape(tf.range(24), [2, 3, 4]),), {},
     "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]\n"),
    ((tf.constant(True), tf.constant([1e-8, 123456.7]), tf.constant(2.0, tf.float64)), {},
     "1 [1e-08 123456.703] 2\n"),
    (("a", "b"), {"sep": "-", "end": "!\n"}, "a-b!\n"),
    (({"x": tf.constant(1.0)}, [tf.constant(2), 3]), {}, "{'x': 1} [2, 3]\n"),
    ((tf.constant(1.0 / 3), tf.constant([0.1, 0.25])), {"summarize": -1}, "0.333333343 [0.1 0.25]\n"),
    ((tf.range(10),), {"summarize": 2}, "[0 1 ... 8 9]\n"),
    ((tf.zeros([0]), tf.constant(-0.0), tf.constant([float("nan"), float("inf")])), {}, "[] -0 [nan inf]\n"),
]


@pytest.mark.parametrize("args, kw, text", FACTS)
def test_eager_text_is_tensorflows(capsys, args, kw, text):
    tf.print(*args, output_stream=sys.stdout, **kw)
    assert capsys.readouterr().out == text


def test_default_stream_is_stderr_and_braces_survive(capsys):
    tf.print("{x}", {"k": tf.constant([1, 2])})
    out = capsys.readouterr()
    assert out.out == "" and out.err == "{x} {'k': [1 2]}\n"


def test_a_float64_needs_17_digits_only_when_15_do_not_read_back(capsys):
    tf.print(tf.constant(0.1, tf.float64), tf.constant(1 / 3, tf.float64), output_stream=sys.stdout)
    assert capsys.readouterr().out == "0.1 0.33333333333333331\n"


@pytest.fixture(params=["numpy", "numba"])
def backend(request):
    old = tf.tracer.engine.get_backend()
    tf.set_backend(request.param)
    yield request.param
    tf.set_backend(old)


def test_in_a_function_it_prints_each_call_in_order(capsys, backend):
    @tf.function
    def f(x):
        tf.print("in f", x, output_stream=sys.stdout)
        y = x * 2
        tf.print("y", y, output_stream=sys.stdout)
        return y + 1

    assert float(f(tf.constant(1.0))) == 3.0 and float(f(tf.constant(2.0))) == 5.0
    assert capsys.readouterr().out == "in f 1\ny 2\nin f 2\ny 4\n"   # TF: the same lines
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = f(x)
    assert float(tape.gradient(z, x)) == 2.0
    assert capsys.readouterr().out == "in f 3\ny 6\n"     # the forward printed, the backward not


def test_in_branches_only_the_taken_one_prints(capsys, backend):
    @tf.function
    def g(x):
        if x > 0:
            tf.print("pos", x, output_stream=sys.stdout)
            y = x * x
        else:
            tf.print("neg", x, output_stream=sys.stdout)
            y = x
        return tf.cond(y > 5.0, lambda: (tf.print("big", output_stream=sys.stdout), y)[1], lambda: y)

    g(tf.constant(1.0))
    g(tf.constant(-1.0))
    assert capsys.readouterr().out == "pos 1\nneg -1\n"
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = g(x)
    assert float(tape.gradient(y, x)) == 6.0
    assert capsys.readouterr().out == "pos 3\nbig\n"       # once: the If's gradient does not print


def test_a_saved_program_keeps_its_prints(tmp_path, capsys):
    @tf.function(input_signature=[tf.TensorSpec([2])])
    def f(x):
        tf.print("x =", x, output_stream=sys.stdout)
        return x + 1.0

    tf.saved_model.save(f, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    capsys.readouterr()
    np.testing.assert_array_equal(loaded(tf.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    assert capsys.readouterr().out == "x = [1 2]\n"


def test_a_stream_other_than_stdout_or_stderr_is_refused():
    with pytest.raises(ValueError, match="output_stream must be sys.stderr or sys.stdout"):
        tf.print("x", output_stream=open)
