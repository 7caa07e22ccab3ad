"""Random programs with Python `while` loops (nested, `break`/`continue`/`else`, tensor `if`s,
temporaries), written to a file so that their source can be converted: the traced result
must equal the eager one (the plain Python loop) for several inputs, with one trace.
"""

import numpy as np
import pytest

import tapeflow as tf

from tracer.generated import load_programs


def _block(rng, depth, loop, counter):
    """Statements of a loop body (``loop`` names the enclosing loop's counter)."""
    out = [f"{counter} += 1"]                    # first: every loop terminates
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["affine", "reduce", "if", "temp", "jump", "acc", "nested", "python"]
                          if depth < 2 else ["affine", "reduce", "if", "temp", "jump", "acc"])
        if kind == "affine":
            out.append(f"s = s * {rng.uniform(0.5, 1.5):.3f} + {rng.uniform(-1, 1):.3f}")
        elif kind == "reduce":
            out.append("s = s - tf.reduce_mean(s) * 0.25")
        elif kind == "if":
            out += [f"if tf.reduce_sum(s) > {rng.uniform(-3, 3):.3f}:",
                    f"    s = s * {rng.uniform(0.5, 1.5):.3f}", "else:", "    s = s + 1.0"]
        elif kind == "temp":
            out += ["t = s * 2.0", "s = s + t * 0.125"]
        elif kind == "acc":                      # a Python float before the loop: a tensor
            out += ["acc: float = acc + tf.reduce_mean(s) * 0.125"]
        elif kind == "jump":
            out += [f"if tf.reduce_max(s) > {rng.uniform(0, 6):.3f}:",
                    f"    {rng.choice(['break', 'continue'])}"]
        elif kind == "python":                   # a Python loop, unrolled in the trace
            out += ["k = 0", "while k < 2:", "    k += 1", "    s = s * 0.875"]
        else:
            inner = f"j{depth}"
            out += [f"{inner} = {counter} * 0",
                    f"while {inner} < {rng.randint(1, 3)}:"]
            out += ["    " + line for line in _block(rng, depth + 1, inner, inner)]
            if rng.random() < 0.3:
                out += ["else:", "    s = s + 0.5"]
    return out


def _program(rng, k):
    test = rng.choice(["i < n", "i < n and tf.reduce_max(s) < 50.0",
                       "(m := tf.reduce_min(s)) > -50.0 and i < n"])
    lines = [f"def prog_{k}(x, n):", "    i = n * 0", "    s = x", "    acc = 0.0",
             f"    while {test}:"]
    lines += ["        " + line for line in _block(rng, 0, "i", "i")]
    if rng.random() < 0.3:
        lines += ["    else:", "        s = s - 100.0"]
    lines += ["    return s + acc, i"]
    return "\n".join(lines) + "\n"


def _load(tmp_path, count, seed):
    return load_programs(tmp_path, "while_programs", _program, count, seed)


def _check(fn):
    f = tf.function(fn)
    for x, n in [([0.5, -1.0], 0), ([0.5, -1.0], 3), ([2.0, 1.5], 5), ([-2.0, 0.25], 7)]:
        args = (tf.constant(np.array(x, np.float32)), tf.constant(n))
        got, want = f(*args), fn(*args)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-5, atol=1e-5)
        assert int(got[1]) == int(want[1])
    assert f.experimental_get_tracing_count() == 1
    assert "While" in [n.op for n in f.get_concrete_function(*args).graph.nodes]


def test_random_while_programs_match_eager(tmp_path):
    for fn in _load(tmp_path, 30, seed=0):
        _check(fn)


@pytest.mark.slow
def test_many_random_while_programs_match_eager(tmp_path):
    for fn in _load(tmp_path, 300, seed=1):
        _check(fn)
