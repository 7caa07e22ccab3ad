"""Writes conv2_facts.py: TensorFlow 2.21's facts for conv2_functions.py.

Run with TensorFlow's interpreter (never by the tests): /work/tfvenv/bin/python
tests/conv/make_conv2_facts.py."""
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
import conv2_functions as F  # noqa: E402


def _fmt(v):
    return None if v is None else float(f"{v:.15g}")


out = {k: [_fmt(v) for v in F.facts(tf, fn, x)]
       for k, (fn, x) in {**F.FUNCS, **F.MORPH_FUNCS, **F.FRACTIONAL_FUNCS}.items()}
out.update({k: [_fmt(v) for v in F.facts(tf, v1, x)] for k, (_, v1, x) in F.V2_FUNCS.items()})
with open(os.path.join(os.path.dirname(__file__), "conv2_facts.py"), "w") as f:
    f.write(f'"""TensorFlow {tf.__version__}\'s facts for tests/conv/conv2_functions.py (written by '
            f'make_conv2_facts.py, float64 on the CPU)."""\nnan = float("nan")\nFACTS = {{\n')
    for k, v in out.items():
        f.write(f"    {k!r}: {v!r},\n")
    f.write("}\n")
