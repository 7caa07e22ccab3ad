"""Writes ``tf_answers.json.gz``: TensorFlow 2.21's results for the random programs numbered
0..N-1 of ``random_programs.program_for_seed``, which ``test_tf_answers.py`` compares
tapeflow with. A tool, not a test: it needs TensorFlow, which the tests never import.

    /tmp/tfvenv/bin/python tests/compiler/tf_answers_gen.py --count 400

Each program runs as written with ``import tensorflow as tf`` (CPU), every variant (eager,
through, inside, and mixed at second order), on one input. A record holds, per variant,
either the exception's class name or the outputs (y, the gradients w.r.t. x, v, the
layer's kernel and bias, and at second order the gradient of the sum of d y / d x) and the
variables after the run, each ``None`` or a nested list of numbers rounded to
``DIGITS`` significant digits. To keep the file small, a variant whose numbers equal
eager's (to those digits) stores only where its ``None``s are.
"""
import argparse
import gzip
import json
import os
import pathlib
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import random_programs as rp  # noqa: E402

OUT = HERE / "tf_answers.json.gz"
DIGITS = {"float32": 7, "float64": 12}


def _round(a, digits):
    if a is None:
        return None
    a = np.asarray(a, dtype=np.float64)
    return np.vectorize(lambda t: float(f"{t:.{digits}g}"), otypes=[float])(a).tolist() \
        if a.ndim else float(f"{float(a):.{digits}g}")


def answer(seed, directory):
    """TensorFlow's record for the program numbered ``seed``."""
    lines, exact, flags = rp.program_for_seed(seed)
    dtype = rp.seed_dtype(seed)
    mod = rp.load(lines, flags, dtype, directory, library="tensorflow")
    x = rp.inputs(flags["seed"], dtype, 1)[0]
    record = {"seed": seed, "dtype": dtype, "variants": {}}
    eager = None
    for variant in rp.variants(flags):
        try:
            out, state = rp.run(mod, variant, x, flags["k"], dtype)
        except Exception as e:  # noqa: BLE001 (TensorFlow's error type is the answer)
            record["variants"][variant] = {"error": type(e).__name__}
            continue
        got = {"out": [_round(o, DIGITS[dtype]) for o in out],
               "state": [_round(s, DIGITS[dtype]) for s in state]}
        if variant == "eager":
            eager = got
        elif eager is not None and _same_numbers(eager, got):
            got = {"nones": [i for i, o in enumerate(got["out"]) if o is None]}
        record["variants"][variant] = got
    return record


def _same_numbers(eager, got):
    if eager["state"] != got["state"] or len(eager["out"]) != len(got["out"]):
        return False
    for a, b in zip(eager["out"], got["out"]):
        if a is None and b is not None and np.any(b):
            return False        # zeros for eager's None are kept as a None pattern
        if a is not None and a != b:
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    import tensorflow as tf
    tf.config.set_visible_devices([], "GPU")
    records = []
    with tempfile.TemporaryDirectory() as d:
        for seed in range(args.start, args.start + args.count):
            records.append(answer(seed, pathlib.Path(d)))
            if seed % 20 == 0:
                print(seed, file=sys.stderr, flush=True)
    header = {"tensorflow": tf.__version__, "count": len(records), "digits": DIGITS}
    with gzip.open(args.out, "wt") as f:
        f.write(json.dumps(header) + "\n")
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
