"""Run TensorFlow's guide notebooks cell by cell under TensorFlow and under tapeflow.

A developer tool, not run by the test suite: it needs TensorFlow in a side venv and a
checkout of tensorflow/docs, and it takes minutes. It answers one question for issue 17:
which cells of TensorFlow's own guides give TensorFlow's output when `tensorflow` is
replaced by `tapeflow`, changing nothing else.

For each guide, the code cells are extracted (shell `!` and `%` magic lines dropped,
cells importing other frameworks skipped, matplotlib replaced by a stub that draws nothing,
`tf.data` cells not run: TensorFlow's can hang
here) and run in order in one interpreter per guide,
once with TensorFlow and once with tapeflow (`import tensorflow as tf` rewritten to
`import tapeflow as tf`, Keras imports pointed at `tapeflow.keras`). Each cell's
stdout/stderr (file-descriptor level, so `tf.print` is caught), the value of its last
expression (as a notebook shows it) and its exception type are recorded with a per-cell
timeout. Outputs are compared after normalising object addresses, timings and float noise
(6 significant digits); warnings are not compared. TensorFlow runs twice; a cell whose two TensorFlow runs differ is
counted as random, not as a difference.

    python tools/guide_cells.py --docs /path/to/tensorflow/docs.git [--guide function] \
        [--out /tmp/guides] [--tf-python /tmp/tfvenv/bin/python]

Writes a table to stdout and `<out>/report.md`, and every cell's outputs to
`<out>/<guide>.json`.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import time

GUIDES = [
    "function", "basic_training_loops", "intro_to_modules", "variable", "intro_to_graphs",
    "basics", "tensor", "autodiff", "advanced_autodiff", "core/optimizers_core",
]

OTHER_FRAMEWORKS = re.compile(
    r"^\s*(import|from)\s+(tensorflow_datasets|tensorflow_hub|tf_keras|pandas|"
    r"seaborn|IPython|google\.colab|PIL|sklearn|torch|jax)\b", re.M)

# Out of scope for issue 17, recognised by the cell's source.
OUT_OF_SCOPE = {
    "strings": re.compile(
        r"tf\.string\b|tf\.strings\.|\.decode\(|tf\.(constant|Variable|convert_to_tensor)"
        r"\(\s*\[*\s*b?[\"']|unicode"),
    "ragged": re.compile(r"ragged|Ragged"),
    "sparse": re.compile(r"tf\.sparse|SparseTensor"),
    "images": re.compile(r"tf\.image|imshow"),
    "tf.data": re.compile(r"tf\.data\b|Dataset"),
    "devices": re.compile(r"tf\.device|list_physical_devices|list_logical_devices|GPU|\.device\b|"
                          r"tf\.distribute"),
}

REWRITES = [
    (re.compile(r"^(\s*)import tensorflow as tf\b", re.M), r"\1import tapeflow as tf"),
    (re.compile(r"^(\s*)import tensorflow\.keras as keras\b", re.M),
     r"\1import tapeflow.keras as keras"),
    (re.compile(r"^(\s*)from tensorflow import keras\b", re.M), r"\1from tapeflow import keras"),
    (re.compile(r"^(\s*)from tensorflow\.keras import\b", re.M), r"\1from tapeflow.keras import"),
    (re.compile(r"^(\s*)import keras\b", re.M), r"\1from tapeflow import keras"),
    (re.compile(r"^(\s*)from keras import\b", re.M), r"\1from tapeflow.keras import"),
    (re.compile(r"^(\s*)from keras\.", re.M), r"\1from tapeflow.keras."),
    (re.compile(r"^(\s*)import tensorflow\b", re.M), r"\1import tapeflow as tensorflow"),
]


def extract_cells(notebook_text):
    """The guide's code cells as (source, skipped_reason) in order."""
    cells = []
    for cell in json.loads(notebook_text)["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith(("!", "%"))]
        src = "\n".join(lines).strip("\n")
        if not src.strip():
            continue
        if "#@title" in src and "Licensed under the Apache License" in src:
            continue
        skip = ("other framework" if OTHER_FRAMEWORKS.search(src) else
                "not run: tf.data" if OUT_OF_SCOPE["tf.data"].search(src) else None)
        cells.append({"source": src, "skip": skip})
    return cells


def scope_of(source):
    """The out-of-scope kind a cell's source shows, or None."""
    for kind, pattern in OUT_OF_SCOPE.items():
        if pattern.search(source):
            return kind
    return None


def to_tapeflow(source):
    for pattern, repl in REWRITES:
        source = pattern.sub(repl, source)
    return source


_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")
_FLOAT = re.compile(r"-?\d+\.\d+(?:e[+-]?\d+)?")
_TIME_LINE = re.compile(r"time|took|elapsed|seconds|\bms\b|\d\s*s/step|ETA", re.I)
_NOISE = re.compile(
    r"^(W|I|E)\d{4} |^WARNING: All log messages|^WARNING:absl|Warning:|warnings\.warn|"
    r"^\s*$|oneDNN|cuda|TF_ENABLE_ONEDNN_OPTS|rebuild TensorFlow|cpu_feature_guard|"
    r"computation placer|Unable to register|XLA service|StreamExecutor|"
    r"^\s*(return|self\.|super\(\))|absl::InitializeLog")


def _round(m):
    text = m.group(0)
    digits = len(re.sub(r"[^0-9]", "", text.split("e")[0]).lstrip("0"))
    return format(float(text), ".6g") if digits > 6 else text


_TRACEBACK = re.compile(r"^(Traceback|  |The above exception|During handling|\s*\^+\s*$)")
_EXC_LINE = re.compile(r"^([\w.]+(Error|Exception|Warning)):.*")
_CLASS_PATH = re.compile(r"\b(?:tensorflow|tapeflow|keras)(?:\.\w+)*\.(\w+)")


def normalise(text):
    """Output with addresses, timings and float noise removed; a printed traceback becomes its
    exception's class name, and module paths of classes are dropped."""
    out = []
    in_traceback = after = False
    # what a terminal shows: a carriage return (a progress bar) overwrites its line
    lines = [ln.rstrip("\r").rsplit("\r", 1)[-1] for ln in text.split("\n")]
    for line in lines:
        if line.startswith("Traceback"):
            in_traceback = True
        if after and line[:1] in (" ", "\t", ""):
            continue  # the message's own indented lines (TensorFlow's frames in a message)
        after = False
        if in_traceback:
            if _TRACEBACK.match(line):
                continue
            match = _EXC_LINE.match(line)
            if match:
                out.append(_CLASS_PATH.sub(r"\1", match.group(1)))
                in_traceback, after = False, True
            continue
        if _NOISE.search(line) or line.startswith("WARNING:tensorflow:"):
            # warnings are not output: TensorFlow logs them, tapeflow uses `warnings`, which
            # also prints the warning line's source on the next (indented) line
            after = bool(_WARNING.search(line))
            continue
        line = _CLASS_PATH.sub(r"\1", line)
        line = _ADDR.sub("0xADDR", line)
        if _TIME_LINE.search(line):
            line = re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "<N>", line)
        out.append(_FLOAT.sub(_round, line.rstrip()))
    return "\n".join(out)


