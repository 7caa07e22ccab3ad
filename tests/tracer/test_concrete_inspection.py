"""What TensorFlow shows of a traced function: ``ConcreteFunction.graph``,
``pretty_printed_signature`` / ``pretty_printed_concrete_signatures`` and
``get_concrete_function(TensorSpec(None))``. Expected text is TensorFlow 2.21's."""
import pytest

import tapeflow as tf


def _f():
    @tf.function
    def f(x, y=2.0):
        return tf.reduce_sum(x * y)
    return f


def test_pretty_printed_concrete_signatures_as_tensorflow():
    f = _f()
    f(tf.constant([1., 2.]))
    f(tf.constant([[1.]]), 3.0)
    # TensorFlow 2.21, character for character:
    assert f.pretty_printed_concrete_signatures() == """Input Parameters:
  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.float32, name=None)
  y (POSITIONAL_OR_KEYWORD): Literal[2.0]
Output Type:
  TensorSpec(shape=(), dtype=tf.float32, name=None)
Captures:
  None

Input Parameters:
  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(1, 1), dtype=tf.float32, name=None)
  y (POSITIONAL_OR_KEYWORD): Literal[3.0]
Output Type:
  TensorSpec(shape=(), dtype=tf.float32, name=None)
Captures:
  None"""


def test_concrete_function_graph_operations():
    cf = _f().get_concrete_function(tf.constant([1., 2.]))
    ops = cf.graph.get_operations()
    # TF: Placeholder x, Const mul/y, Mul mul, Const, Sum, Identity: the input placeholder
    # first, then the ops in order (tapeflow names them by op type and has no Identity).
    assert [op.type for op in ops] == ["Placeholder", "Const", "Mul", "Sum"]
    assert [op.name for op in ops] == ["x", "Const", "Mul", "Sum"]
    assert [t.name for t in ops[2].inputs] == ["x:0", "Const:0"]
    assert repr(ops[2].outputs[0]) == "<tf.Tensor 'Mul:0' shape=(2,) dtype=float32>"
    assert cf.graph.get_tensor_by_name("x:0").shape == (2,)
    assert [tuple(v.shape) for v in cf.graph.inputs] == [(2,)]     # TF: [<tf.Tensor 'x:0' shape=(2,)>]
    assert [v.dtype for v in cf.graph.outputs] == [tf.float32]
    assert cf.graph.name == "f"


def test_get_concrete_function_of_unknown_rank():
    @tf.function
    def g(x):
        return tf.reduce_sum(x) + tf.cast(tf.rank(x), tf.float32)

    c = g.get_concrete_function(tf.TensorSpec(None))
    assert float(c(tf.constant([[1., 2.]]))) == 5.0   # TF: 5.0
    assert float(c(tf.constant(3.))) == 3.0           # TF: 3.0
    assert "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)" \
        in c.pretty_printed_signature()               # TF: the same line
    with pytest.raises(TypeError):
        c(tf.constant([1, 2]))                        # TF: TypeError (int32 for a float32 spec)
    with pytest.raises(ValueError, match="no single graph"):
        c.graph                                       # beyond TF: traced per rank


def test_tensor_spec_of_unknown_shape_prints_as_tensorflow():
    assert repr(tf.TensorSpec(None)) == "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)"
