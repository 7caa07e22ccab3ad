"""tf.TypeSpec, tf.TensorArraySpec, tf.type_spec_from_value, tf.VariableAggregation,
tf.VariableSynchronization, tf.variable_creator_scope, tf.guarantee_const. Every expected
value is TensorFlow 2.21's (asked from /work/tfvenv), written as a literal."""
import numpy as np
import pytest

import tapeflow as tf

A, S = tf.VariableAggregation, tf.VariableSynchronization


def test_type_specs():
    assert isinstance(tf.TensorSpec([1]), tf.TypeSpec) and isinstance(tf.IndexedSlicesSpec(), tf.TypeSpec)
    assert repr(tf.IndexedSlicesSpec()) == ("IndexedSlicesSpec(TensorShape(None), tf.float32, tf.int64, "
                                            "None, TensorShape([None]))")
    assert repr(tf.IndexedSlicesSpec([3, 2], tf.float64, tf.int32, tf.int32, [4])) == (
        "IndexedSlicesSpec(TensorShape([3, 2]), tf.float64, tf.int32, tf.int32, TensorShape([4]))")
    assert tf.IndexedSlicesSpec().value_type is tf.IndexedSlices
    assert tf.IndexedSlicesSpec([3, 2]) == tf.IndexedSlicesSpec([3, 2])
    assert tf.IndexedSlicesSpec([None, 2]).is_compatible_with(tf.IndexedSlicesSpec([3, 2]))
    assert not tf.IndexedSlicesSpec([4, 2]).is_compatible_with(tf.IndexedSlicesSpec([3, 2]))
    assert repr(tf.IndexedSlicesSpec([3, 2]).most_specific_common_supertype(
        [tf.IndexedSlicesSpec([4, 2])])) == ("IndexedSlicesSpec(TensorShape([None, 2]), tf.float32, "
                                             "tf.int64, None, TensorShape([None]))")
    assert repr(tf.TensorArraySpec()) == "TensorArraySpec(TensorShape(None), tf.float32, False, True)"
    spec = tf.TensorArraySpec([2], tf.int32, dynamic_size=True, infer_shape=False)
    assert repr(spec) == "TensorArraySpec(TensorShape([2]), tf.int32, True, False)"
    spec = tf.TensorArraySpec([2], tf.int32)
    assert spec.value_type is tf.TensorArray and spec == tf.TensorArraySpec([2], tf.int32)
    assert spec.is_compatible_with(tf.TensorArraySpec([None], tf.int32))
    assert not spec.is_compatible_with(tf.TensorArraySpec([None], tf.float32))


def test_type_spec_from_value():
    f = tf.type_spec_from_value
    assert repr(f(tf.constant([1.0, 2.0]))) == "TensorSpec(shape=(2,), dtype=tf.float32, name=None)"
    assert repr(f(np.ones((2, 3)))) == "TensorSpec(shape=(2, 3), dtype=tf.float64, name=None)"
    assert repr(f(3.0)) == "TensorSpec(shape=(), dtype=tf.float32, name=None)"
    assert repr(f([1, 2])) == "TensorSpec(shape=(2,), dtype=tf.int32, name=None)"
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[3], dynamic_size=True)
    assert repr(f(ta)) == "TensorArraySpec(TensorShape([3]), tf.float32, True, True)"
    ta = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
    assert repr(f(ta)) == "TensorArraySpec(TensorShape([2]), tf.float32, False, True)"
    assert repr(f(tf.data.Dataset.range(3))) == (
        "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))")
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    assert repr(f(s)) == ("IndexedSlicesSpec(TensorShape([3, 2]), tf.float32, tf.int32, tf.int32, "
                          "TensorShape([1]))")
    with pytest.raises(TypeError, match="Could not build a TypeSpec for <object object"):
        f(object())
    with pytest.raises(TypeError, match=r"Could not build a TypeSpec for \{'a': 1\} of unsupported type"):
        f({"a": 1})

    @tf.function
    def traced(x):
        assert repr(f(x)) == "TensorSpec(shape=(2,), dtype=tf.float32, name=None)"
        return x

    traced(tf.constant([1.0, 2.0]))


