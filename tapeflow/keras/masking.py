"""Keras masks: a boolean ``(batch, time)`` tensor riding along with a layer's output.

Keras 3 sets ``_keras_mask`` on the output tensor; tapeflow's tensors have fixed slots, so
the mask is kept here, keyed by the tensor's id and dropped when the tensor dies. A layer
whose ``call`` takes ``mask`` gets its input's mask when none is passed; after the call a
layer with ``supports_masking`` gives its outputs ``compute_mask(inputs, mask)`` (Keras 3's
``Layer.__call__`` steps 7 and 9). ``Masking`` makes masks; recurrent layers consume them.
"""
import inspect
import weakref

from .. import _nest

_MASKS = {}      # id(tensor) -> (weakref to the tensor, its mask)


def get_mask(x):
    """The Keras mask attached to tensor ``x``, or None."""
    entry = _MASKS.get(id(x))
    if entry is None or entry[0]() is not x:
        return None
    return entry[1]


def set_mask(x, mask):
    """Attach ``mask`` to tensor ``x`` (None removes it)."""
    key = id(x)
    if mask is None:
        _MASKS.pop(key, None)
        return
    try:
        ref = weakref.ref(x, lambda _r, key=key: _MASKS.pop(key, None))
    except TypeError:       # a Python value: nothing to attach to
        return
    _MASKS[key] = (ref, mask)


_TAKES_MASK = {}


def _takes_mask(layer):
    cls = type(layer)
    if cls not in _TAKES_MASK:
        _TAKES_MASK[cls] = "mask" in inspect.signature(layer.call).parameters
    return _TAKES_MASK[cls]


def input_mask(layer, inputs, kwargs):
    """The mask of ``inputs`` (a structure of masks), passed as ``mask=`` if ``call`` takes it."""
    previous = _nest.map_structure(get_mask, inputs)
    if _takes_mask(layer) and kwargs.get("mask") is None and any(
            m is not None for m in _nest.flatten(previous)):
        kwargs["mask"] = previous
    return previous


def output_mask(layer, inputs, outputs, previous):
    """``outputs`` with ``layer.compute_mask(inputs, previous)`` attached (if it supports
    masking and the output has none of its own yet)."""
    if not getattr(layer, "supports_masking", False):
        return outputs
    if all(m is None for m in _nest.flatten(previous)) and not getattr(
            layer, "makes_masks", False):
        return outputs
    masks = layer.compute_mask(inputs, previous)
    flat_out = _nest.flatten(outputs)
    flat_masks = _nest.flatten(masks) if isinstance(masks, (list, tuple)) else [masks] * len(flat_out)
    for out, mask in zip(flat_out, flat_masks):
        if get_mask(out) is None:
            set_mask(out, mask)
    return outputs


__all__ = ["get_mask", "set_mask", "input_mask", "output_mask"]
