"""`tapeflow dump` golden tests: the printed IR is stable text, compared line for line."""
import pathlib
import subprocess
import sys

import pytest

import tapeflow as tf
from tapeflow import cli
from tools import need

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLE = str(ROOT / "examples" / "mlp_step.py") + ":loss"
SPECS = ["--spec", "f32[4,3]", "--spec", "f32[3,2]"]


def dump(capsys, *args):
    assert cli.main(["dump", EXAMPLE, *SPECS, *args]) == 0
    return capsys.readouterr().out


def test_dump_with_passes_matches_golden(capsys):
    assert dump(capsys, "--passes") == (GOLDEN / "mlp_step_passes.txt").read_text()


def test_dump_dot_matches_golden(capsys):
    assert dump(capsys, "--format", "dot") == (GOLDEN / "mlp_step.dot").read_text()


def test_dump_source_shows_generated_code_with_node_comments(capsys):
    tf.set_backend("numba")
    out = dump(capsys, "--source")
    assert "== generated source" in out
    assert "MatMul" in out.split("== generated source")[1]


def test_spec_parsing_and_errors():
    s = cli.parse_spec("f32[3,?]")
    assert s.shape == (3, None) and s.dtype == tf.float32
    assert cli.parse_spec("i64[]").shape == ()
    with pytest.raises(Exception, match="bad --spec"):
        cli.parse_spec("float[3]")


def test_lower_gives_every_stage_from_python():
    low = tf.function(lambda x: tf.reduce_sum(tf.sin(x) * x)).lower(tf.constant([1.0, 2.0]))
    assert "Sin" in low.traced and "Mul" in low.traced
    fwd, bwd, residuals, total = low.tape_programs()
    assert "Cos" in bwd and total == 8 + 8  # x (read by Sin's and Mul's rules) and sin(x)
    assert [name for name, _ in low.passes()][0] == "input"


