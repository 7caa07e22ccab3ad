"""``tf.TensorShape``: a tuple of dims (``None`` where unknown), or of unknown rank.

A tuple so that the runtime, which builds and compares shapes as tuples, takes it as one.
``TensorShape(None)`` (TensorFlow's unknown rank: a TensorArray's element shape before
anything fixes it, ``tf.TensorSpec(None)``) is a separate state, not the empty tuple: it
has no length, cannot be iterated or listed, and is compatible with every shape, as in
TensorFlow 2.21. Known shapes keep their tuple behaviour (``bool(TensorShape([]))`` is
False here, True in TensorFlow, since the runtime tests scalars that way).
"""
from __future__ import annotations


class TensorShape(tuple):
    """A tuple of dims that prints like TensorFlow's and compares equal to lists.

    >>> s = tf.zeros([2, 3]).shape
    >>> s, s.as_list(), s.rank, s.num_elements()
    (TensorShape([2, 3]), [2, 3], 2, 6)
    >>> u = tf.TensorShape(None)
    >>> u, u.rank, u.is_compatible_with([4, 5]), u.merge_with([4, None])
    (TensorShape(None), None, True, TensorShape([4, None]))
    """

    _unknown = False        # unknown rank: set on the instance by TensorShape(None)

    def __new__(cls, dims):
        if dims is None or (isinstance(dims, TensorShape) and dims._unknown):
            obj = super().__new__(cls, ())
            obj._unknown = True
            return obj
        if isinstance(dims, int):       # TensorFlow: TensorShape(3) is TensorShape([3])
            dims = (dims,)
        return super().__new__(cls, (None if d is None else int(d) for d in dims))

    # -- rank and dims -------------------------------------------------------------------
    @property
    def rank(self) -> int | None:
        return None if self._unknown else tuple.__len__(self)

    ndims = rank

    @property
    def dims(self) -> list[int | None] | None:
        """The dims (TensorFlow's are Dimension objects, equal to these ints), or None."""
        return None if self._unknown else list(tuple.__iter__(self))

    def as_list(self) -> list[int | None]:
        if self._unknown:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(tuple.__iter__(self))

    def num_elements(self) -> int | None:
        if self._unknown or None in tuple.__iter__(self):
            return None
        n = 1
        for d in tuple.__iter__(self):
            n *= d
        return n

    def is_fully_defined(self) -> bool:
        return not self._unknown and None not in tuple.__iter__(self)

    # -- relations -----------------------------------------------------------------------
    def is_compatible_with(self, other) -> bool:
        other = TensorShape(other)
        if self._unknown or other._unknown:
            return True
        return tuple.__len__(self) == tuple.__len__(other) and all(
            a is None or b is None or a == b
            for a, b in zip(tuple.__iter__(self), tuple.__iter__(other)))

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other) -> TensorShape:
        """The shape both describe: known dims of either, which must agree."""
        other = TensorShape(other)
        if self._unknown:
            return other
        if other._unknown:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b
                            for a, b in zip(tuple.__iter__(self), tuple.__iter__(other))])

    def most_specific_compatible_shape(self, other) -> TensorShape:
        """The most specific shape both are compatible with: unknown where they differ."""
        other = TensorShape(other)
        if self._unknown or other._unknown or tuple.__len__(self) != tuple.__len__(other):
            return TensorShape(None)
        return TensorShape([a if a == b else None
                            for a, b in zip(tuple.__iter__(self), tuple.__iter__(other))])

    def concatenate(self, other) -> TensorShape:
        other = TensorShape(other)
        if self._unknown or other._unknown:
            return TensorShape(None)
        return TensorShape(tuple(tuple.__iter__(self)) + tuple(tuple.__iter__(other)))

    def with_rank_at_least(self, rank) -> TensorShape:
        if not self._unknown and tuple.__len__(self) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    # -- the tuple protocol --------------------------------------------------------------
    def __len__(self):
        if self._unknown:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return tuple.__len__(self)

    def __iter__(self):
        if self._unknown:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return tuple.__iter__(self)

    def __contains__(self, item):
        return item in iter(self)

    def __getitem__(self, i):
        if self._unknown:
            return _unknown_item(i)
        r = tuple.__getitem__(self, i)
        return TensorShape(r) if isinstance(i, slice) else r

    def __add__(self, other):
        if self._unknown or (isinstance(other, TensorShape) and other._unknown):
            return TensorShape(None)
        return tuple.__add__(self, other)

    def __radd__(self, other):
        if self._unknown:
            return TensorShape(None)
        return tuple(other) + tuple(tuple.__iter__(self))

    def __bool__(self):
        return not self._unknown and tuple.__len__(self) > 0

    def __eq__(self, other):
        if type(other) is tuple:        # the runtime's shapes: no conversion
            return not self._unknown and tuple.__eq__(self, other)
        if not isinstance(other, TensorShape):
            try:
                other = TensorShape(other)
            except (TypeError, ValueError):
                return False
        return self._unknown == other._unknown and tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(None) if self._unknown else tuple.__hash__(self)

    def __reduce__(self):
        return TensorShape, (None if self._unknown else list(tuple.__iter__(self)),)

    def __repr__(self):
        if self._unknown:
            return "TensorShape(None)"
        return f"TensorShape({list(tuple.__iter__(self))})"

    def __str__(self):
        return "<unknown>" if self._unknown else str(tuple(tuple.__iter__(self)))


def _unknown_item(i):
    """TensorFlow's item of an unknown shape: an unknown dim for an index; for a slice, as
    many unknown dims as its bounds say, or an unknown shape when they do not."""
    if not isinstance(i, slice):
        return None
    if i.step is not None:
        raise ValueError("Steps are not yet handled")
    start = 0 if i.start is None else i.start
    if i.stop is None or start < 0 or i.stop < 0:
        return TensorShape(None)
    return TensorShape([None] * max(i.stop - start, 0))


__all__ = ["TensorShape"]
