"""The compiled-vs-eager fuzz (tests/compiler/test_compiled_vs_eager.py) with every input traced
with None dims: one trace per function, called at random sizes (0 and 1 included), must give
eager's values and gradients to second order, or raise InvalidArgumentError where eager does.
On the NumPy interpreter (this directory's backend)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tapeflow as tf

from compiler.test_compiled_vs_eager import assert_matches, make_body, programs, run


@st.composite
def programs_and_sizes(draw):
    """A drawn program and sizes to call it with: each a new size per dim of the inputs'
    shared base shape (every input is a suffix of it, so they still line up)."""
    shapes, steps, seed = draw(programs())
    rank = max((len(s) for s in shapes), default=0)
    sizes = draw(st.lists(st.lists(st.integers(0, 3), min_size=rank, max_size=rank),
                          min_size=1, max_size=3))
    return shapes, steps, seed, sizes


def _inputs(rng, shapes, dtype):
    return [tf.constant((rng.uniform(0.2, 1.5, s) * rng.choice([-1, 1], s)).astype(dtype))
            for s in shapes]


def _positional(body, n):
    """``body(*xs)`` as a function of ``n`` named parameters, one per spec of a signature."""
    names = ", ".join(f"x{i}" for i in range(n))
    return eval(f"lambda {names}: body({names})", {"body": body})  # noqa: S307 (fixed text)


def check(program, dtype=np.float64):
    shapes, steps, seed, sizes = program
    rng = np.random.default_rng(seed)
    body = _positional(make_body(steps, len(shapes)), len(shapes))
    rank = max((len(s) for s in shapes), default=0)
    sig = [tf.TensorSpec([None] * len(s), dtype) for s in shapes]
    through = tf.function(body, input_signature=sig)
    inside = tf.function(_positional(lambda *a: run(body, list(a), "eager"), len(shapes)),
                         input_signature=sig)
    calls = [shapes] + [[tuple(base[rank - len(s):]) for s in shapes] for base in sizes]
    ran = 0
    for call in calls:
        xs = _inputs(rng, call, dtype)
        try:
            eager = run(body, xs, "eager")
        except tf.errors.InvalidArgumentError:
            # these sizes do not broadcast: the function raises the same error type at run
            # time, unless the failing op reaches no output (a function's graph is pruned, as
            # TensorFlow prunes it), never another error
            try:
                through(*xs)
            except tf.errors.InvalidArgumentError:
                pass
            continue
        ran += 1
        assert_matches(eager, run(through, xs, "eager"), True, 1e-9)   # eager tapes around it
        assert_matches(eager, inside(*xs), False, 1e-9)
    assume(ran > 0)
    assert through.experimental_get_tracing_count() == 1


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@settings(max_examples=30, **SETTINGS)
@given(programs_and_sizes())
def test_one_trace_with_none_dims_matches_eager_at_every_size(program):
    check(program)


@pytest.mark.slow
@settings(max_examples=1000, **SETTINGS)
@given(programs_and_sizes())
def test_many_programs_traced_with_none_dims_match_eager(program):
    check(program)