# --- the child: runs in the interpreter under test --------------------------------------

def child(cells_path, out_path, timeout):
    import io  # noqa: F401  (kept with the child's imports: it runs in another interpreter)
    import signal
    import tempfile
    import traceback

    class CellTimeout(Exception):
        pass

    def on_alarm(signum, frame):
        raise CellTimeout(f"cell took more than {timeout}s")

    signal.signal(signal.SIGALRM, on_alarm)
    _stub_matplotlib()
    cells = json.load(open(cells_path))
    namespace = {"__name__": "__main__"}
    results = []
    saved = os.dup(1), os.dup(2)
    for cell in cells:
        if cell["skip"]:
            results.append(None)
            continue
        outs = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(outs[0].fileno(), 1), os.dup2(outs[1].fileno(), 2)
        error = message = None
        start = time.time()
        signal.alarm(timeout)
        try:
            # A real file per cell, so that source inspection (AutoGraph's) finds the code.
            filename = os.path.abspath(f"cell_{len(results)}.py")
            with open(filename, "w") as f:
                f.write(cell["source"])
            tree = ast.parse(cell["source"])
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            if last is not None and cell["source"].rstrip().endswith(";"):
                tree.body.append(last)  # a notebook shows no value after a final ";"
                last = None
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
                if value is not None:
                    print(repr(value))
        except BaseException as e:  # noqa: BLE001  (a cell may raise anything; record it)
            error, message = type(e).__name__, str(e).splitlines()[0][:300] if str(e) else ""
            if os.environ.get("GUIDE_CELLS_TRACEBACK"):
                traceback.print_exc()
        finally:
            signal.alarm(0)
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        texts = []
        for f in outs:
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
            f.close()
        results.append({"stdout": texts[0], "stderr": texts[1], "error": error,
                        "message": message, "seconds": round(time.time() - start, 2)})
        with open(out_path, "w") as f:
            json.dump(results, f)
    with open(out_path, "w") as f:
        json.dump(results, f)


