"""``tf.TypeSpec``: the base of the classes describing a value's type (``TensorSpec``,
``IndexedSlicesSpec``, ``TensorArraySpec``): equal when their fields are, compatible when
their shapes are."""
from __future__ import annotations

from .tensor_shape import TensorShape


class TypeSpec:
    """Describes the type of a value: a subclass names its fields (``_serialize``) and the
    Python type it describes (``value_type``).

    >>> isinstance(tf.TensorSpec([2]), tf.TypeSpec)
    True
    """

    __slots__ = ()

    @property
    def value_type(self):
        raise NotImplementedError

    def _serialize(self) -> tuple:
        raise NotImplementedError

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether a spec (or a value's spec) of the same type has compatible shapes and equal
        other fields."""
        other = spec_or_value
        if not isinstance(other, TypeSpec):
            other = getattr(other, "_type_spec", None)
        if type(other) is not type(self):
            return False
        return all(_compatible(a, b) for a, b in zip(self._serialize(), other._serialize()))

    def most_specific_common_supertype(self, others):
        """The spec every one of ``others`` and this one is compatible with, or None."""
        fields = list(self._serialize())
        for other in others:
            if type(other) is not type(self):
                return None
            for k, b in enumerate(other._serialize()):
                a = fields[k]
                if isinstance(a, TensorShape):
                    fields[k] = a.most_specific_compatible_shape(b) if hasattr(
                        a, "most_specific_compatible_shape") else (a if a == b else TensorShape(None))
                elif a != b:
                    return None
        return type(self)(*fields)

    def __eq__(self, other):
        return type(other) is type(self) and self._serialize() == other._serialize()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self), tuple(repr(f) for f in self._serialize())))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(_field_repr(f) for f in self._serialize())})"


def _field_repr(f):
    return f"TensorShape({f.as_list() if f.rank is not None else None})" \
        if isinstance(f, TensorShape) else repr(f)


def _compatible(a, b):
    if isinstance(a, TensorShape):
        return a.is_compatible_with(b)
    return a == b


__all__ = ["TypeSpec"]
