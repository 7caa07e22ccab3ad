"""Random programs with a TensorArray written in a `for` over `tf.range` (tensor `if`s,
`break`/`continue`, a called helper with its own control flow, nested loops), then an `if`
on a tensor whose branches `return`: the traced result equals the eager one (the Python
loop), with one trace, and gradients match finite differences (first order; second order
for a few).
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.testing import check_gradients

from tracer.generated import load_programs

SIZE = 6


def _helper(rng, k):
    return "\n".join([
        f"def helper_{k}(v):",
        f"    if tf.reduce_sum(v) > {rng.uniform(-1, 1):.3f}:",
        f"        return tf.tanh(v * {rng.uniform(0.5, 1.5):.3f})",
        "    w = v",
        f"    while tf.reduce_max(tf.abs(w)) > {rng.uniform(1.0, 2.0):.3f}:",
        "        w = w * 0.5",
        "    return w - 0.125",
    ]) + "\n"


def _body(rng, k, depth):
    out = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["affine", "if", "jump", "helper", "nested"] if depth == 0
                          else ["affine", "if", "helper"])
        if kind == "affine":
            out.append(f"h = h * {rng.uniform(0.5, 1.0):.3f} + tf.sin(x) * {rng.uniform(-1, 1):.3f}")
        elif kind == "if":
            out += [f"if tf.reduce_sum(h) > {rng.uniform(-2, 2):.3f}:",
                    f"    h = h * {rng.uniform(0.5, 1.5):.3f}", "else:", "    h = tf.tanh(h + x)"]
        elif kind == "jump":
            out += [f"if tf.reduce_max(h) > {rng.uniform(0.5, 3):.3f}:",
                    f"    {rng.choice(['break', 'continue'])}"]
        elif kind == "helper":
            out.append(f"h = helper_{k}(h) + x * 0.25")
        else:
            out += [f"for j in tf.range({rng.randint(1, 3)}):",
                    "    " + "h = h + tf.cos(h) * tf.cast(j, h.dtype) * 0.125"]
    return out


def _program(rng, k):
    lines = [f"def prog_{k}(x, n):",
             f"    ta = tf.TensorArray(x.dtype, size={SIZE}, element_shape=[2])",
             "    h = x * 0.5",
             "    for i in tf.range(n):"]
    lines += ["        " + line for line in _body(rng, k, 0)]
    lines += ["        ta = ta.write(i, h)",
              "    s = ta.stack()",
              f"    if tf.reduce_sum(s) > {rng.uniform(-2, 2):.3f}:",
              "        return s * s",
              "    return s + tf.reduce_sum(h)"]
    return _helper(rng, k) + "\n\n" + "\n".join(lines) + "\n"


def _load(tmp_path, count, seed):
    return load_programs(tmp_path, "tensor_array_programs", _program, count, seed)


INPUTS = [([0.5, -1.0], 0), ([0.5, -1.0], 3), ([2.0, 1.5], 5), ([-0.3, 0.25], 6)]


def _check(fn, order):
    f = tf.function(fn)
    for x, n in INPUTS:
        args = (tf.constant(np.array(x)), tf.constant(n))
        np.testing.assert_allclose(f(*args).numpy(), fn(*args).numpy(), rtol=1e-10, atol=1e-12)
    assert f.experimental_get_tracing_count() == 1
    ops = [node.op for node in f.get_concrete_function(*args).graph.nodes]
    assert "While" in ops and "If" in ops
    for x, n in INPUTS[1:3]:
        check_gradients(lambda v: f(v, tf.constant(n)), np.array(x), order=order,
                        rtol=1e-4, atol=1e-5)


def test_random_tensor_array_programs_match_eager_and_finite_differences(tmp_path):
    for k, fn in enumerate(_load(tmp_path, 12, seed=0)):
        _check(fn, order=2 if k < 3 else 1)


@pytest.mark.slow
def test_many_random_tensor_array_programs(tmp_path):
    for fn in _load(tmp_path, 100, seed=1):
        _check(fn, order=1)
