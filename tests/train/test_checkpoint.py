"""``tf.train.Checkpoint``: TensorFlow 2.21's behaviour for each case (quoted), and the
saved programs' safety for the files (data only, every field validated)."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError, NotFoundError
from tapeflow.saved_model import SavedModelError


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([1., 2.])
        self.b = tf.Variable(0.5)
        self.sub = [tf.Variable(3.0)]


def _saved(tmp_path):
    net, step = Net(), tf.Variable(1, dtype=tf.int64)
    ck = tf.train.Checkpoint(model=net, step=step)
    return ck, net, ck.save(str(tmp_path / "prefix"))


def test_save_numbers_and_lists_variables_as_tensorflow(tmp_path):
    ck, _, path = _saved(tmp_path)
    assert path == str(tmp_path / "prefix-1")                        # TF: .../prefix-1
    # TF: the same keys and shapes
    assert tf.train.list_variables(path) == [
        ("_CHECKPOINTABLE_OBJECT_GRAPH", []), ("model/b/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("model/sub/0/.ATTRIBUTES/VARIABLE_VALUE", []), ("model/w/.ATTRIBUTES/VARIABLE_VALUE", [2]),
        ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", []), ("step/.ATTRIBUTES/VARIABLE_VALUE", [])]
    assert tf.train.latest_checkpoint(str(tmp_path)) == path        # TF: .../prefix-1
    assert open(tmp_path / "checkpoint").read() == ('model_checkpoint_path: "prefix-1"\n'
                                                    'all_model_checkpoint_paths: "prefix-1"\n')
    assert int(ck.save_counter.numpy()) == 1 and ck.save_counter.dtype == tf.int64
    assert ck.save(str(tmp_path / "prefix")).endswith("prefix-2")
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("prefix-2")
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "model/w"), [1., 2.])


def test_restore_assigns_and_status_asserts(tmp_path):
    ck, net, path = _saved(tmp_path)
    net.w.assign([9., 9.])
    status = ck.restore(path)
    assert net.w.numpy().tolist() == [1., 2.]                       # TF: [1. 2.]
    status.assert_consumed()                                         # TF: passes
    fresh = tf.train.Checkpoint(model=Net(), step=tf.Variable(0, dtype=tf.int64))
    fresh.restore(tf.train.latest_checkpoint(str(tmp_path))).assert_consumed()
    assert int(fresh.step.numpy()) == 1                             # TF: 1
    assert int(fresh.save_counter.numpy()) == 1                     # restored: numbering goes on


def test_partial_restores(tmp_path):
    _, _, path = _saved(tmp_path)
    status = tf.train.Checkpoint(model=Net()).restore(path)
    with pytest.raises(AssertionError):                              # TF: AssertionError
        status.assert_consumed()                                     # (step unresolved)
    status.expect_partial()
    with pytest.raises(AssertionError):                              # TF: AssertionError
        tf.train.Checkpoint(x=tf.Variable([1., 2., 3.])).restore(path).assert_consumed()


def test_write_and_read_without_numbering(tmp_path):
    v = tf.Variable([[1., 2.]])
    ck = tf.train.Checkpoint(v=v)
    assert ck.write(str(tmp_path / "w")) == str(tmp_path / "w")     # TF: the path itself
    assert not (tmp_path / "checkpoint").exists()                    # TF: no checkpoint file
    v.assign([[0., 0.]])
    ck.read(str(tmp_path / "w")).assert_consumed()
    assert v.numpy().tolist() == [[1., 2.]]


def test_mismatches_raise_tensorflow_errors(tmp_path):
    _, _, path = _saved(tmp_path)
    with pytest.raises(InvalidArgumentError, match="expected dtype int32"):   # TF: the same type
        tf.train.Checkpoint(model=Net(), step=tf.Variable(0, dtype=tf.int32)).restore(path)
    with pytest.raises(ValueError, match="Received incompatible tensor with shape"):  # TF: same
        tf.train.Checkpoint(model=Net(), step=tf.Variable([0, 1], dtype=tf.int64)).restore(path)
    with pytest.raises(NotFoundError):                                        # TF: NotFoundError
        tf.train.Checkpoint(model=Net()).restore(str(tmp_path / "missing" / "x"))
    with pytest.raises(ValueError, match="expecting a to be a trackable object"):  # TF: same
        tf.train.Checkpoint(a=3)


def test_optimizer_state_round_trips(tmp_path):
    dense = tf.keras.layers.Dense(2)
    dense.build((None, 3))
    opt = tf.keras.optimizers.Adam(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(dense(tf.ones([1, 3])))
    opt.apply_gradients(zip(tape.gradient(loss, dense.trainable_variables), dense.trainable_variables))
    ck = tf.train.Checkpoint(model=dense, optimizer=opt)
    path = ck.write(str(tmp_path / "k"))
    before = [v.numpy().copy() for v in opt.variables] + [v.numpy().copy() for v in dense.variables]
    for v in list(opt.variables) + list(dense.variables):
        v.assign(tf.zeros_like(v))
    ck.read(path).assert_consumed()
    after = [v.numpy() for v in opt.variables] + [v.numpy() for v in dense.variables]
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


# -- hostile files: the saved programs' checks -------------------------------------------------
def _tamper(tmp_path, change):
    _, _, path = _saved(tmp_path)
    index = path + ".index"
    m = json.load(open(index))
    change(m)
    json.dump(m, open(index, "w"))
    return path


@pytest.mark.parametrize("change, problem", [
    (lambda m: m.update(version=99), "version"),
    (lambda m: m["variables"][0].update(file="../../etc/passwd"), "data files"),
    (lambda m: m["variables"][0].update(shape=[-1]), "shape"),
    (lambda m: m["variables"][0].update(dtype="object"), "dtype"),
    (lambda m: m["variables"][0].update(extra=1), "exactly"),
    (lambda m: m["variables"][2].update(shape=[3]), "shape"),   # the .npy header disagrees
])
def test_a_tampered_index_is_a_saved_model_error(tmp_path, change, problem):
    path = _tamper(tmp_path, change)
    with pytest.raises(SavedModelError, match=problem):
        ck = tf.train.Checkpoint(model=Net(), step=tf.Variable(0, dtype=tf.int64))
        # shapes changed in the index are refused before a variable is compared with them
        ck.restore(path) if problem != "shape" else tf.train.load_variable(path, "model/w")


def test_a_symlinked_data_file_is_refused(tmp_path):
    _, _, path = _saved(tmp_path)
    data = path + ".data"
    target = os.path.join(data, "0.npy")
    os.replace(target, str(tmp_path / "elsewhere.npy"))
    os.symlink(str(tmp_path / "elsewhere.npy"), target)
    with pytest.raises(SavedModelError, match="symbolic link"):
        tf.train.Checkpoint(model=Net(), step=tf.Variable(0, dtype=tf.int64)).restore(path)
