"""``tf.nest``: flatten, rebuild and compare nested structures with TensorFlow's rules.

Sequences are lists, tuples (namedtuples included) and mappings; a mapping flattens in sorted
key order (an OrderedDict too) and is rebuilt in its own key order; keys that cannot be
sorted are a TypeError, as in TF. Everything else (None, strings, tensors, arrays) is a leaf.
Objects with TF's nest protocol (``__tf_flatten__``, a TensorArray) flatten to their parts.
"""
import collections.abc

from . import _nest


def _is_mapping(x):
    return isinstance(x, collections.abc.Mapping)


def is_nested(seq):
    """Whether ``seq`` is a structure nest descends into (a list, tuple or mapping).

    >>> tf.nest.is_nested([1, 2]), tf.nest.is_nested("ab")
    (True, False)
    """
    return isinstance(seq, (list, tuple)) or _is_mapping(seq) or _nest._custom(seq)


def _children(x):
    """(keys or None, child values) of a nested ``x``, in flattening order."""
    if _nest._custom(x):
        return None, list(x.__tf_flatten__()[1])
    if _is_mapping(x):
        keys = sorted(x)
        return keys, [x[k] for k in keys]
    return None, list(x)


def flatten(structure, expand_composites=False):
    """The leaves of ``structure`` in TF's order (mappings by sorted key).

    >>> tf.nest.flatten({"b": 1, "a": [2, (3, None)]})
    [2, 3, None, 1]
    """
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure)[1] for leaf in flatten(child)]


def _rebuild(s, it):
    if not is_nested(s):
        return next(it)
    if _nest._custom(s):
        meta, parts = s.__tf_flatten__()
        return type(s).__tf_unflatten__(meta, [_rebuild(p, it) for p in parts])
    if _is_mapping(s):
        keys = sorted(s)
        values = dict(zip(keys, [_rebuild(s[k], it) for k in keys]))
        ordered = [(k, values[k]) for k in s]
        if isinstance(s, collections.defaultdict):
            out = collections.defaultdict(s.default_factory)
            out.update(ordered)
            return out
        return type(s)(ordered)
    values = [_rebuild(x, it) for x in s]
    if isinstance(s, tuple) and hasattr(type(s), "_fields"):
        return type(s)(*values)
    return type(s)(values)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """``structure`` rebuilt with the leaves of ``flat_sequence`` in flattening order.

    >>> tf.nest.pack_sequence_as({"b": 0, "a": 0}, [1, 2])
    {'b': 2, 'a': 1}
    """
    if not is_nested(flat_sequence) or _is_mapping(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {flat_sequence}\ninto a structure, but "
                        f"found incompatible type `{type(flat_sequence)}` instead.")
    flat_sequence = list(flat_sequence)
    n = len(flatten(structure))
    if n != len(flat_sequence):
        raise ValueError(f"Could not pack sequence. Structure had {n} atoms, but flat_sequence "
                         f"had {len(flat_sequence)} items.  Structure: {structure}, "
                         f"flat_sequence: {flat_sequence}.")
    if not is_nested(structure):
        return flat_sequence[0]
    return _rebuild(structure, iter(flat_sequence))


def _mismatch(nest1, nest2, detail, error=ValueError):
    raise error("The two structures don't have the same nested structure.\n\n"
                f"First structure: type={type(nest1).__name__} str={nest1}\n\n"
                f"Second structure: type={type(nest2).__name__} str={nest2}\n\n"
                f"More specifically: {detail}")


def _compare(a, b, check_types, top1, top2):
    na, nb = is_nested(a), is_nested(b)
    if na != nb:
        _mismatch(top1, top2, f"Substructure \"{a}\" is a sequence, while substructure "
                              f"\"{b}\" is not" if na else f"Substructure \"{b}\" is a sequence, "
                              f"while substructure \"{a}\" is not")
    if not na:
        return
    if check_types and type(a) is not type(b):
        _mismatch(top1, top2, f"The two namedtuples don't have the same sequence type. First "
                              f"structure {a} has type {type(a)}, while second structure {b} "
                              f"has type {type(b)}", TypeError)
    ka, ca = _children(a)
    kb, cb = _children(b)
    if len(ca) != len(cb):
        _mismatch(top1, top2, f"The two structures don't have the same number of elements. "
                              f"First structure: {a}, second structure: {b}.")
    if ka is not None and kb is not None and ka != kb:
        _mismatch(top1, top2, f"The two dictionaries don't have the same set of keys. First "
                              f"structure has keys {ka}, while second structure has keys {kb}.")
    for x, y in zip(ca, cb):
        _compare(x, y, check_types, top1, top2)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError if the nestings differ, TypeError if ``check_types`` and a sequence type does.

    >>> tf.nest.assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
    """
    _compare(nest1, nest2, check_types, nest1, nest2)


def map_structure(func, *structure, **kwargs):
    """``func`` applied leaf by leaf across structures of one nesting; the first's shape kept.

    >>> tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and "
                         f"`expand_composites`, not: `{', '.join(kwargs)}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])


__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]
