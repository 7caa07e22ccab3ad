"""Module: names, scopes, and variable/submodule discovery in tf.Module's order."""
import pytest

import tapeflow as tf
from tapeflow.keras import backend
from tapeflow.keras.layers import BatchNormalization, Dense
from tapeflow.runtime.module import Module


@pytest.fixture(autouse=True)
def fresh_names():
    backend.clear_session()


class MyModule(Module):
    pass


class Inner(Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(1.0, name="w")
        self.frozen = tf.Variable(2.0, name="frozen", trainable=False)


class Outer(Module):
    def __init__(self):
        super().__init__()
        self.b_list = [tf.Variable(3.0, name="l0"), [tf.Variable(4.0, name="l1")]]
        self.a_dict = {"z": tf.Variable(5.0, name="dz"), "a": tf.Variable(6.0, name="da")}
        self.child = Inner(name="child")
        self.kids = [Inner(name="kid0"), {"k": Inner(name="kid1")}]


def _names(variables):
    return [v.name for v in variables]


def test_default_name_is_snake_case_of_class():
    assert MyModule().name == "my_module"
    assert Module().name == "module"
    assert Module(name="custom").name == "custom"


def test_invalid_name_is_rejected():
    with pytest.raises(ValueError, match="not a valid module name"):
        Module(name="has space")


def test_variables_found_through_lists_dicts_and_submodules_in_tf_order():
    m = Outer()
    # Own attributes first, sorted by attribute name (a_dict < b_list), dict keys sorted;
    # then submodules in the order they were found (child, kid0, kid1).
    # Inside each Inner, 'frozen' sorts before 'w'.
    assert _names(m.variables) == ["da:0", "dz:0", "l0:0", "l1:0", "frozen:0", "w:0",
                                   "frozen:0", "w:0", "frozen:0", "w:0"]
    assert m.variables[5] is m.child.w
    assert m.variables[7] is m.kids[0].w
    assert m.variables[9] is m.kids[1]["k"].w
    assert isinstance(m.variables, tuple)


def test_trainable_and_non_trainable_split():
    m = Outer()
    assert all(v.trainable for v in m.trainable_variables)
    assert len(m.trainable_variables) == 7
    assert list(m.non_trainable_variables) == [m.child.frozen, m.kids[0].frozen, m.kids[1]["k"].frozen]
    assert isinstance(m.trainable_variables, tuple)


def test_submodules_nearest_first():
    m = Outer()
    assert [s.name for s in m.submodules] == ["child", "kid0", "kid1"]
    deep = Module(name="top")
    deep.mid = Module(name="mid")
    deep.mid.leaf = Module(name="leaf")
    assert [s.name for s in deep.submodules] == ["mid", "leaf"]


def test_shared_variable_reported_once_and_cycles_terminate():
    m = Module(name="m")
    v = tf.Variable(1.0, name="shared")
    m.x, m.y = v, [v]
    m.me = m
    child = Module(name="c")
    child.parent = m
    m.child = child
    assert list(m.variables) == [v]
    assert [s.name for s in m.submodules] == ["c"]


def test_variable_values_not_copied():
    m = Outer()
    m.child.w.assign(10.0)
    assert m.variables[5].numpy() == 10.0


def test_name_scope_names_variables_made_under_it():
    m = MyModule()
    with m.name_scope:
        v = tf.Variable(1.0, name="v")
    assert v.name == "my_module/v:0"
    assert m.name_scope.name == "my_module/"


def test_name_scope_is_captured_at_construction_and_absolute():
    with tf.name_scope("outer"):
        m = MyModule()
    with tf.name_scope("elsewhere"):
        with m.name_scope:
            v = tf.Variable(1.0, name="v")
    assert v.name == "outer/my_module/v:0"
    u = tf.Variable(1.0, name="u")
    assert u.name == "u:0"  # the scope is restored afterwards


def test_with_name_scope_decorator():
    class Scoped(Module):
        @Module.with_name_scope
        def make(self):
            return tf.Variable(0.0, name="made")

    assert Scoped().make().name == "scoped/made:0"


def test_module_sees_dense_variables_kernel_then_bias():
    class Model(Module):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)

    model = Model()
    model.dense(tf.ones((1, 3)))
    # tf.Module walks the layer's attributes: `_trainable_weights` = [kernel, bias] comes first.
    assert _names(model.trainable_variables) == ["dense/kernel:0", "dense/bias:0"]
    assert list(model.submodules) == [model.dense]


def test_module_sees_batchnorm_non_trainable_first():
    class Model(Module):
        def __init__(self):
            super().__init__()
            self.bn = BatchNormalization()

    model = Model()
    model.bn(tf.ones((2, 3)))
    # As in TF: `_non_trainable_weights` sorts before `_trainable_weights`.
    assert _names(model.variables) == ["batch_normalization/moving_mean:0",
                                       "batch_normalization/moving_variance:0",
                                       "batch_normalization/gamma:0", "batch_normalization/beta:0"]
    assert _names(model.trainable_variables) == ["batch_normalization/gamma:0",
                                                 "batch_normalization/beta:0"]


def test_layers_called_inside_module_scope_get_prefixed_names():
    class Model(Module):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)

        def __call__(self, x):
            with self.name_scope:
                return self.dense(x)

    model = Model()
    model(tf.ones((1, 3)))
    assert model.dense.kernel.name == "model/dense/kernel:0"
