"""The examples in the public API's docstrings run and print what they say (doctest), and
every public callable of the namespaces below has a docstring with an example, so a new one
without fails here.

Examples assume ``import tapeflow as tf`` and ``import numpy as np`` (given as globals, as
TensorFlow's docs assume ``tf``). They run on the NumPy interpreter (no Numba compile in a
doctest): ``numpy_backend``."""
import doctest
import importlib
import inspect
import io

import numpy as np
import pytest

import tapeflow as tf

# Modules whose docstrings doctest runs: every module defining something in NAMESPACES.
MODULES = [
    "tapeflow.ops.math", "tapeflow.ops.reduce", "tapeflow.ops.array", "tapeflow.ops.linalg",
    "tapeflow.ops.creation", "tapeflow.ops.clip", "tapeflow.ops.nn", "tapeflow.ops.io",
    "tapeflow.ops.tensor_array", "tapeflow.ops.py_function",
    "tapeflow.runtime.tensor", "tapeflow.runtime.module", "tapeflow.runtime.recorder",
    "tapeflow.runtime.stack", "tapeflow.ir.dtypes",
    "tapeflow.autodiff.tape", "tapeflow.autodiff.custom_gradient", "tapeflow.autodiff.forward",
    "tapeflow.tracer.function", "tapeflow.tracer.concrete_function", "tapeflow.tracer.compiled_grad",
    "tapeflow.tracer.control", "tapeflow.tracer.vectorized_map", "tapeflow.tracer.engine",
    "tapeflow.keras.layers", "tapeflow.keras.optimizers", "tapeflow.keras.more_optimizers",
    "tapeflow.keras.misc_layers",
    "tapeflow.saved_model.save", "tapeflow.saved_model.load", "tapeflow.train.checkpoint",
    "tapeflow.config", "tapeflow.tracer.compile_log", "tapeflow.distribute.strategy",
    "tapeflow.random", "tapeflow.autodiff.explain", "tapeflow.autograph", "tapeflow.tracer.convert",
    "tapeflow.tracer.control_grads", "tapeflow.tracer.functional",
    "tapeflow.keras.recurrent", "tapeflow.keras.rnn_cells", "tapeflow.keras.wrappers",
    "tapeflow.keras.attention", "tapeflow.keras.normalization_layers",
    "tapeflow.keras.core_layers", "tapeflow.keras.normalization",
    "tapeflow.nest",
    "tapeflow.tracer.graph_gradients",
    "tapeflow.tracer.switch_case", "tapeflow.autodiff.gradient_utils", "tapeflow.ops.grouping",
    "tapeflow.ops.static_values", "tapeflow.ops.scopes", "tapeflow.ops.random",
    "tapeflow.ops.tf_initializers",
    "tapeflow.keras.recent_optimizers", "tapeflow.keras.optimizer_wrappers", "tapeflow.autodiff.recompute",
    "tapeflow.keras.reversible_embedding", "tapeflow.keras.spectral_normalization", "tapeflow.keras.stft_initializer",
    "tapeflow.keras.ctc_loss", "tapeflow.keras.model_plot", "tapeflow.data.element_errors",
    "tapeflow.data.resampling", "tapeflow.runtime.traceback_filter", "tapeflow.runtime.placement_log",
]

# Namespaces whose every public callable must have a docstring with an example.
NAMESPACES = ["tapeflow", "tapeflow.math", "tapeflow.nn", "tapeflow.linalg",
              "tapeflow.keras.layers", "tapeflow.keras.optimizers", "tapeflow.saved_model",
              "tapeflow.train", "tapeflow.config", "tapeflow.autodiff", "tapeflow.random",
              "tapeflow.debugging", "tapeflow.autograph"]

# Methods users call, which need an example too (classes above are checked as classes).
METHODS = {
    tf.GradientTape: ["watch", "gradient", "jacobian", "batch_jacobian", "stop_recording",
                      "reset", "watched_variables", "saved_bytes"],
    tf.Variable: ["assign", "assign_add", "assign_sub"],
    tf.Module: ["variables", "trainable_variables", "submodules"],
}


def _public(namespace):
    """(name, object) for each public callable of ``namespace`` (modules and exceptions aside)."""
    ns = importlib.import_module(namespace)
    names = getattr(ns, "__all__", None) or [n for n in vars(ns) if not n.startswith("_")]
    for name in sorted(names):
        obj = getattr(ns, name)
        if inspect.ismodule(obj) or not callable(obj):
            continue
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        yield name, obj


def _function_classes():
    """tf.function's Function and ConcreteFunction: the methods users call on them."""
    f = tf.function(lambda x: x)
    concrete = f.get_concrete_function(tf.TensorSpec([], tf.float32))
    return {type(f): ["get_concrete_function", "experimental_get_tracing_count", "lower"],
            type(concrete): ["__call__"]}


def _has_example(obj):
    doc = inspect.getdoc(obj) or ""
    return ">>>" in doc


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, numpy_backend):
    if name.startswith("tapeflow.distribute"):
        pytest.importorskip("distributed")   # the `distribute` extra
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    tests = finder.find(module, globs=dict(vars(module)), extraglobs={"tf": tf, "np": np})
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()


def test_every_public_callable_has_a_docstring_with_an_example():
    missing = sorted({f"{ns}.{name}" for ns in NAMESPACES for name, obj in _public(ns)
                      if not _has_example(obj)})
    methods = {**METHODS, **_function_classes()}
    missing += [f"{cls.__name__}.{m}" for cls, names in methods.items() for m in names
                if not _has_example(inspect.getattr_static(cls, m))]
    assert not missing, f"{len(missing)} public callables without an example: {', '.join(missing)}"


def test_dask_strategy_has_an_example_that_starts_no_cluster():
    pytest.importorskip("distributed")
    from tapeflow.distribute import DaskStrategy
    doc = inspect.getdoc(DaskStrategy)
    assert ">>>" in doc
    starts = [ln for ln in doc.splitlines() if "Client(" in ln and ln.startswith(">>>")]
    assert starts and all("doctest: +SKIP" in ln for ln in starts)
