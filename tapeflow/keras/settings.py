"""Keras' global settings (``keras.config``/``keras.backend``): the float type and epsilon.

Kept apart from backend.py so that layers, losses and the data adapters, which backend.py's
``clear_session`` sits above, can read them."""
from ..ir import dtypes as D

_state = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last"}


def floatx():
    """The default float type of layers' weights and of data: 'float32' unless set."""
    return _state["floatx"]


def set_floatx(value):
    """Set the default float type ('float16', 'float32', 'float64' or 'bfloat16')."""
    accepted = {"bfloat16", "float16", "float32", "float64"}
    if value not in accepted:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {accepted}")
    _state["floatx"] = str(value)


def epsilon():
    """The fuzz factor losses and metrics add to denominators (1e-7 unless set)."""
    return _state["epsilon"]


def set_epsilon(value):
    _state["epsilon"] = value


def image_data_format():
    return _state["image_data_format"]


def set_image_data_format(data_format):
    data_format = str(data_format).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    _state["image_data_format"] = data_format


def floatx_dtype():
    return D.as_dtype(_state["floatx"])


__all__ = ["floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
           "set_image_data_format", "floatx_dtype"]
