"""The fuzz run: mutants of real saved programs load and run, or raise SavedModelError; nothing else.

A few hundred cases in CI; thousands with ``-m slow``. Figures (cases, errors raised,
loaded and ran, anything else) are printed (``-s``) and asserted: anything else = 0. A mutant
that is still a valid program may fail while running only the way any program does when an op
rejects its data (an index out of range after an op swap); those are counted apart.
"""
import numpy as np
import pytest

import tapeflow as tf

from fuzz import run_cases
from programs import PROGRAMS, run_program


class Sliced(tf.Module):
    """Variables in a list and a dict, __call__, slicing with Ellipsis, an int variable assigned."""

    def __init__(self):
        super().__init__()
        self.ws = [tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), name="w")]
        self.named = {"b": tf.Variable([0.1, 0.2, 0.3], name="b")}
        self.count = tf.Variable(0, trainable=False, name="count")

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def __call__(self, x):
        self.count.assign_add(1)
        y = tf.nn.softplus(x @ self.ws[0] + self.named["b"])
        return {"y": y[..., 1:], "total": tf.reduce_sum(tf.transpose(y) * 2.0)}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, module_numpy_backend):
    base = tmp_path_factory.mktemp("fuzz_pristine")
    dirs = []
    for name in ("seed003_clip", "seed004_linear", "batchnorm_training", "seed003_input_grad_reg"):
        module = PROGRAMS[name][0]()
        run_program(module, name)
        tf.saved_model.save(module, str(base / name))
        dirs.append(str(base / name))
    s = Sliced()
    s(tf.zeros([1, 2]))
    tf.saved_model.save(s, str(base / "sliced"))
    dirs.append(str(base / "sliced"))

    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32), tf.TensorSpec([], tf.int32)])
    def plain(x, n):
        return tf.reduce_sum(x * tf.cast(n, tf.float32)), tf.gather(x, n % 3)

    tf.saved_model.save(plain, str(base / "plain"))
    dirs.append(str(base / "plain"))
    tf.saved_model.save(PROGRAMS["seed003_clip"][0](), str(base / "clip_nocg"),
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=False))
    dirs.append(str(base / "clip_nocg"))
    return dirs


def _fuzz(pristine, tmp_path, n, seed):
    counts, failures = run_cases(pristine, n, seed, str(tmp_path))
    print(f"\nfuzz: {counts}")
    assert counts["cases"] == n
    assert counts["other"] == 0, failures[:10]
    assert counts["saved_model_error"] + counts["loaded_and_ran"] + counts["ran_into_op_error"] == n
    assert counts["saved_model_error"] > n // 2   # the mutations really break things
    assert counts["loaded_and_ran"] > 0            # ... and some stay valid programs


def test_fuzz_ci(pristine, tmp_path):
    _fuzz(pristine, tmp_path, 400, seed=2026)


@pytest.mark.slow
def test_fuzz_thousands(pristine, tmp_path):
    _fuzz(pristine, tmp_path, 5000, seed=6)