def test_variable_policy():
    assert [m.name for m in A] == ["NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA"]
    assert [m.value for m in S] == [0, 1, 2, 3]
    assert [m.name for m in S] == ["AUTO", "NONE", "ON_WRITE", "ON_READ"]
    v = tf.Variable(1.0, aggregation=A.SUM, synchronization=S.ON_READ)
    assert (v.aggregation, v.synchronization, v.trainable) == (A.SUM, S.ON_READ, False)
    assert tf.Variable(1.0, synchronization=S.ON_READ, trainable=True).trainable is True
    assert tf.Variable(1.0, synchronization=S.ON_WRITE).trainable is True
    w = tf.Variable(1.0)
    assert (w.aggregation, w.synchronization) == (A.NONE, S.AUTO)
    assert w.assign(2.0).aggregation is A.NONE
    assert tf.Variable(1.0, aggregation=1).aggregation is A.SUM          # TF takes the int
    assert tf.Variable(1.0, synchronization=3).synchronization is S.ON_READ
    assert tf.Variable(1.0, synchronization=None).synchronization is S.AUTO
    assert hash(A.SUM) == 1
    for kw, msg in [({"aggregation": "sum"}, "Invalid variable aggregation mode: sum for variable: None"),
                    ({"aggregation": 5}, "Invalid variable aggregation mode: 5 for variable: None"),
                    ({"synchronization": "x"}, "Invalid variable synchronization mode: x for variable: None")]:
        with pytest.raises(ValueError, match=msg):
            tf.Variable(1.0, **kw)


def test_variable_creator_scope():
    log = []

    def outer(next_creator, **kwargs):
        log.append(("outer", sorted(kwargs)))
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        log.append(("inner", {k: kwargs[k] for k in ("initial_value", "trainable", "name", "dtype",
                                                     "shape", "aggregation", "synchronization",
                                                     "validate_shape", "constraint")}))
        kwargs["initial_value"] = 42.0
        return next_creator(**kwargs)

    with tf.variable_creator_scope(outer):
        with tf.variable_creator_scope(inner):
            v = tf.Variable([1.0, 2.0], name="q", dtype=tf.float64)
    # TF 2.21: innermost first; the arguments a creator sees
    assert log[0] == ("inner", {"initial_value": [1.0, 2.0], "trainable": None, "name": "q",
                                "dtype": tf.float64, "shape": None, "aggregation": A.NONE,
                                "synchronization": S.AUTO, "validate_shape": True,
                                "constraint": None})
    assert log[1] == ("outer", ["aggregation", "caching_device", "constraint", "dtype",
                                "experimental_enable_variable_lifting", "import_scope",
                                "initial_value", "name", "shape", "synchronization", "trainable",
                                "validate_shape", "variable_def"])
    assert float(v.numpy()) == 42.0 and v.name == "q:0"

    def frozen(next_creator, **kwargs):
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    with tf.variable_creator_scope(frozen):
        assert tf.Variable(2.0).trainable is False
    names = []

    def named(next_creator, **kwargs):
        names.append(kwargs["name"])
        return next_creator(**kwargs)

    with tf.variable_creator_scope(named):
        tf.keras.layers.Dense(2).build((None, 3))
    assert names == ["kernel", "bias"]                # TF 2.21: Keras' weights go through it
    with tf.variable_creator_scope(lambda next_creator, **kwargs: "not a variable"):
        assert tf.Variable(2.0) == "not a variable"   # what the creator returns
    assert tf.Variable(2.0).trainable is True         # the scope is gone


def test_guarantee_const_is_an_identity_without_a_gradient(numpy_backend):
    assert tf.guarantee_const(tf.constant([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]
    got = tf.guarantee_const([1, 2])
    assert got.dtype == tf.int32 and got.numpy().tolist() == [1, 2]
    assert float(tf.guarantee_const(tf.Variable(1.0))) == 1.0
    assert not hasattr(tf.debugging, "guarantee_const")
    x = tf.constant([1.0, 2.0])

    def grad(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.guarantee_const(x) * x)
        return t.gradient(y, x)

    with pytest.raises(LookupError, match="gradient registry has no entry for: GuaranteeConst"):
        grad(x)
    with pytest.raises(LookupError, match="gradient registry has no entry for: GuaranteeConst"):
        tf.function(grad)(x)
    assert tf.function(lambda x: tf.guarantee_const(x) * 2.0)(x).numpy().tolist() == [2.0, 4.0]
