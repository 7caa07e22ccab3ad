"""``tf.debugging``'s checks: ``check_numerics``, ``Assert`` and the ``assert_*`` family.

Eagerly a failed check raises at once (InvalidArgumentError for values, ValueError/TypeError
for static shapes and dtypes, as TF). On traced tensors a value check becomes a run-time
check (the ``CheckTripCount`` op: it passes its first input on, and raises the message when
its count is 0), so it runs inside compiled programs too; ``check_numerics`` returns the
checked tensor, and an ``assert_*`` on traced tensors returns the checked ``x`` (use it, or
the check is dead code: tapeflow has no ``control_dependencies``). Static facts (ranks,
dtypes) are checked while tracing.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor
from . import math as m
from .dims import is_symbolic
from .reduce import reduce_all


def _summary(t, summarize):
    flat = np.asarray(t).ravel()
    n = len(flat) if summarize is None else int(summarize)
    return f"{flat[:n].tolist()}"


def _check(cond, x, message):
    """Raise ``message`` if ``cond`` (a bool tensor) is not all True; on traced tensors, the
    run-time check on ``x``."""
    ok = reduce_all(cond)
    if is_symbolic(ok) or is_symbolic(x):
        count = m.cast(ok, D.int32)
        return apply("CheckTripCount", [m._tensor(x), count], {"message": message})
    if not bool(np.asarray(ok)):
        raise InvalidArgumentError(message)
    return None


def check_numerics(tensor, message, name=None) -> Tensor:
    """``tensor``, after checking it has no NaN or Inf (InvalidArgumentError naming which).

    >>> tf.debugging.check_numerics(tf.constant([1.0, 2.0]), "weights")
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    tensor = m._tensor(tensor)
    if not tensor.dtype.is_floating:
        raise TypeError(f"check_numerics needs a floating-point tensor, got {tensor.dtype.name}")
    if is_symbolic(tensor):
        return _check(m.is_finite(tensor), tensor,
                      f"{message} : Tensor had NaN or Inf values")
    values = np.asarray(tensor)
    if np.isnan(values).any():
        raise InvalidArgumentError(f"{message} : Tensor had NaN values")
    if np.isinf(values).any():
        raise InvalidArgumentError(f"{message} : Tensor had Inf values")
    return tensor


def assert_all_finite(t, msg, name=None, x=None, message=None) -> Tensor:
    """``check_numerics`` under TF's other name (``x``/``message`` are its v2 spellings).

    >>> tf.debugging.assert_all_finite(tf.constant([1.0]), "finite")
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.], dtype=float32)>
    """
    t = t if x is None else x
    return check_numerics(t, msg if message is None else message)


def Assert(condition, data, summarize=None, name=None) -> Tensor | None:  # noqa: N802  (TF's name)
    """Raise InvalidArgumentError with ``data`` printed if ``condition`` is False.

    >>> tf.debugging.Assert(tf.constant(True), ["never shown"])
    """
    condition = m._tensor(condition)
    if is_symbolic(condition):
        return _check(condition, condition, "assertion failed")
    if not bool(np.asarray(condition)):
        shown = "\n".join(", ".join(str(v) for v in np.asarray(d).ravel()[:summarize])
                           if hasattr(d, "shape") else str(d) for d in data)
        raise InvalidArgumentError(f"Expected 'False' to be true. Summarized data: {shown}")
    return None


def _binary(symbol, compare, doc):
    def fn(x, y, message=None, summarize=None, name=None) -> Tensor | None:
        x = m._tensor(x)
        y = m._tensor(y, dtype_hint=x.dtype)
        prefix = f"{message}\n" if message else ""
        text = (f"{prefix}Condition x {symbol} y did not hold element-wise:")
        if not (is_symbolic(x) or is_symbolic(y)):
            text += f"\nx = {_summary(x, summarize)}\ny = {_summary(y, summarize)}"
        return _check(compare(x, y), x, text)
    fn.__doc__ = doc
    return fn


assert_equal = _binary("==", m.equal, """InvalidArgumentError unless ``x == y`` everywhere (broadcasting).

    >>> tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2]))
    """)
assert_none_equal = _binary("!=", m.not_equal, """InvalidArgumentError unless ``x != y`` everywhere.

    >>> tf.debugging.assert_none_equal(tf.constant([1, 2]), 3)
    """)
assert_less = _binary("<", m.less, """InvalidArgumentError unless ``x < y`` everywhere.

    >>> tf.debugging.assert_less(tf.constant([1, 2]), 3)
    """)
assert_less_equal = _binary("<=", m.less_equal, """InvalidArgumentError unless ``x <= y`` everywhere.

    >>> tf.debugging.assert_less_equal(tf.constant([1, 3]), 3)
    """)
