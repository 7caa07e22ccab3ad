"""The public API is annotated (the package ships ``py.typed``): every public function and
method of the namespaces below says what it returns, and every annotation names something
that exists (``typing.get_type_hints`` resolves it), so the annotations stay honest.

The Keras namespaces are documented (tests/test_doctests.py) but not yet annotated."""
import inspect
import pathlib
import typing

import pytest

import tapeflow as tf
from test_doctests import METHODS, _function_classes, _public

NAMESPACES = ["tapeflow", "tapeflow.math", "tapeflow.nn", "tapeflow.linalg", "tapeflow.saved_model",
              "tapeflow.random", "tapeflow.debugging", "tapeflow.autograph",
              "tapeflow.train", "tapeflow.config", "tapeflow.autodiff"]


def _callables():
    """(label, function) for each public function, each class's own constructor and each
    listed method."""
    seen = set()
    for ns in NAMESPACES:
        for name, obj in _public(ns):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                init = vars(obj).get("__init__")
                if init is not None:
                    yield f"{ns}.{name}.__init__", init
            else:
                yield f"{ns}.{name}", obj
    for cls, names in {**METHODS, **_function_classes()}.items():
        for m in names:
            attr = inspect.getattr_static(cls, m)
            yield f"{cls.__name__}.{m}", attr.fget if isinstance(attr, property) else attr


CALLABLES = list(_callables())


def test_every_public_callable_says_what_it_returns():
    missing = [label for label, fn in CALLABLES
               if inspect.signature(fn).return_annotation is inspect.Signature.empty]
    assert not missing, f"{len(missing)} without a return annotation: {', '.join(missing)}"


@pytest.mark.parametrize("label, fn", CALLABLES, ids=[label for label, _ in CALLABLES])
def test_annotations_name_real_types(label, fn):
    typing.get_type_hints(inspect.unwrap(fn))


def test_main_entry_points_annotate_their_parameters():
    # TensorFlow 2.21's own signatures, with types
    assert typing.get_type_hints(tf.function)["jit_compile"] == bool | None
    assert typing.get_type_hints(tf.GradientTape.__init__) == {
        "persistent": bool, "watch_accessed_variables": bool, "return": type(None)}
    assert issubclass(tf.Tensor, typing.get_type_hints(tf.constant)["return"])
    assert typing.get_type_hints(tf.Variable.assign)["return"] == tf.Variable | None


def test_the_package_says_it_is_typed():
    assert (pathlib.Path(tf.__file__).parent / "py.typed").is_file()
