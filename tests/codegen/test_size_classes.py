"""Size classes (codegen/sizeclass.py): every speed-only choice generation takes on a size read
from the inputs is recorded, with the sizes that would generate another program, and
``tapeflow dump --stage sizes`` says so. The sizes a report names are checked by generating
at them: just inside, the same source; just outside, another one. Choices that were
specialisations by accident (a shape compared element by element where either answer is
correct) no longer split programs. Generation only, except one compile."""
import pathlib

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cli
from tapeflow.codegen import compile_graph, emitter
from tapeflow.codegen import generate as gen_module
from tapeflow.codegen.generate import generate
from tapeflow.tracer.engine import optimize

from codegen.test_memory import _chain

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGETS = str(ROOT / "tests" / "cli_targets.py")


def _graph(fn, *specs):
    return optimize(tf.function(fn).get_concrete_function(
        *[tf.TensorSpec(s, dt) for s, dt in specs]).graph)


def _scaled_exp(x):
    return tf.exp(x) * 2.0


def _gen(fn, *shapes, dtype=tf.float32):
    return generate(_graph(fn, *[(s, dtype) for s in shapes]), fn.__name__.strip("_"))


def _loop_decision(gen):
    (d,) = [d for d in gen.size_classes if d.yes == "parallel"]
    return d


def test_a_loop_past_the_parallel_threshold_is_a_recorded_size_class():
    big = _gen(_scaled_exp, (40_000, 128))
    d = _loop_decision(big)
    assert d.held and d.specialised and d.choice == "parallel"
    work, outer = d.conditions
    assert (work.name, work.op, work.threshold) == ("PARALLEL_WORK", ">=", emitter.PARALLEL_WORK)
    assert work.traced >= emitter.PARALLEL_WORK and "va.shape[0]" in work.code
    lo, hi = d.ranges()["va.shape[0]"]
    assert hi is None and 0 < lo <= 40_000
    text = big.size_classes.text()
    # the loop and its output's huge pages: every array as big as a parallel loop asks
    assert "size class: 2 speed choices specialised to these sizes" in text
    assert f"parallel (work (a.shape[0] * a.shape[1]) * " in text
    assert ">= PARALLEL_WORK 25.0M" in text
    assert f"serial, another program, for a.shape[0] under {lo}" in text
    # the size named is exact: just above it the same program, just below another
    assert _gen(_scaled_exp, (lo, 128)).source == big.source
    assert _gen(_scaled_exp, (lo - 1, 128)).source != big.source
    assert "prange(" in big.source


def test_a_loop_below_the_threshold_specialises_nothing_and_names_where_that_ends():
    small = _gen(_scaled_exp, (100, 128))
    assert not small.size_classes.specialised
    d = _loop_decision(small)
    assert not d.held and d.choice == "serial"
    hi = d.ranges()["va.shape[0]"][1]
    text = small.size_classes.text()
    assert "shape-generic below its thresholds: no speed choice specialised" in text
    assert f"parallel, another program, for a.shape[0] of {hi} or more" in text
    # the program's own range ends earlier, where its output asks for huge pages
    served = small.size_classes.ranges()["va.shape[0]"][1]
    assert served < hi and f"this program serves a.shape[0] under {served};" in text
    assert _gen(_scaled_exp, (served - 1, 128)).source == small.source
    assert _gen(_scaled_exp, (served, 128)).source != small.source
    assert _gen(_scaled_exp, (0, 128)).source == small.source
    assert "prange(" not in _gen(_scaled_exp, (hi - 1, 128)).source
    assert "prange(" in _gen(_scaled_exp, (hi, 128)).source


def test_a_program_without_size_choices_is_shape_generic():
    gen = _gen(lambda x, w: tf.matmul(x, w), (4, 3), (3, 2))
    assert len(gen.size_classes) == 0
    assert gen.size_classes.text().splitlines() == [
        "   shape-generic: one program for all sizes of this rank and dtype (no speed choice "
        "depends on a size)",
        "   entry check (shapes it runs on): a.shape[1] == b.shape[0]"]


