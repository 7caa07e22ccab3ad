"""Keras objects as JSON data and back: ``serialize``/``deserialize`` by a registry of class names.

A layer, model, initializer or optimizer is written as Keras 3 writes it:
``{"module", "class_name", "config", "registered_name"}`` (plus ``build_config``).
Reading one never imports a module or evaluates anything named in the data: the
class is looked up by name, first in the ``custom_objects`` of the current load
(``custom_object_scope``), then among the classes registered with
``register_keras_serializable``, then among tapeflow's own Keras classes; any other
name is Keras' ``TypeError: Could not locate class``. The ``module`` field is kept for
Keras' sake and ignored.
"""
import threading

from ..ir import limits

from . import core_layers, normalization
from . import layers as layers_module
from .auto_config import OWN_INITS

_scope = threading.local()
BUILTIN = {}     # class name -> class: tapeflow's own Keras classes (models.py adds its own)
REGISTERED = {}  # "package>Name" -> class: register_keras_serializable


def register_builtin(*classes):
    for cls in classes:
        BUILTIN[cls.__name__] = cls
        OWN_INITS.add(cls.__init__)


register_builtin(layers_module.Layer, layers_module.Dense, *normalization.CLASSES, *core_layers.CLASSES)


def register_keras_serializable(package="Custom", name=None):
    """Decorator: make a user's class loadable by name (``"package>Name"``), as Keras 3."""
    def decorator(cls):
        key = f"{package}>{name or cls.__name__}"
        if key in REGISTERED and REGISTERED[key] is not cls:
            raise ValueError(f"{key} has already been registered to {REGISTERED[key]}")
        REGISTERED[key] = cls
        cls._registered_name = key
        return cls
    return decorator


def get_registered_name(cls):
    return getattr(cls, "_registered_name", None) if "_registered_name" in vars(cls) else cls.__name__


class custom_object_scope:
    """Within it, these names resolve to these classes (``load_model(custom_objects=...)``)."""

    def __init__(self, custom_objects=None):
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self):
        if not hasattr(_scope, "stack"):
            _scope.stack = []
        _scope.stack.append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _scope.stack.pop()


def _custom_objects():
    out = {}
    for objects in getattr(_scope, "stack", ()):
        out.update(objects)
    return out


def serialize(obj):
    """Keras 3's dict for a layer/model (``get_config`` and ``build_config``)."""
    cls = type(obj)
    own = BUILTIN.get(cls.__name__) is cls
    config = obj.get_config()
    out = {"module": "keras.layers" if own else cls.__module__, "class_name": cls.__name__,
           "config": config, "registered_name": None if own else get_registered_name(cls)}
    build_config = obj.get_build_config() if hasattr(obj, "get_build_config") else None
    if build_config is not None:
        out["build_config"] = build_config
    return out


def retrieve_class(class_name, registered_name=None, full_config=None):
    """The class a config names, by the lookup order above; TypeError if none."""
    custom = _custom_objects()
    for name in (registered_name, class_name):
        if isinstance(name, str) and name in custom:
            return custom[name]
    for name in (registered_name, class_name):
        if isinstance(name, str) and name in REGISTERED:
            return REGISTERED[name]
    if isinstance(class_name, str) and class_name in BUILTIN:
        return BUILTIN[class_name]
    raise TypeError(f"Could not locate class '{str(class_name)[:100]}'. Make sure custom classes and "
                    f"functions are decorated with `@keras.saving.register_keras_serializable()`. If "
                    f"they are already decorated, make sure they are all imported so that the "
                    f"decorator is run before trying to load them. Full object config: "
                    f"{str(full_config)[:300]}")


def check_shape(shape, what, nested=False):
    """A shape read from a file: a list of at most MAX_RANK dims, each None or 0..MAX_DIM
    (``nested``: or a list of such shapes, for layers with several inputs)."""
    if shape is None:
        return
    if not isinstance(shape, list) or len(shape) > limits.MAX_RANK:
        raise ValueError(f"{what}: shape {str(shape)[:80]} is not a list of at most "
                         f"{limits.MAX_RANK} dims")
    if nested and shape and all(isinstance(s, list) for s in shape):
        for s in shape:
            check_shape(s, what)
        return
    for d in shape:
        if d is not None and (type(d) is not int or not 0 <= d <= limits.MAX_DIM):
            raise ValueError(f"{what}: dim {str(d)[:40]} is not None or an int in 0..{limits.MAX_DIM}")


def deserialize(config):
    """The object ``serialize`` described, built when it has a ``build_config``."""
    if not isinstance(config, dict):
        raise ValueError(f"a Keras object config must be a dict, got {type(config).__name__}")
    unknown = set(config) - {"module", "class_name", "config", "registered_name", "build_config",
                             "compile_config", "name", "inbound_nodes", "shared_object_id"}
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)[:5]} in the config of "
                         f"{str(config.get('class_name'))[:60]!r}")
    cls = retrieve_class(config.get("class_name"), config.get("registered_name"), config)
    inner = config.get("config", {})
    if not isinstance(inner, dict) or not all(isinstance(k, str) for k in inner):
        raise ValueError(f"the config of {cls.__name__} is not a dict of named arguments")
    inner = dict(inner)
    dtype = inner.get("dtype")
    if isinstance(dtype, dict):  # Keras 3 writes a DTypePolicy; its name is the dtype
        inner["dtype"] = (dtype.get("config") or {}).get("name")
    obj = cls.from_config(inner)
    build_config = config.get("build_config")
    if build_config is not None and hasattr(obj, "build_from_config"):
        if not isinstance(build_config, dict) or set(build_config) != {"input_shape"}:
            raise ValueError(f"build_config of {cls.__name__} must be {{'input_shape': ...}}")
        check_shape(build_config["input_shape"], f"build_config of {cls.__name__}", nested=True)
        obj.build_from_config(build_config)
    return obj


__all__ = ["serialize", "deserialize", "register_keras_serializable", "custom_object_scope",
           "retrieve_class", "BUILTIN", "REGISTERED"]