def test_console_script_runs_as_a_module():
    r = subprocess.run([sys.executable, "-m", "tapeflow.cli", "dump", EXAMPLE, *SPECS],
                       capture_output=True, text=True, cwd=ROOT,
                       env={"TAPEFLOW_BACKEND": "numpy", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert "== traced: loss" in r.stdout and "== residuals:" in r.stdout


# -- a CLI that behaves like a Unix tool ------------------------------------------------------

BAD = ROOT / "tests" / "cli_targets.py"


def fails(capsys, *argv):
    """(exit status, stderr) of a command that should fail with one line."""
    status = cli.main(list(argv))
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("tapeflow: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("argv, says", [
    (["dump", EXAMPLE], "needs one --spec per argument"),
    (["dump", EXAMPLE, "--spec", "f32[-1,3]"], "sizes are >= 0"),
    (["dump", EXAMPLE, "--spec", "float[3]"], "bad --spec"),
    (["dump", "no_such_module_xyz:f", "--spec", "f32[]"], "no module named 'no_such_module_xyz'"),
    (["dump", "/no/such/file.py:f", "--spec", "f32[]"], "no such file"),
    (["dump", f"{BAD}:NOT_CALLABLE", "--spec", "f32[]"], "not a function but a int"),
    (["dump", f"{BAD}:missing", "--spec", "f32[]"], "has no attribute 'missing'"),
    (["dump", f"{BAD}:raises", "--spec", "f32[]"], "ValueError: raised while tracing (at "),
    (["dump", f"{BAD}:bad_shapes", "--spec", "f32[3]"], "MatMul: In[0] is not a matrix"),
    (["dump", EXAMPLE, *SPECS, "--bogus"], "unrecognized arguments: --bogus"),
    (["inspect", str(ROOT / "tests")], "manifest is missing"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_user_mistakes_give_one_line_and_status_2(capsys, argv, says):
    assert says in fails(capsys, *argv)


def test_the_error_names_the_users_line(capsys):
    err = fails(capsys, "dump", f"{BAD}:raises", "--spec", "f32[]")
    assert f"{BAD}:6" in err


def test_debug_shows_the_traceback():
    with pytest.raises(cli.UsageError, match="raised while tracing"):
        cli.main(["--debug", "dump", f"{BAD}:raises", "--spec", "f32[]"])


def test_no_command_prints_help_and_every_dtype_parses(capsys):
    assert cli.main([]) == 2
    assert "examples:" in capsys.readouterr().out
    for short, name in cli._DTYPES.items():
        assert cli.parse_spec(f"{short}[2]").dtype == getattr(tf, name)


def test_int16_spec_traces(capsys):
    out = dump_one(capsys, f"{BAD}:double", "i16[3]")
    assert "a:i16[3]" in out and "no gradient program" in out and "== backward" not in out


def dump_one(capsys, target, spec):
    assert cli.main(["dump", target, "--spec", spec]) == 0
    return capsys.readouterr().out


def _run(*argv, **kw):
    return subprocess.run([sys.executable, "-m", "tapeflow", *argv], capture_output=True, text=True,
                          cwd=ROOT, env={"TAPEFLOW_BACKEND": "numpy", "PATH": "/usr/bin:/bin"}, **kw)


def test_python_dash_m_version_and_help_examples_run(tmp_path):
    r = _run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"tapeflow {tf.__version__}"
    examples = [line.strip().split()[1:] for line in cli.__doc__.splitlines()
                if line.strip().startswith("tapeflow dump examples/")]
    assert len(examples) == 3
    need("dot")   # the html example lays its graphs out with Graphviz
    for argv in examples:
        argv = [a.strip("'") for a in argv]
        written = None
        if "-o" in argv:   # write into tmp_path, not the checkout
            k = argv.index("-o") + 1
            written = argv[k] = str(tmp_path / argv[k])
        r = _run(*argv)
        assert r.returncode == 0, r.stderr
        assert r.stderr == "" and (r.stdout or pathlib.Path(written).read_text())


def test_quiet_on_a_closed_pipe():
    proc = subprocess.Popen([sys.executable, "-m", "tapeflow", "dump", f"{BAD}:many_ops", "--spec", "f32[]"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={"TAPEFLOW_BACKEND": "numpy", "PATH": "/usr/bin:/bin"})
    assert proc.stdout.read(9) == b"== traced"
    proc.stdout.close()
    assert proc.stderr.read() == b""
    assert proc.wait() == 141


def test_stages_show_what_runs_under_a_tape(capsys):
    """The backward printed is the one that runs: after cse, h*a + a*h is one product added
    to itself (the traced backward had two Muls)."""
    out = dump(capsys, "--stage", "backward")
    assert out.startswith("== backward") and "== traced" not in out
    assert "Add i i" in out and out.count(" = Mul ") == 1
    assert "== joint" in dump(capsys, "--stage", "joint")


def test_passes_show_only_changes_and_diffs(capsys):
    out = dump_one_stage(capsys, f"{BAD}:shared_product", "passes", "--diff")
    assert "== after cse" in out and "-    d:f32[3] = Mul b a" in out and "+    d:f32[3] = Add c c" in out
    assert "== after dce" not in out   # unchanged passes are not shown


def test_min_cut_and_source_stages(capsys):
    out = dump_one_stage(capsys, f"{BAD}:shared_product", "min-cut")
    assert "== min-cut residuals: 2, 24 bytes" in out and "recomputed in the backward" in out
    tf.set_backend("numba")
    out = dump_one_stage(capsys, f"{BAD}:shared_product", "source")
    assert [h for h in out.splitlines() if h.startswith("== generated source")] == [
        "== generated source: shared_product (a plain call)", "== generated source: forward",
        "== generated source: backward"]


def test_the_dump_says_how_each_loop_gradient_keeps_its_values(capsys, monkeypatch):
    """By default, after the backward: each loop gradient of the programs that run. A plain
    call of ``loop_gradient`` runs the loop and its gradient as one WhileWithGrad; per
    iteration it keeps h before and after (f32[3], one history: 12 bytes), its state is the
    counter and h (4 + 12 bytes). Past the budget (``TAPEFLOW_LOOP_MEMORY_MB``) it checkpoints."""
    assert cli.main(["dump", f"{BAD}:loop_gradient", "--spec", "f32[3]", "--spec", "f32[3]"]) == 0
    out = capsys.readouterr().out
    loops = out[out.index("== loop gradients of a plain call: 1\n"):]
    head = loops.splitlines()[1]
    assert head.startswith("   WhileWithGrad -> i32[], f32[3], i32[], f32[3], f32[3] (")
    assert head.endswith("cli_targets.py:36): the While and its gradient in one loop (the "
                         "forward runs once)")
    assert loops.splitlines()[2:4] == [
        "      per iteration: 12 bytes stacked, 16 bytes of loop state",
        "      mode: stacks allocated at the start for the trip count (a counted loop: "
        "i < bound, i += 1), up to 89478485 rows (budget 1073741824 bytes); past that, the "
        "rows are dropped and the gradient checkpoints every ceil(sqrt(n * 16 / 12)) "
        "iterations (the forward runs again; O(sqrt n) memory)"]
    assert "== loop gradients of the backward under a tape: 2" in loops
    monkeypatch.setenv("TAPEFLOW_LOOP_MEMORY_MB", "0.00001")         # 10 bytes: not one row
    out = dump_one_stage(capsys, f"{BAD}:loop_gradient", "loops")
    assert out.splitlines()[3] == (
        "      mode: checkpoints (budget 10 bytes): after the first iteration the rows are "
        "dropped and the gradient checkpoints every ceil(sqrt(n * 16 / 12)) iterations (the "
        "forward runs again; O(sqrt n) memory)")
    assert "mode: checkpoints every ceil(sqrt(n * 16 / 12)) iterations (budget 10 bytes)" in out
    assert "== loop gradients" not in dump_one_stage(capsys, f"{BAD}:shared_product", "loops")


def dump_one_stage(capsys, target, stage, *extra):
    assert cli.main(["dump", target, "--spec", "f32[3]", "--spec", "f32[3]", "--stage", stage,
                     *extra]) == 0
    return capsys.readouterr().out


# -- pictures: --format dot / svg / html, --lines ------------------------------------------------

def test_lines_annotate_the_text_dump_with_the_users_lines(capsys):
    out = dump(capsys, "--stage", "traced", "--stage", "program", "--lines")
    assert out.count("mlp_step.py:10") == 4 and out.count("mlp_step.py:11") == 4
    assert "c:f32[4,2] = MatMul[transpose_a=False transpose_b=False] a b  # " in out


def test_dot_honours_stage_and_marks_residuals_and_fused_loops(capsys):
    out = dump(capsys, "--format", "dot", "--stage", "forward")
    assert out.startswith('digraph "forward and backward (what runs under a tape)" {')
    assert "subgraph cluster_f_ {" in out and "subgraph cluster_b_ {" in out
    assert "subgraph cluster_f_g0 {" in out   # the forward's fused loop: Relu Mul Mean
    residuals = [ln for ln in out.splitlines() if 'label="residual ' in ln and "->" in ln]
    assert len(residuals) == 3 and all("dashed" in ln and "constraint=false" in ln for ln in residuals)
    assert 'f_in0 [label="x\\na: f32[4,3]"' in out and 'label="grad w"' in out
    both = dump(capsys, "--format", "dot", "--stage", "traced", "--stage", "program")
    assert both.count("digraph") == 1 and "cluster_stage0" in both and "cluster_stage1" in both


def test_pictures_refuse_what_they_cannot_show(capsys):
    assert "is text, not a graph" in fails(capsys, "dump", EXAMPLE, *SPECS, "--format", "dot",
                                            "--stage", "source")
    assert "--passes is for --format text" in fails(capsys, "dump", EXAMPLE, *SPECS, "--format",
                                                    "html", "--passes")
    assert "cannot write" in fails(capsys, "dump", EXAMPLE, *SPECS, "-o", "/no/such/dir/x.txt")


def test_svg_and_html_are_written_to_a_file(capsys, tmp_path):
    need("dot")
    assert cli.main(["dump", EXAMPLE, *SPECS, "--format", "svg", "-o", str(tmp_path / "g.svg")]) == 0
    svg = (tmp_path / "g.svg").read_text()
    assert "<svg" in svg and 'id="t_n0"' in svg and capsys.readouterr().out == ""
    assert cli.main(["dump", EXAMPLE, *SPECS, "--format", "html", "-o", str(tmp_path / "g.html")]) == 0
    page = (tmp_path / "g.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 5


def test_unknown_dims_trace_as_none_and_print_as_question_marks(capsys):
    """'?' is None in the body (as TensorFlow's TensorSpec([None, 3])), never 1."""
    assert cli.main(["dump", EXAMPLE, "--spec", "f32[?,3]", "--spec", "f32[3,2]"]) == 0
    out = capsys.readouterr().out
    traced = out.split("== traced: loss\n")[1].split("==")[0]
    assert traced.splitlines()[0] == "{ lambda a:f32[?,3] b:f32[3,2] ; let"
    assert "c:f32[?,2] = MatMul" in traced
    # the gradient reads the batch size at run time, and says which residuals have one
    assert "DynamicBroadcastTo" in out and "f32[?,3]  4 bytes each, ? elements" in out
    assert "+ 2 of run-time size" in out
