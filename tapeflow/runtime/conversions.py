"""``tf.register_tensor_conversion_function``: the table ``convert_to_tensor`` consults for
types it does not know (TensorFlow's ``tensor_conversion_registry``).

A higher layer registers its own types here (``ops/indexed_slices.py`` registers
``IndexedSlices``, densified), as users register theirs: every op input goes through
``convert_to_tensor``, so a registered type is accepted wherever a tensor is.
"""
from __future__ import annotations

import numbers

import numpy as np

# (base_type, conversion_func, priority, serial), kept sorted by (priority, serial)
_REGISTRY: list = []
_UNCONVERTIBLE = (numbers.Number, np.ndarray, np.generic, bool, int, float, complex)


def register_tensor_conversion_function(base_type, conversion_func, priority=100) -> None:
    """Register ``conversion_func(value, dtype=None, name=None, as_ref=False)`` for values of
    ``base_type`` (a type or a tuple of types); lower ``priority`` is tried first.

    The function returns a Tensor (of ``dtype`` when one is asked for) or ``NotImplemented``.

    >>> class Meters:
    ...     def __init__(self, v):
    ...         self.v = v
    >>> tf.register_tensor_conversion_function(
    ...     Meters, lambda value, dtype=None, name=None, as_ref=False: tf.constant(value.v, dtype))
    >>> tf.add(Meters([1.0, 2.0]), 1.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 3.], dtype=float32)>
    """
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    if not types or not all(isinstance(t, type) for t in types):
        raise TypeError(f"Argument `base_type` must be a type or a tuple of types. Obtained: "
                        f"{base_type}")
    if any(issubclass(t, _UNCONVERTIBLE) for t in types):
        raise TypeError("Cannot register conversions for Python numeric types and NumPy scalars "
                        "and arrays.")
    if not callable(conversion_func):
        raise TypeError(f"Argument `conversion_func` must be callable. Received {conversion_func}.")
    _REGISTRY.append((types, conversion_func, int(priority), len(_REGISTRY)))
    _REGISTRY.sort(key=lambda r: (r[2], r[3]))


def conversion_functions(value):
    """The registered functions for ``value``'s type, in the order TensorFlow tries them."""
    return [fn for types, fn, _, _ in _REGISTRY if isinstance(value, types)]


__all__ = ["register_tensor_conversion_function", "conversion_functions"]
