"""TensorArrays carried by a While (a converted loop's or ``tf.while_loop``'s) while tracing.

A traced TensorArray is one tensor, or two when its elements differ in shape
(ops/tensor_array.py). Entering a loop, a dynamic-size one is sized: to the trip count when
the trace knows it (a static shape, so the program compiles), else made run-time sized (its
leading dim None: the loop grows it); a padded one's element sizes become run-time ones. A
body that gives a TensorArray its first tensor (the element shape was unknown), a run-time
size (a loop inside) or elements of different shapes raises
``ListShapes``; the loop is then traced again from ``shaped_lists``' initial values, made in
the loop's own trace (never in the body's).
"""
from ..ops import math
from ..ops.tensor_array import TensorArray


class ListShapes(Exception):
    """The body wrote the first element of a TensorArray loop variable (its element shape,
    hence its tensor, is known only now), or made one run-time sized (a loop inside): the
    loop is traced again with the tensor made. ``values``: the body's (read for their
    element shapes and sizes only: they belong to the body's trace)."""

    def __init__(self, values):
        super().__init__("internal: a TensorArray's element shape became known")
        self.values = values


def lists(value):
    """The TensorArrays in a loop variable's value (in lists, tuples, dicts), in order."""
    if isinstance(value, TensorArray):
        return [value]
    if isinstance(value, dict):
        return [t for k in sorted(value, key=repr) for t in lists(value[k])]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in lists(v)]
    return []


def replace_lists(value, it):
    """``value`` with its TensorArrays (in ``lists``' order) replaced by those of ``it``."""
    if isinstance(value, TensorArray):
        return next(it)
    if isinstance(value, dict):
        new = {k: replace_lists(value[k], it) for k in sorted(value, key=repr)}
        return type(value)((k, new[k]) for k in value) if type(value) is not dict \
            else {k: new[k] for k in value}
    if isinstance(value, (list, tuple)) and not hasattr(type(value), "_fields"):
        return type(value)(replace_lists(v, it) for v in value)
    if isinstance(value, tuple):
        return type(value)(*[replace_lists(v, it) for v in value])
    return value


class Zero:
    """An int32 scalar of the trace that is 0 when the program runs, made from the loop's first
    test (``pred()``) when a TensorArray needs it (``TensorArray._run_time_sized``): a Python
    0 would be a constant, and its leading dim a static 0."""

    def __init__(self, pred):
        self.pred, self.value = pred, None

    def __call__(self):
        if self.value is None:
            self.value = math.multiply(math.cast(self.pred(), "int32"), 0)
        return self.value


def size_lists(value, trips, zero):
    """Traced TensorArrays entering a loop: a dynamic-size one, of a known trip count, grows to
    it before the loop (a static shape: compiled); of a trip count known only when the program
    runs, its size becomes a run-time one (``_run_time_sized``: its leading dim None), and the
    loop grows it. A padded one (elements of different shapes) gets run-time element sizes,
    so the body may write larger elements (``_loop_form``)."""
    tas = lists(value)
    if not any(t._graph and (t._shapes is not None or (t.dynamic_size and t._n is not None))
               for t in tas):
        return value

    def sized(t):
        if not t._graph:
            return t
        if t.dynamic_size and t._n is not None:
            if trips is None:
                t = t._run_time_sized(zero())
            elif t._n < trips:
                t = t._with_size(trips)
        return t._loop_form(zero())
    return replace_lists(value, iter(sized(t) for t in tas))


def _changed(old, now):
    return old._graph and now._graph and (
        (old._buf is None and now._buf is not None) or (old._n is not None and now._n is None)
        or (old._shapes is None and now._shapes is not None))


def reshaped(init, new):
    """Whether the body gave a TensorArray of ``init`` its tensor, a run-time size or
    elements of different shapes."""
    for a, b in zip(init, new, strict=True):
        olds, news = lists(a), lists(b)
        if len(olds) == len(news) and any(_changed(o, n) for o, n in zip(olds, news)):
            return True
    return False


def _shaped(old, now, zero):
    """``old`` (a loop's initial TensorArray) as the body made ``now`` (``reshaped``)."""
    if not (old._graph and now._graph):
        return old
    if old._n is not None and now._n is None:
        old = old._run_time_sized(zero())
    if old._shapes is None and now._shapes is not None:
        old = old._as_ragged(len(now._buf.shape) - 1)._loop_form(zero())
    elif old._buf is None and now._buf is not None:
        old = old._with_element_shape(now._shape, zero() if old._n is None else None)
    return old


def shaped_lists(init, new, zero):
    """``init`` with each TensorArray that had no tensor and got one in the body made, each
    that the body made run-time sized (a loop inside) run-time sized, each the body made
    padded (elements of different shapes) padded."""
    out = []
    for a, b in zip(init, new, strict=True):
        olds, news = lists(a), lists(b)
        if len(olds) != len(news) or not any(_changed(o, n) for o, n in zip(olds, news)):
            out.append(a)
            continue
        out.append(replace_lists(a, iter(_shaped(o, n, zero) for o, n in zip(olds, news))))
    return out


def while_loop(loop, cond, body, loop_vars, maximum_iterations, **kw):
    """``tf.while_loop`` inside a trace with TensorArrays among ``loop_vars``: ``loop`` (the
    While builder) with them sized, traced again while the body tells their shapes."""
    single = not isinstance(loop_vars, (list, tuple))
    init = [loop_vars] if single else list(loop_vars)
    zero = Zero(lambda: cond(*init))
    # the trace does not know the trip count (a static maximum_iterations bounds it, but not
    # the indices the body writes at): a dynamic-size list grows at run time
    init = [size_lists(v, None, zero) for v in init]

    def body_fn(*values):
        out = body(*values)
        new = [out] if single or (not isinstance(out, (list, tuple)) and len(init) == 1) \
            else list(out)
        if len(new) == len(init) and reshaped(init, new):
            raise ListShapes(new)
        return out

    while True:
        try:
            return loop(cond, body_fn, init[0] if single else type(loop_vars)(init),
                        maximum_iterations, **kw)
        except ListShapes as e:
            init = shaped_lists(init, e.values, zero)


__all__ = ["ListShapes", "Zero", "lists", "replace_lists", "size_lists", "reshaped",
           "shaped_lists", "while_loop"]