assert_greater = _binary(">", m.greater, """InvalidArgumentError unless ``x > y`` everywhere.

    >>> tf.debugging.assert_greater(tf.constant([4, 5]), 3)
    """)
assert_greater_equal = _binary(">=", m.greater_equal, """InvalidArgumentError unless ``x >= y`` everywhere.

    >>> tf.debugging.assert_greater_equal(tf.constant([3, 5]), 3)
    """)
for _f, _n in ((assert_equal, "assert_equal"), (assert_none_equal, "assert_none_equal"),
               (assert_less, "assert_less"), (assert_less_equal, "assert_less_equal"),
               (assert_greater, "assert_greater"), (assert_greater_equal, "assert_greater_equal")):
    _f.__name__ = _f.__qualname__ = _n


def _against_zero(binary, name, doc):
    def fn(x, message=None, summarize=None, name=None) -> Tensor | None:
        x = m._tensor(x)
        return binary(x, m.constant_like(0, x), message=message, summarize=summarize)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


assert_negative = _against_zero(assert_less, "assert_negative", """Unless ``x < 0`` everywhere: InvalidArgumentError.

    >>> tf.debugging.assert_negative(tf.constant([-1.0]))
    """)
assert_positive = _against_zero(assert_greater, "assert_positive", """Unless ``x > 0`` everywhere: InvalidArgumentError.

    >>> tf.debugging.assert_positive(tf.constant([1.0]))
    """)
assert_non_negative = _against_zero(assert_greater_equal, "assert_non_negative", """Unless ``x >= 0`` everywhere: InvalidArgumentError.

    >>> tf.debugging.assert_non_negative(tf.constant([0.0]))
    """)
assert_non_positive = _against_zero(assert_less_equal, "assert_non_positive", """Unless ``x <= 0`` everywhere: InvalidArgumentError.

    >>> tf.debugging.assert_non_positive(tf.constant([0.0]))
    """)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None) -> Tensor | None:
    """InvalidArgumentError unless ``|x - y| <= atol + rtol * |y|`` everywhere (defaults:
    10 machine epsilons of the dtype, as TF).

    >>> tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))
    """
    x = m._tensor(x)
    y = m._tensor(y, dtype_hint=x.dtype)
    eps = float(np.finfo(x.dtype.np).eps) if x.dtype.is_floating else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    tol = m.add(m.constant_like(atol, x), m.multiply(m.constant_like(rtol, x), m.abs(y)))
    prefix = f"{message}\n" if message else ""
    return _check(m.less_equal(m.abs(m.subtract(x, y)), tol), x,
                  f"{prefix}x and y not equal to tolerance rtol = {rtol}, atol = {atol}")


def _static_rank(x):
    x = m._tensor(x)
    return x, len(x.shape)


def assert_rank(x, rank, message=None, name=None) -> None:
    """ValueError unless ``x`` has rank ``rank`` (checked from the static shape).

    >>> tf.debugging.assert_rank(tf.zeros([2, 3]), 2)
    """
    x, r = _static_rank(x)
    if r != int(rank):
        raise ValueError(f"{message + '. ' if message else ''}Tensor must have rank {int(rank)}. "
                         f"Received rank {r}, shape {list(x.shape)}")


def assert_rank_at_least(x, rank, message=None, name=None) -> None:
    """ValueError unless ``x``'s rank is at least ``rank``.

    >>> tf.debugging.assert_rank_at_least(tf.zeros([2, 3]), 1)
    """
    x, r = _static_rank(x)
    if r < int(rank):
        raise ValueError(f"{message + '. ' if message else ''}Tensor must have rank at least "
                         f"{int(rank)}. Received rank {r}, shape {list(x.shape)}")


def assert_rank_in(x, ranks, message=None, name=None) -> None:
    """ValueError unless ``x``'s rank is one of ``ranks``.

    >>> tf.debugging.assert_rank_in(tf.zeros([2]), [1, 2])
    """
    x, r = _static_rank(x)
    ranks = [int(v) for v in ranks]
    if r not in ranks:
        raise ValueError(f"{message + '. ' if message else ''}Tensor must have rank in {ranks}. "
                         f"Received rank {r}, shape {list(x.shape)}")


