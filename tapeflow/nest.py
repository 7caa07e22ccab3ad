"""``tf.nest``: flatten and rebuild nested structures with TensorFlow's rules.

What nests: lists, tuples, namedtuples, mappings (dicts, ``OrderedDict``: flattened in
*sorted* key order, rebuilt in their own order), ``attrs`` classes (fields in definition
order), mapping views, and objects with TensorFlow's nest protocol (``__tf_flatten__``).
Strings, bytes, sets, arrays and tensors are leaves. The internal ``_nest`` module keys
traces by structure and is more lenient (mixed dict keys); this one is TensorFlow's.
"""
from __future__ import annotations

import collections.abc as _abc
from collections.abc import Callable
from typing import Any


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_attrs(x):
    return hasattr(type(x), "__attrs_attrs__")


def _custom(x):
    return hasattr(type(x), "__tf_flatten__") and not isinstance(x, type)


def is_nested(seq: Any) -> bool:
    """Whether ``seq`` nests (a list, tuple, mapping, namedtuple, attrs object, mapping
    view or nest-protocol object) rather than being a leaf.

    >>> tf.nest.is_nested([1, 2]), tf.nest.is_nested({}), tf.nest.is_nested("ab")
    (True, True, False)
    """
    return (isinstance(seq, (list, tuple, _abc.Mapping, _abc.MappingView)) or _is_attrs(seq)
            or _custom(seq))


def _children(s):
    """The direct substructures of nested ``s``, in flattening order."""
    if _custom(s):
        return list(s.__tf_flatten__()[1])
    if isinstance(s, _abc.Mapping):
        return [s[k] for k in sorted(s)]
    if _is_attrs(s):
        return [getattr(s, a.name) for a in type(s).__attrs_attrs__]
    return list(s)


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """The leaves of ``structure``, depth first; a mapping's values in sorted-key order.

    >>> tf.nest.flatten({"b": [1, (2, 3)], "a": 4})
    [4, 1, 2, 3]
    >>> tf.nest.flatten(None)
    [None]
    """
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _rebuild(s, children):
    """``s``'s container type holding ``children`` (given in flattening order)."""
    if _custom(s):
        return type(s).__tf_unflatten__(s.__tf_flatten__()[0], children)
    if isinstance(s, _abc.Mapping):
        by_key = dict(zip(sorted(s), children, strict=True))
        items = [(k, by_key[k]) for k in s]
        if isinstance(s, _abc.MutableMapping) and type(s) is not dict:
            try:
                return type(s)(items)
            except TypeError:       # defaultdict and friends: copy, then set
                out = s.copy()
                out.update(items)
                return out
        return dict(items) if type(s) is dict else type(s)(items)
    if _is_namedtuple(s):
        return type(s)(*children)
    if _is_attrs(s):
        return type(s)(*children)
    if isinstance(s, _abc.MappingView):
        return list(children)
    return type(s)(children)


def _pack(s, flat, i):
    if not is_nested(s):
        return flat[i], i + 1
    out = []
    for child in _children(s):
        v, i = _pack(child, flat, i)
        out.append(v)
    return _rebuild(s, out), i


def pack_sequence_as(structure: Any, flat_sequence: Any, expand_composites: bool = False) -> Any:
    """``structure`` rebuilt with the leaves of ``flat_sequence`` (what ``flatten`` undoes).

    >>> tf.nest.pack_sequence_as({"b": [0, 0], "a": 0}, [1, 2, 3])
    {'b': [2, 3], 'a': 1}
    """
    if not is_nested(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {flat_sequence}\ninto a structure, but "
                        f"found incompatible type `{type(flat_sequence)}` instead.")
    flat = list(flat_sequence)
    if not is_nested(structure):
        if len(flat) != 1:
            raise ValueError(f"The target structure is of type `{type(structure)}`\n  {structure}\n"
                             f"However the input is a sequence ({type(flat_sequence)}) of length "
                             f"{len(flat)}.\n  {flat_sequence}\nnest cannot guarantee that it is "
                             f"safe to map one to the other.")
        return flat[0]
    n = len(flatten(structure))
    if n != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {n} atoms, but flat_sequence had "
                         f"{len(flat)} items.  Structure: {structure}, flat_sequence: "
                         f"{flat_sequence}.")
    return _pack(structure, flat, 0)[0]


class _Dot:
    def __repr__(self):
        return "."


def _show(x):
    return f"type={type(x).__name__} str={x}"


def _same_type(a, b):
    if type(a) is type(b):
        return True
    if isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping):
        return True                     # dict and OrderedDict match, as in TensorFlow
    if _is_namedtuple(a) and _is_namedtuple(b):
        return type(a).__name__ == type(b).__name__ and a._fields == b._fields
    return False


def _mismatch(a, b, check_types):
    """(exception type, detail) for the first place ``a`` and ``b`` differ, or None."""
    na, nb = is_nested(a), is_nested(b)
    if na != nb:
        seq, leaf = (a, b) if na else (b, a)
        return ValueError, (f'Substructure "{_show(seq)}" is a sequence, while substructure '
                            f'"{_show(leaf)}" is not')
    if not na:
        return None
    if check_types and not _same_type(a, b):
        return TypeError, (f"The two namedtuples don't have the same sequence type. First "
                           f"structure {_show(a)} has type {type(a).__name__}, while second "
                           f"structure {_show(b)} has type {type(b).__name__}")
    if isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping) and set(a) != set(b):
        return ValueError, (f"The two dictionaries don't have the same set of keys. First "
                            f"structure has keys {_show(list(a))}, while second structure has "
                            f"keys {_show(list(b))}")
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        return ValueError, (f"The two structures don't have the same number of elements. First "
                            f"structure: {_show(a)}. Second structure: {_show(b)}")
    for x, y in zip(ca, cb):
        found = _mismatch(x, y, check_types)
        if found:
            return found
    return None


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True,
                          expand_composites: bool = False) -> None:
    """Raise ``ValueError`` (``TypeError`` for differing sequence types when ``check_types``)
    unless ``nest1`` and ``nest2`` nest the same way, with TensorFlow's message.

    >>> tf.nest.assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
    >>> tf.nest.assert_same_structure([1, 2], [1, 2, 3])
    Traceback (most recent call last):
    ValueError: The two structures don't have the same nested structure.
    ...
    """
    found = _mismatch(nest1, nest2, check_types)
    if found is None:
        return
    kind, detail = found
    dots1 = map_structure(lambda _: _Dot(), nest1, check_types=False)
    dots2 = map_structure(lambda _: _Dot(), nest2, check_types=False)
    raise kind(f"The two structures don't have the same nested structure.\n\nFirst structure: "
               f"{_show(nest1)}\n\nSecond structure: {_show(nest2)}\n\nMore specifically: "
               f"{detail}\nEntire first structure:\n{dots1}\nEntire second structure:\n{dots2}")


def map_structure(func: Callable, *structure: Any, **kwargs: Any) -> Any:
    """``func`` applied to the leaves of ``structure`` (several structures: leaf by leaf, after
    ``assert_same_structure``), in the first structure's shape.

    >>> tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    if not structure:
        raise ValueError("Must provide at least one structure")
    unknown = set(kwargs) - {"check_types", "expand_composites"}
    if unknown:
        raise ValueError(f"Only valid keyword arguments are `check_types` and "
                         f"`expand_composites`, not: `{'`, `'.join(sorted(unknown))}`")
    check_types = kwargs.get("check_types", True)
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])


__all__ = ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure", "is_nested"]
