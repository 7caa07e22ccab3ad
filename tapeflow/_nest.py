"""Flatten and rebuild nested structures (lists, tuples, dicts, namedtuples) as TensorFlow's nest.

Dicts flatten in sorted-key order, as in TensorFlow. An object with TensorFlow's nest
protocol (``__tf_flatten__() -> (metadata, components)`` and the class method
``__tf_unflatten__(metadata, components)``: ``tf.TensorArray``) flattens to its components,
and its structure includes its metadata. Everything else is a leaf.
"""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _custom(x):
    return hasattr(type(x), "__tf_flatten__")


def flatten(structure):
    if _custom(structure):
        return [leaf for x in structure.__tf_flatten__()[1] for leaf in flatten(x)]
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure, key=_sort_key) for leaf in flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for x in structure for leaf in flatten(x)]
    return [structure]


def _sort_key(k):
    return (type(k).__name__, k) if not isinstance(k, (int, float)) else ("", k)


def pack_sequence_as(structure, flat):
    it = iter(flat)
    out = _pack(structure, it)
    if next(it, _END) is not _END:
        raise ValueError("pack_sequence_as: too many values for the structure")
    return out


_END = object()


def _pack(s, it):
    if _custom(s):
        meta, parts = s.__tf_flatten__()
        return type(s).__tf_unflatten__(meta, [_pack(x, it) for x in parts])
    if isinstance(s, dict):
        vals = {k: _pack(s[k], it) for k in sorted(s, key=_sort_key)}
        return type(s)((k, vals[k]) for k in s) if type(s) is not dict else {k: vals[k] for k in s}
    if _is_namedtuple(s):
        return type(s)(*[_pack(x, it) for x in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_pack(x, it) for x in s)
    v = next(it, _END)
    if v is _END:
        raise ValueError("pack_sequence_as: too few values for the structure")
    return v


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])


def structure(x):
    """The nesting of ``x`` as a hashable value with the leaves left out (dict keys sorted):
    what ``tapeflow.function`` keys traces by, and what saved programs record per argument."""
    if _custom(x):
        meta, parts = x.__tf_flatten__()
        return (type(x).__name__, (repr(meta),) + tuple(structure(v) for v in parts))
    if isinstance(x, dict):
        return ("dict", tuple((k, structure(x[k])) for k in sorted(x, key=str)))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(structure(v) for v in x))
    return "leaf"


def from_structure(s, leaves):
    """The inverse of ``structure``: rebuild ``s`` taking leaves from the iterator ``leaves``."""
    if s == "leaf":
        return next(leaves)
    kind, items = s
    if kind == "dict":
        return {k: from_structure(v, leaves) for k, v in items}
    vals = [from_structure(v, leaves) for v in items]
    return vals if kind == "list" else tuple(vals)
