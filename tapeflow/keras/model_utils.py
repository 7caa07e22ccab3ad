"""``keras.models.clone_model`` and ``model_from_json``, and ``Model.to_json``: a model's
architecture as Keras 3's JSON, and a fresh model (new weights) from it."""
import json

from . import serialization
from .models import Functional, Input, Model, Sequential


def to_json(model, **kwargs):
    """The model's architecture (not its weights) as Keras 3's JSON string."""
    return json.dumps(serialization.serialize(model), **kwargs)


def model_from_json(json_string, custom_objects=None):
    """The model ``Model.to_json`` described, with freshly initialized weights."""
    with serialization.custom_object_scope(custom_objects):
        return serialization.deserialize(json.loads(json_string))


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, recursive=False,
                **kwargs):
    """A new model of the same architecture with new weights (layers cloned from their configs,
    or by ``clone_function(layer)`` for a Sequential model)."""
    if isinstance(model, Sequential) and (clone_function is not None or input_tensors is not None):
        clone = clone_function or (lambda layer: layer.__class__.from_config(layer.get_config()))
        layers = [clone(layer) for layer in model.layers]
        shape = getattr(model, "_build_input_shape", None)
        inputs = input_tensors if input_tensors is not None else (
            Input(batch_shape=tuple(shape)) if shape is not None else None)
        return Sequential(([inputs] if inputs is not None else []) + layers, name=model.name)
    if clone_function is not None or call_function is not None or input_tensors is not None:
        raise NotImplementedError("tapeflow's clone_model takes clone_function and input_tensors for "
                                  "Sequential models only")
    if not isinstance(model, (Functional, Sequential)) and isinstance(model, Model):
        raise ValueError("Arguments clone_function and input_tensors are only supported for Sequential "
                         "models or Functional models. Received model of type "
                         f"'{model.__class__.__name__}', with clone_function={clone_function} and "
                         f"input_tensors={input_tensors}")
    return serialization.deserialize(serialization.serialize(model))


__all__ = ["clone_model", "model_from_json", "to_json"]