def assert_scalar(tensor, message=None, name=None) -> Tensor:
    """ValueError unless ``tensor`` is a scalar; returns it.

    >>> tf.debugging.assert_scalar(tf.constant(1.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    tensor = m._tensor(tensor)
    if len(tensor.shape) != 0:
        raise ValueError(f"{message + ' ' if message else ''}Expected scalar shape, saw shape: "
                         f"{tuple(tensor.shape)}.")
    return tensor


def assert_integer(x, message=None, name=None) -> None:
    """TypeError unless ``x`` has an integer dtype.

    >>> tf.debugging.assert_integer(tf.constant([1, 2]))
    """
    x = m._tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(f"{message + ' ' if message else ''}Expected integer type, got "
                        f"{x.dtype.name}")


def assert_type(tensor, tf_type, message=None, name=None) -> None:
    """TypeError unless ``tensor`` has dtype ``tf_type``.

    >>> tf.debugging.assert_type(tf.constant(1.0), tf.float32)
    """
    tensor = m._tensor(tensor)
    if tensor.dtype != D.as_dtype(tf_type):
        raise TypeError(f"{message + ' ' if message else ''}{tensor.dtype.name} must be "
                        f"{D.as_dtype(tf_type).name}")


def assert_same_float_dtype(tensors=None, dtype=None) -> D.DType:
    """The one floating dtype of ``tensors`` (and ``dtype``); ValueError if they differ or are
    not floating (float32 when there is nothing to look at).

    >>> tf.debugging.assert_same_float_dtype([tf.constant(1.0), tf.constant(2.0)])
    tf.float32
    """
    found = D.as_dtype(dtype) if dtype is not None else None
    for t in tensors or []:
        dt = m._tensor(t).dtype
        if found is None:
            found = dt
        elif dt != found:
            raise ValueError(f"Expected {found.name}, got {dt.name}")
    if found is None:
        return D.float32
    if not found.is_floating:
        raise ValueError(f"Expected floating point type, got {found.name}")
    return found


def assert_proper_iterable(values) -> None:
    """TypeError if ``values`` is a tensor, an array, a string or not iterable.

    >>> tf.debugging.assert_proper_iterable([1, 2])
    """
    if isinstance(values, (Tensor, np.ndarray, str, bytes)) or hasattr(values, "aval"):
        raise TypeError(f"Expected argument \"values\" to be a \"proper\" iterable.  Found: "
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument \"values\" to be iterable.  Found: {type(values)}")


def is_numeric_tensor(tensor) -> bool:
    """Whether ``tensor`` is a tensor of a numeric (not bool) dtype.

    >>> tf.debugging.is_numeric_tensor(tf.constant([1, 2])), tf.debugging.is_numeric_tensor(3)
    (True, False)
    """
    return (isinstance(tensor, Tensor) or hasattr(tensor, "aval")) and \
        (tensor.dtype.is_floating or tensor.dtype.is_integer)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None) -> None:
    """ValueError unless each tensor's shape matches its spec and named dims agree throughout.

    A spec is a list of ints (sizes), strings (a named size, the same everywhere) and ``"."``
    (any size); a leading ``"..."`` lets any number of leading dims through.

    >>> tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N", 3)), (tf.zeros([2]), ("N",))])
    """
    sizes = {}
    items = shapes.items() if isinstance(shapes, dict) else shapes
    for x, spec in items:
        shape = list(m._tensor(x).shape)
        spec = list(spec) if not isinstance(spec, str) else [spec]
        if spec and spec[0] == "...":
            spec = spec[1:]
            if len(shape) < len(spec):
                raise ValueError(f"{message or ''} Specified by tensor {x} dimension -1. Tensor "
                                 f"rank {len(shape)} is smaller than specified {len(spec)}")
            shape = shape[len(shape) - len(spec):]
        elif len(shape) != len(spec):
            raise ValueError(f"{message or ''} Specified by tensor {x} dimension 0. Tensor "
                             f"rank {len(shape)} is not equal to {len(spec)}")
        for i, (s, d) in enumerate(zip(spec, shape)):
            if s == "." or d is None:
                continue
            if isinstance(s, str):
                if sizes.setdefault(s, d) != d:
                    raise ValueError(f"{message or ''} Specified by tensor {x} dimension {i}. "
                                     f"Tensor dimension {s} must have size {sizes[s]}. "
                                     f"Received size {d}, shape {shape}")
            elif int(s) != d:
                raise ValueError(f"{message or ''} Specified by tensor {x} dimension {i}. "
                                 f"Tensor dimension must have size {int(s)}. Received size {d}, "
                                 f"shape {shape}")


__all__ = ["check_numerics", "assert_all_finite", "Assert", "assert_equal", "assert_none_equal",
           "assert_less", "assert_less_equal", "assert_greater", "assert_greater_equal",
           "assert_negative", "assert_positive", "assert_non_negative", "assert_non_positive",
           "assert_near", "assert_rank", "assert_rank_at_least", "assert_rank_in",
           "assert_scalar", "assert_integer", "assert_type", "assert_same_float_dtype",
           "assert_proper_iterable", "is_numeric_tensor", "assert_shapes"]
