"""Writes tf_facts.py: TensorFlow 2.21's facts for every case of conv_table.py.

Run with TensorFlow's interpreter (never by the tests): /work/tfvenv/bin/python
tests/conv/make_tf_facts.py. An error TensorFlow raises is recorded as its type name.
"""
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
import conv_functions  # noqa: E402
import conv_table  # noqa: E402

out = {}
for case in conv_table.CASES:
    try:
        out[conv_table.name(case)] = [float(f"{v:.12g}") for v in conv_table.facts(tf, case)]
    except Exception:  # noqa: BLE001 - TF has no gradient kernel: the forward facts only
        out[conv_table.name(case)] = [float(f"{v:.12g}")
                                      for v in conv_table.forward_facts(tf, case)]
functions = {k: [float(f"{v:.12g}") for v in conv_functions.facts(tf, fn)]
             for k, fn in conv_functions.FUNCS.items()}
with open(os.path.join(os.path.dirname(__file__), "tf_facts.py"), "w") as f:
    f.write('"""TensorFlow 2.21\'s facts for tests/conv/conv_table.py (written by make_tf_facts.py;\n'
            'CPU, oneDNN on as installed): output shape, weighted output, gradients."""\n')
    f.write(f"# {tf.__version__}\nFACTS = {{\n")
    for k, v in out.items():
        f.write(f"    {k!r}: {v!r},\n")
    f.write("}\nFUNCTIONS = {\n")
    for k, v in functions.items():
        f.write(f"    {k!r}: {v!r},\n")
    f.write("}\n")
print(len(out), sum(isinstance(v, str) for v in out.values()))