def test_huge_pages_and_cuts_are_size_classes_too(monkeypatch):
    big = _gen(lambda x: [tf.nn.relu(x), tf.exp(x)], (1024, 1024))
    pages = [d for d in big.size_classes if d.yes == "asks for huge pages"]
    assert pages and all(d.held for d in pages) and "rt.hugepages(" in big.source
    assert pages[0].conditions[0].name == "HUGEPAGE_BYTES/16"
    monkeypatch.setattr(gen_module, "MAX_LINES", 12)
    chain = generate(_chain((300, 300))[0], "big")
    cuts = [d for d in chain.size_classes if d.what.startswith("where the program is cut")]
    assert cuts and any(d.held for d in cuts) and len(chain.parts) == 1
    assert "no cut there (bytes crossing" in chain.size_classes.text()


def test_the_compiled_program_carries_its_size_classes(tmp_path):
    graph = _graph(_scaled_exp, ((5, 3), tf.float32))
    prog = compile_graph(graph, "scaled_exp_sc", str(tmp_path))
    assert prog.size_classes is not None and not prog.size_classes.specialised
    assert prog.size_classes.text() == generate(graph, "scaled_exp_sc").size_classes.text()
    x = np.arange(15, dtype=np.float32).reshape(5, 3) / 10
    np.testing.assert_allclose(prog(x)[0], np.exp(x) * 2, rtol=1e-6)


def _dump_sizes(capsys, spec):
    tf.set_backend("numba")
    assert cli.main(["dump", f"{TARGETS}:scaled_exp", "--spec", spec, "--stage", "sizes"]) == 0
    out = capsys.readouterr().out
    return out.split("== size classes: scaled_exp (a plain call)\n")[1].split("\n== ")[0]


def test_the_dump_says_which_sizes_make_another_program(capsys):
    above = _dump_sizes(capsys, "f32[40000,128]")
    assert above.startswith("   size class: 2 speed choices specialised to these sizes\n")
    assert "fused loop over [?, ?]: Exp Mul: parallel (work" in above
    assert "serial, another program, for a.shape[0] under " in above
    below = _dump_sizes(capsys, "f32[100,128]")
    assert below.startswith("   shape-generic below its thresholds: no speed choice specialised")
    assert "specialised:" not in below
    assert "parallel, another program, for a.shape[0] of " in below
    unknown = _dump_sizes(capsys, "f32[?,128]")
    assert unknown.startswith("   (unknown dims generated at 1")


# -- choices that split programs by accident ----------------------------------------------

def test_a_product_of_one_column_shares_the_program():
    # the loop's view of a [n, 1] product was compared with its shape element by element:
    # (n * 1) != n pinned every other program to more than one column
    def loss(x, w):
        return tf.reduce_mean(tf.nn.relu(x @ w) ** 2)
    two, one = _gen(loss, (4, 3), (3, 2)), _gen(loss, (4, 3), (3, 1))
    assert two.source == one.source
    assert "!=" not in two.source.split("raise ValueError")[0].split("def loss")[1]


def test_a_flattening_reshape_shares_the_program_at_size_zero():
    def flat(x):
        return tf.reshape(x, [-1]) * 2.0
    assert _gen(flat, (5, 3)).source == _gen(flat, (0, 3)).source


@pytest.mark.parametrize("fn", [lambda a, b: tf.matmul(a, b),
                                lambda a, b: tf.einsum("bij,bjk->bik", a, b)],
                         ids=["matmul", "einsum"])
def test_a_batch_of_one_shares_the_batched_product(fn):
    one, four = _gen(fn, (1, 2, 3), (1, 3, 4)), _gen(fn, (4, 2, 3), (4, 3, 4))
    assert one.source == four.source


def test_the_shared_batched_products_compute_each_batch(tmp_path):
    rng = np.random.default_rng(3)
    for k, (fn, ref) in enumerate([(lambda a, b: tf.matmul(a, b), np.matmul),
                                   (lambda a, b: tf.einsum("bij,bjk->bik", a, b), np.matmul)]):
        progs = {}
        for n in (1, 4):
            graph = _graph(fn, ((n, 2, 3), tf.float32), ((n, 3, 4), tf.float32))
            progs[n] = prog = compile_graph(graph, f"batched{k}", str(tmp_path))
            a = rng.standard_normal((n, 2, 3)).astype(np.float32)
            b = rng.standard_normal((n, 3, 4)).astype(np.float32)
            np.testing.assert_allclose(prog(a, b)[0], ref(a, b), rtol=1e-5, atol=1e-6)
        assert progs[1].kernels == progs[4].kernels         # one compile for both
