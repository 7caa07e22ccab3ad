"""Keras 3's saved form of its own small objects (initializers, regularizers, constraints,
losses, metrics, schedules, optimizers): ``{"module", "class_name", "config",
"registered_name"}``, written and read the same way by every module that has them.

Layers and models go through ``serialization.py`` (registered and custom classes, build
configs); this module imports nothing of Keras, so the modules below layers can use it."""


def class_config(obj, module):
    """``obj`` as Keras 3 saves one of its built-in classes, ``module`` its Keras module
    (``"keras.regularizers"``)."""
    return {"module": module, "class_name": type(obj).__name__, "config": obj.get_config(),
            "registered_name": None}


def class_config_or_name(obj, cls, functions, module):
    """A ``cls`` instance as ``class_config``, a function of ``functions`` by its name (losses,
    metrics); anything else cannot be saved (ValueError)."""
    if isinstance(obj, cls):
        return class_config(obj, module)
    name = getattr(obj, "__name__", None)
    if name in functions and functions[name] is obj:
        return name
    raise ValueError(f"Cannot serialize {obj!r}")


def from_class_config(config, cls):
    """``cls`` built from the ``"config"`` of a ``class_config`` dict (none: no arguments)."""
    return cls.from_config(dict(config.get("config") or {}))


def get_by_identifier(identifier, deserialize, what, none=None):
    """Keras' ``get`` of a kind of object: None as ``none``, a name or a config dict through
    ``deserialize``, a callable as given; anything else a ValueError naming ``what``."""
    if identifier is None:
        return none
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret {what} identifier: {identifier}")
