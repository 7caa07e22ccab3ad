"""Random programs with Python `if`s on tensors (sequential, nested, `elif`, `and`/`or`/`not`
tests, inside Python `for` loops and converted `while`s, `while`s inside branches, Python
numbers and temporaries assigned in branches, a few that fall back to per-path tracing),
written to a file so that their source can be converted: the traced result and gradient
must equal the eager ones (plain Python `if`s on concrete tensors), with one trace.
"""

import numpy as np
import pytest

import tapeflow as tf

from tracer.generated import load_programs

TESTS = ["tf.reduce_sum(s) > {c}", "tf.reduce_max(s) < {c}", "s[0] > {c} and s[1] < {c2}",
         "not (tf.reduce_min(s) > {c})", "s[1] > {c} or tf.reduce_mean(s) < {c2}"]


def _test(rng):
    return rng.choice(TESTS).format(c=f"{rng.uniform(-2, 2):.3f}", c2=f"{rng.uniform(-2, 2):.3f}")


def _branch(rng, depth):
    """Statements of one branch: always reassign `s`, sometimes `k` (a Python number before
    the ifs) and a temporary."""
    out = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["affine", "sin", "temp", "number", "nested", "while"]
                          if depth < 2 else ["affine", "sin", "temp", "number"])
        if kind == "affine":
            out.append(f"s = s * {rng.uniform(0.5, 1.5):.3f} + {rng.uniform(-1, 1):.3f}")
        elif kind == "sin":
            out.append("s = tf.sin(s) + s * 0.5")
        elif kind == "temp":
            out += ["t = s * s", "s = s + t * 0.125"]
        elif kind == "number":
            out.append(f"k = {rng.choice(['0.5', '1.0', '2.0', 'k + 1.0'])}")
        elif kind == "while":                     # a While node inside a branch
            out += ["while tf.reduce_max(tf.abs(s)) > 4.0:", "    s = s * 0.5"]
        else:
            out += _if(rng, depth + 1)
    return out


def _if(rng, depth):
    out = [f"if {_test(rng)}:"] + ["    " + x for x in _branch(rng, depth)]
    r = rng.random()
    if r < 0.3:
        out += [f"elif {_test(rng)}:"] + ["    " + x for x in _branch(rng, depth)]
    if r < 0.8:
        out += ["else:"] + ["    " + x for x in _branch(rng, depth)]
    return out


def _program(rng, k):
    lines = [f"def prog_{k}(x):", "    s = x", "    k = 1.0"]
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["if", "for", "while", "fallback"])
        if kind == "if":
            body = _if(rng, 0)
        elif kind == "for":                       # 2**n paths per-path, n Ifs converted
            body = [f"for i in range({rng.randint(2, 8)}):"] + ["    " + x for x in _if(rng, 1)]
        elif kind == "while":                     # an If inside a While's body
            body = ["j = tf.cast(tf.reduce_sum(x) * 0.0, tf.int32)", "while j < 3:",
                    "    j += 1"] + ["    " + x for x in _if(rng, 1)]
        else:                                     # defined on one side only: per-path
            body = [f"if {_test(rng)}:", "    u = s * 3.0", "try:", "    s = s + u",
                    "except NameError:", "    s = s - 1.0"]
        lines += ["    " + x for x in body]
    lines += ["    return s * k"]
    return "\n".join(lines) + "\n"


def _load(tmp_path, count, seed):
    return load_programs(tmp_path, "if_programs", _program, count, seed)


def _grad(fn, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(fn(x))
    return y, tape.gradient(y, x)


def _check(fn):
    f = tf.function(fn)
    for v in ([0.5, -1.0], [2.0, 1.5], [-2.0, 0.25], [0.1, 3.0]):
        x = tf.constant(np.array(v, np.float32))   # Python floats -> float32 tensors
        (y, g), (y0, g0) = _grad(f, x), _grad(fn, x)
        np.testing.assert_allclose(y.numpy(), y0.numpy(), rtol=2e-5, atol=2e-5)
        if g0 is None:    # s * k with s = x untouched on the taken path cannot be None
            raise AssertionError("eager gradient is None")
        np.testing.assert_allclose(g.numpy(), g0.numpy(), rtol=2e-5, atol=2e-5)
    assert f.experimental_get_tracing_count() == 1


def test_random_if_programs_match_eager(tmp_path):
    for fn in _load(tmp_path, 30, seed=0):
        _check(fn)


@pytest.mark.slow
def test_many_random_if_programs_match_eager(tmp_path):
    for fn in _load(tmp_path, 300, seed=1):
        _check(fn)
