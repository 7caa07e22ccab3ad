"""Informative reprs (issue 15): what a user sees printing these objects at a prompt."""
import tapeflow as tf


def test_gradient_tape_repr_says_its_state():
    x, c = tf.Variable([1.0, 2.0]), tf.constant(3.0)
    tape = tf.GradientTape()
    assert repr(tape) == ("<GradientTape persistent=False, not recording: 0 ops recorded, "
                          "0 tensors and 0 variables watched>")
    with tape:
        tape.watch(c)
        y = tf.reduce_sum(x * c)
        assert repr(tape).startswith("<GradientTape persistent=False, recording: ")
    tape.gradient(y, x)
    assert "used up" in repr(tape) and "1 tensors and 1 variables watched" in repr(tape)
    assert repr(tf.GradientTape(persistent=True)).startswith("<GradientTape persistent=True,")


def test_function_and_lowered_reprs():
    @tf.function
    def f(a, b=2):
        return a * b

    assert repr(f) == "<tapeflow.function f(a, b=2): 0 traces>"
    low = f.lower(tf.constant([1.0]))
    assert repr(f) == "<tapeflow.function f(a, b=2): 1 trace>"
    assert repr(low).startswith("<Lowered f(a): 2 traced nodes, 1 outputs; stages: traced, ")
