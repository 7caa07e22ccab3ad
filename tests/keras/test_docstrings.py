"""The examples in the docstrings of the Keras modules outside ``tapeflow.keras.layers``
(whose examples tests/test_doctests.py runs) run and print what they say."""
import doctest
import importlib
import io

import numpy as np
import pytest

import tapeflow as tf


@pytest.mark.parametrize("name", ["tapeflow.keras.core_layers", "tapeflow.keras.normalization"])
def test_docstring_examples_run(name, numpy_backend):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    tests = finder.find(module, globs=dict(vars(module)), extraglobs={"tf": tf, "np": np})
    assert sum(len(t.examples) for t in tests) >= 5
    for test in tests:
        runner.run(test, out=out.write)
    assert runner.summarize(verbose=False).failed == 0, out.getvalue()