class _Anything:
    """Whatever matplotlib gives: plots draw nothing here, so training cells that plot run."""

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter([0.0, 1.0])


def _stub_attribute(name):
    if name.startswith("__"):  # inspect.getmodule reads every module's __file__
        raise AttributeError(name)
    return _Anything()


def _stub_matplotlib():
    import types  # noqa: F401  (the child's import)
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.cm", "matplotlib.colors"):
        module = types.ModuleType(name)
        module.__getattr__ = _stub_attribute
        sys.modules[name] = module


# --- the parent ----------------------------------------------------------------------

def run_in(python, cells, env, workdir, timeout):
    cells_path = os.path.join(workdir, "cells.json")
    out_path = os.path.join(workdir, "out.json")
    with open(cells_path, "w") as f:
        json.dump(cells, f)
    if os.path.exists(out_path):
        os.remove(out_path)
    proc = subprocess.Popen([python, os.path.abspath(__file__), "--child", cells_path,
                             out_path, str(timeout)], env=env, cwd=workdir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # The child's alarm cannot stop a cell stuck in C code: kill it when no cell has finished
    # for a while (the cells after it count as InterpreterDied).
    last, seen = time.time(), None
    while proc.poll() is None:
        time.sleep(1)
        stamp = os.path.getmtime(out_path) if os.path.exists(out_path) else None
        if stamp != seen:
            last, seen = time.time(), stamp
        elif time.time() - last > timeout + 60:
            proc.kill()
            proc.wait()
    results = json.load(open(out_path)) if os.path.exists(out_path) else []
    # A crashed or killed interpreter leaves the rest of the cells without a result.
    while len(results) < len(cells):
        results.append(None if cells[len(results)]["skip"] else
                       {"stdout": "", "stderr": "", "error": "InterpreterDied", "message": "",
                        "seconds": 0})
    return results


def signature(r):
    return (normalise(r["stdout"]), normalise(r["stderr"]) if not r["error"] else "",
            r["error"])


_WARNING = re.compile(r"\w+Warning: ")
_MESSAGE = re.compile(r"Error\b|Exception|^Failed:|no attribute")


def wording_only(a, b):
    """True when two outputs differ only in the text of printed error messages (same lines
    elsewhere; each differing pair of lines is an error message on both sides)."""
    if a["error"] != b["error"]:
        return False
    x, y = normalise(a["stdout"]).splitlines(), normalise(b["stdout"]).splitlines()
    if normalise(a["stderr"]) != normalise(b["stderr"]) and not a["error"]:
        x += ["stderr"] + normalise(a["stderr"]).splitlines()
        y += ["stderr"] + normalise(b["stderr"]).splitlines()
    if len(x) != len(y):
        # TensorFlow's messages run over several lines; keep the first line of each.
        x = [ln for ln in x if not ln.startswith((" ", "\t", "Arguments received", "["))]
        y = [ln for ln in y if not ln.startswith((" ", "\t", "Arguments received", "["))]
    if len(x) != len(y):
        return False
    pairs = [(p, q) for p, q in zip(x, y) if p != q]
    return bool(pairs) and all(_MESSAGE.search(p) and _MESSAGE.search(q) and
                               p.split(":")[0] == q.split(":")[0] for p, q in pairs)


def _needs_out_of_scope(result, earlier):
    """A NameError for a name that only an earlier out-of-scope cell defines."""
    match = result and result["error"] == "NameError" and re.search(r"'(\w+)'", result["message"])
    return bool(match) and any(
        (c["skip"] or scope_of(c["source"])) and re.search(rf"\b{match.group(1)}\s*=", c["source"])
        for c in earlier)


def compare(guide, cells, tf1, tf2, tp):
    rows = []
    for i, cell in enumerate(cells):
        row = {"cell": i, "source": cell["source"]}
        if cell["skip"]:
            row["status"] = "skipped"
        elif scope_of(cell["source"]):
            row["status"] = "out of scope"
            row["scope"] = scope_of(cell["source"])
        elif tf1[i]["error"] == "NameError" and any(c["skip"] for c in cells[:i]):
            row["status"] = "out of scope"
            row["scope"] = "needs a cell not run"
        elif _needs_out_of_scope(tp[i], cells[:i]):
            row["status"] = "out of scope"
            row["scope"] = "needs an out-of-scope cell"
        elif signature(tf1[i]) != signature(tf2[i]):
            row["status"] = "random"
        elif signature(tf1[i]) == signature(tp[i]):
            row["status"] = "same"
        elif tp[i]["error"] and not tf1[i]["error"]:
            row["status"] = "tapeflow error"
        elif wording_only(tf1[i], tp[i]):
            row["status"] = "error wording"
        else:
            row["status"] = "different"
        row["tf"], row["tapeflow"] = tf1[i], tp[i]
        rows.append(row)
    return rows


def table(all_rows):
    head = ("| guide | cells | same | error wording only | different | tapeflow-only errors | "
            "random in TF | out of scope | skipped |\n|---|---|---|---|---|---|---|---|---|\n")
    lines, totals = [], [0] * 8
    for guide, rows in all_rows.items():
        counts = [len(rows)] + [sum(r["status"] == s for r in rows) for s in (
            "same", "error wording", "different", "tapeflow error", "random", "out of scope",
            "skipped")]
        totals = [a + b for a, b in zip(totals, counts)]
        lines.append(f"| {guide} | " + " | ".join(map(str, counts)) + " |")
    lines.append("| **total** | " + " | ".join(f"**{n}**" for n in totals) + " |")
    return head + "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=3)
    ap.add_argument("--docs", default="/work/.mirror/tensorflow+docs/repo")
    ap.add_argument("--guide", action="append")
    ap.add_argument("--out", default="/tmp/guides")
    ap.add_argument("--tf-python", default="/tmp/tfvenv/bin/python")
    ap.add_argument("--tapeflow", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--reuse-tf", action="store_true",
                    help="reuse TensorFlow's outputs from an earlier run in --out")
    ap.add_argument("--rescore", action="store_true",
                    help="only compare again the outputs an earlier run saved in --out")
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], int(args.child[2]))
    os.makedirs(args.out, exist_ok=True)
    all_rows = {}
    for guide in args.guide or GUIDES:
        text = subprocess.run(["git", f"--git-dir={args.docs}", "show",
                               f"HEAD:site/en/guide/{guide}.ipynb"], capture_output=True,
                              text=True, check=True).stdout
        cells = extract_cells(text)
        name = guide.replace("/", "_")
        workdir = os.path.join(args.out, name)
        os.makedirs(workdir, exist_ok=True)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONHASHSEED="0", MPLBACKEND="Agg",
                   CUDA_VISIBLE_DEVICES="")
        env.pop("PYTHONPATH", None)
        saved_tf = os.path.join(args.out, f"{name}.tf.json")
        if args.rescore:
            if not os.path.exists(os.path.join(args.out, f"{name}.json")):
                continue
            tf1, tf2 = json.load(open(saved_tf))
            tp = [r["tapeflow"] for r in json.load(open(os.path.join(args.out, f"{name}.json")))]
            tp_cells = [dict(c, source=to_tapeflow(c["source"])) for c in cells]
            all_rows[guide] = compare(guide, tp_cells, tf1, tf2, tp)
            for row, cell in zip(all_rows[guide], cells):
                row["tf_source"] = cell["source"]
            json.dump(all_rows[guide], open(os.path.join(args.out, f"{name}.json"), "w"),
                      indent=1)
            continue
        if args.reuse_tf and os.path.exists(saved_tf):
            tf1, tf2 = json.load(open(saved_tf))
        else:
            tf1 = run_in(args.tf_python, cells, env, workdir, args.timeout)
            tf2 = run_in(args.tf_python, cells, env, workdir, args.timeout)
            json.dump([tf1, tf2], open(saved_tf, "w"))
        tp_cells = [dict(c, source=to_tapeflow(c["source"])) for c in cells]
        tp = run_in(sys.executable, tp_cells, dict(env, PYTHONPATH=args.tapeflow), workdir,
                    args.timeout)
        all_rows[guide] = compare(guide, tp_cells, tf1, tf2, tp)
        for row, cell in zip(all_rows[guide], cells):
            row["tf_source"] = cell["source"]
        json.dump(all_rows[guide], open(os.path.join(args.out, f"{name}.json"), "w"), indent=1)
        print(f"{guide}: done", file=sys.stderr, flush=True)
    report = table(all_rows)
    open(os.path.join(args.out, "report.md"), "w").write(report)
    print(report)


if __name__ == "__main__":
    main()
