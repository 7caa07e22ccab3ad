"""Keras 3's automatic config: a user's layer is saved with its constructor's arguments.

``Layer.__new__`` records the arguments each layer was constructed with; for a class
whose ``__init__`` is the user's (not one of tapeflow's, listed in ``OWN_INITS``),
``get_config`` returns them by parameter name when they are plain data, and otherwise
raises Keras' ``NotImplementedError`` asking for a ``get_config``.
"""
import inspect

OWN_INITS = set()  # the __init__ of every layer class tapeflow defines (their get_config is explicit)

_NOT_SERIALIZABLE = """
Object {name} was created by passing
non-serializable argument values in `__init__()`,
and therefore the object must override `get_config()` in
order to be serializable. Please implement `get_config()`.

Example:


class CustomLayer(keras.layers.Layer):
    def __init__(self, arg1, arg2, **kwargs):
        super().__init__(**kwargs)
        self.arg1 = arg1
        self.arg2 = arg2

    def get_config(self):
        config = super().get_config()
        config.update({{
            "arg1": self.arg1,
            "arg2": self.arg2,
        }})
        return config
"""


def plain(value):
    """JSON data only: None, bool, int, float, str, and lists/dicts of them."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    return False


def init_config(layer):
    """The arguments ``layer``'s class was constructed with, by parameter name."""
    args, kwargs = getattr(layer, "_init_args", ((), {}))
    try:
        bound = inspect.signature(type(layer).__init__).bind(layer, *args, **kwargs)
    except TypeError:
        bound = None
    if bound is None:
        raise NotImplementedError(_NOT_SERIALIZABLE.format(name=type(layer).__name__))
    config = {}
    for pname, value in list(bound.arguments.items())[1:]:
        param = bound.signature.parameters[pname]
        if param.kind == param.VAR_KEYWORD:
            config.update({k: v for k, v in value.items() if k not in ("name", "trainable", "dtype")})
        elif param.kind == param.VAR_POSITIONAL:
            if value:
                raise NotImplementedError(_NOT_SERIALIZABLE.format(name=type(layer).__name__))
        elif pname not in ("name", "trainable", "dtype"):
            config[pname] = value
    if not plain(config):
        raise NotImplementedError(_NOT_SERIALIZABLE.format(name=type(layer).__name__))
    return config



__all__ = ["OWN_INITS", "plain", "init_config"]
