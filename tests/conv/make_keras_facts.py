"""Writes keras_facts.py: Keras 3's facts (through TensorFlow 2.21) for keras_table.py.

Run with TensorFlow's interpreter (never by the tests): /work/tfvenv/bin/python
tests/conv/make_keras_facts.py."""
import os
import sys

import keras

sys.path.insert(0, os.path.dirname(__file__))
import keras_table  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "keras_facts.py"), "w") as f:
    f.write(f'"""Keras {keras.__version__}\'s facts for tests/conv/keras_table.py (written by '
            f'make_keras_facts.py)."""\nFACTS = {{\n')
    for i, entry in enumerate(keras_table.LAYERS):
        v = [float(f"{a:.9g}") for a in keras_table.facts(keras.layers, entry)]
        f.write(f"    {keras_table.name(i, entry)!r}: {v!r},\n")
    f.write("}\n")
