"""``tf.debugging``'s checks: ``check_numerics``, ``Assert`` and the ``assert_*`` family.

As in TensorFlow, a check on values runs now when they are known (eagerly, or on constants
while tracing) and raises TensorFlow's eager message; on traced values it becomes an
``Assert`` op that checks when the program runs, compiled too, with TensorFlow's graph
message ("assertion failed: [...]"). Checks on shapes, ranks and dtypes are static and raise
at once (``ValueError``/``TypeError``), as TensorFlow's do whenever the shape is known.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..runtime import numerics_check
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable, convert_to_tensor
from . import array, math, reduce


def _symbolic(x):
    return hasattr(x, "aval") and not isinstance(x, (Tensor, Variable))


def _tensor(x, dtype=None):
    return math._tensor(x) if dtype is None else convert_to_tensor(x, dtype=dtype)


def _shape_and_dtype(x):
    return f"shape={x.shape} dtype={x.dtype.name}"


def _message_prefix(message):
    return f"{message}.  " if message else ""


def check_numerics(tensor, message: str, name=None) -> Tensor:
    """``tensor``, checked to hold no NaN or infinity: InvalidArgumentError ("``message`` :
    Tensor had NaN values") otherwise, now or (in a function) when the program runs. Its
    gradient is checked the same way.

    >>> tf.debugging.check_numerics(tf.constant([1.0, 2.0]), "x")
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return apply("CheckNumerics", [tensor], {"message": str(message)})


def assert_all_finite(x, message: str, name=None) -> Tensor:
    """``check_numerics(x, message)``: ``x``, once known to hold no NaN or infinity.

    >>> tf.debugging.assert_all_finite(tf.constant([1.0]), "x")
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.], dtype=float32)>
    """
    return check_numerics(x, message)


# -- Assert --------------------------------------------------------------------------------

def _summarize_eager(x, summarize):
    """A data tensor in TensorFlow's eager Assert message (``_summarize_eager``)."""
    summarize = 3 if summarize is None else summarize
    if isinstance(x, _Text):
        return str(x.numpy())
    a = np.asarray(x.numpy())
    if a.ndim:
        flat = a.reshape(-1)
        limit = flat.size if summarize < 0 else summarize
        items = [str(v) for v in flat[:limit]]
        if len(items) < flat.size:
            items.append("...")
        return ", ".join(items)
    return str(a[()]) if summarize != 0 else ""


class _Text:
    """A string among Assert's data (tapeflow has no string tensors): numpy() is its bytes,
    as TensorFlow's string tensor gives."""

    def __init__(self, text):
        self.text = text

    def numpy(self):
        return self.text.encode()


def _data_item(d):
    return _Text(d) if isinstance(d, str) else d if _symbolic(d) else _tensor(d)


def Assert(condition, data, summarize: int | None = None, name=None) -> None:  # noqa: N802
    """Check that ``condition`` holds; if not, raise InvalidArgumentError showing ``data`` (a
    list of tensors and strings, the first ``summarize`` entries of each; 3 by default).
    Eagerly now; on a traced condition, when the program runs (compiled too), with
    TensorFlow's graph message "assertion failed: [...] [...]".

    >>> tf.debugging.Assert(tf.constant(True), ["never shown"])
    >>> tf.debugging.Assert(False, [tf.constant([1.0, 2.0, 3.0, 4.0]), "x"])
    Traceback (most recent call last):
    ...
    tapeflow.errors.InvalidArgumentError: Expected 'False' to be true. Summarized data: 1.0, 2.0, 3.0, ...
    b'x'
    """
    items = [_data_item(d) for d in data]
    if not _symbolic(condition) and not any(_symbolic(d) for d in items):
        cond = condition if isinstance(condition, (bool, np.bool_)) else _tensor(condition)
        if not bool(np.all(np.asarray(cond.numpy() if isinstance(cond, Tensor) else cond))):
            text = "\n".join(_summarize_eager(d, summarize) for d in items)
            raise InvalidArgumentError(None, None,
                                       f"Expected '{cond}' to be true. Summarized data: {text}")
        return None
    _emit_assert(condition, data, summarize)
    return None


def _emit_assert(condition, data, summarize):
    """The Assert op: the strings of ``data`` in its template, its tensors as inputs."""
    parts, tensors = [], []
    for d in data:
        if isinstance(d, str):
            parts.append("[" + d.replace("{", "{{").replace("}", "}}") + "]")
        else:
            tensors.append(_tensor(d))
            parts.append("[{}]")
    cond = _tensor(condition, dtype=D.bool_) if not _symbolic(condition) else condition
    if len(cond.shape) != 0:
        cond = reduce.reduce_all(cond)
    apply("Assert", [cond, *tensors],
          {"template": " ".join(parts), "summarize": 3 if summarize is None else int(summarize)})


# -- comparisons ---------------------------------------------------------------------------

def _pretty(item, summarize):
    """A data tensor in TensorFlow's eager comparison message (``_pretty_print``)."""
    if isinstance(item, Tensor):
        arr = np.asarray(item.numpy())
        if arr.ndim == 0:
            return str(arr[()])
        flat = arr.reshape(-1)
        items = [str(v) for v in flat[:summarize]]
        if len(items) < flat.size:
            items.append("...")
        return str(items)
    return str(item)


def _eager_failure_data(sym, x, y, summarize, ok):
    """TensorFlow's ``_make_assert_msg_data``: the first differing values and elements."""
    data = [f"Condition x {sym} y did not hold."]
    if summarize > 0:
        xs, ys = x.numpy(), y.numpy()
        if x.shape == y.shape and len(x.shape):
            bad = ~ok
            idx = np.argwhere(bad)
            n = min(summarize, idx.shape[0])
            data += [f"Indices of first {n} different values:", idx[:n],
                     "Corresponding x values:", xs[bad].reshape(-1)[:n],
                     "Corresponding y values:", ys[bad].reshape(-1)[:n]]
        xf, yf = np.asarray(xs).reshape(-1), np.asarray(ys).reshape(-1)
        data += [f"First {min(xf.size, summarize)} elements of x:", xf[:summarize],
                 f"First {min(yf.size, summarize)} elements of y:", yf[:summarize]]
    return data


def _binary(sym, op, x, y, data, summarize, message, what=None):
    """TensorFlow's ``_binary_assert``: eagerly, the failing values; traced, an Assert op."""
    x = _tensor(x)
    y = _tensor(y, dtype=x.dtype) if not _symbolic(y) and not isinstance(y, Tensor) else _tensor(y)
    test = op(x, y)
    if not _symbolic(test):
        ok = np.asarray(test.numpy())
        if ok.all():
            return None
        summarize = 3 if summarize is None else (10**9 if summarize < 0 else summarize)
        if data is None:
            data = _eager_failure_data(sym, x, y, summarize, ok)
        if message is not None:
            data = [message] + list(data)
        raise InvalidArgumentError(None, None, "\n".join(
            _pretty(d, summarize) if isinstance(d, Tensor) else str(d) for d in data))
    if data is None:
        data = [f"Condition x {sym} y did not hold element-wise:", f"x ({_name(x)}) = ", x,
                f"y ({_name(y)}) = ", y]
    if message is not None:
        data = [message] + list(data)
    _emit_assert(reduce.reduce_all(test), data, summarize)
    return None


def _name(x):
    return getattr(x, "name", None) or _shape_and_dtype(x)


def assert_equal(x, y, message: str | None = None, summarize: int | None = None,
                 name=None) -> None:
    """Check ``x == y`` elementwise (broadcasting), with TensorFlow's messages: eagerly
    the first differing values; in a function, at run time.

    >>> tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2]))
    """
    return _binary("==", math.equal, x, y, None, summarize, message)


def assert_none_equal(x, y, summarize: int | None = None, message: str | None = None,
                      name=None) -> None:
    """Check ``x != y`` elementwise.

    >>> tf.debugging.assert_none_equal(tf.constant([1, 2]), tf.constant([3, 4]))
    """
    return _binary("!=", math.not_equal, x, y, None, summarize, message)


def assert_less(x, y, message: str | None = None, summarize: int | None = None,
                name=None) -> None:
    """Check ``x < y`` elementwise.

    >>> tf.debugging.assert_less(tf.constant([1, 2]), tf.constant([3, 4]))
    """
    return _binary("<", math.less, x, y, None, summarize, message)


def assert_less_equal(x, y, message: str | None = None, summarize: int | None = None,
                      name=None) -> None:
    """Check ``x <= y`` elementwise.

    >>> tf.debugging.assert_less_equal(tf.constant([1, 2]), tf.constant([1, 4]))
    """
    return _binary("<=", math.less_equal, x, y, None, summarize, message)


def assert_greater(x, y, message: str | None = None, summarize: int | None = None,
                   name=None) -> None:
    """Check ``x > y`` elementwise.

    >>> tf.debugging.assert_greater(tf.constant([3, 4]), tf.constant([1, 2]))
    """
    return _binary(">", math.greater, x, y, None, summarize, message)


def assert_greater_equal(x, y, message: str | None = None, summarize: int | None = None,
                         name=None) -> None:
    """Check ``x >= y`` elementwise.

    >>> tf.debugging.assert_greater_equal(tf.constant([3, 4]), tf.constant([3, 2]))
    """
    return _binary(">=", math.greater_equal, x, y, None, summarize, message)


def _sign(x, message, summarize, sym, op, zero_left, joined=False):
    """assert_positive & co: TensorFlow's data list around a comparison with zero."""
    x = _tensor(x)
    head = f"Condition x {sym} 0 did not hold element-wise:"
    label = f"x ({_name(x) if _symbolic(x) else _shape_and_dtype(x)}) = "
    data = [_message_prefix(message)] + ([head + label] if joined else [head, label]) + [x]
    zero = convert_to_tensor(0, dtype=x.dtype)
    a, b = (zero, x) if zero_left else (x, zero)
    return _binary(sym, op, a, b, data, summarize, None)


def assert_positive(x, message: str | None = None, summarize: int | None = None,
                    name=None) -> None:
    """Check ``x > 0`` elementwise.

    >>> tf.debugging.assert_positive(tf.constant([1, 2]))
    """
    return _sign(x, message, summarize, ">", math.less, True)


def assert_negative(x, message: str | None = None, summarize: int | None = None,
                    name=None) -> None:
    """Check ``x < 0`` elementwise.

    >>> tf.debugging.assert_negative(tf.constant([-1, -2]))
    """
    return _sign(x, message, summarize, "<", math.less, False)


def assert_non_negative(x, message: str | None = None, summarize: int | None = None,
                        name=None) -> None:
    """Check ``x >= 0`` elementwise.

    >>> tf.debugging.assert_non_negative(tf.constant([0, 2]))
    """
    return _sign(x, message, summarize, ">=", math.less_equal, True)


def assert_non_positive(x, message: str | None = None, summarize: int | None = None,
                        name=None) -> None:
    """Check ``x <= 0`` elementwise. (TensorFlow's message joins two of its lines here; so
    does this one.)

    >>> tf.debugging.assert_non_positive(tf.constant([0, -2]))
    """
    return _sign(x, message, summarize, "<=", math.less_equal, False, joined=True)


def assert_near(x, y, rtol=None, atol=None, message: str | None = None,
                summarize: int | None = None, name=None) -> None:
    """Check ``|x - y| < atol + rtol * |y|`` elementwise (both ``10 * eps`` of the dtype by
    default), with TensorFlow's message.

    >>> tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))
    """
    message = _message_prefix(message)
    x = _tensor(x)
    y = _tensor(y, dtype=x.dtype) if not _symbolic(y) and not isinstance(y, Tensor) else _tensor(y)
    eps = np.finfo(x.dtype.np).eps
    rtol = convert_to_tensor(10 * eps if rtol is None else rtol, dtype=x.dtype)
    atol = convert_to_tensor(10 * eps if atol is None else atol, dtype=x.dtype)
    traced = _symbolic(x) or _symbolic(y)
    xn, yn = (_name(x), _name(y)) if traced else (_shape_and_dtype(x), _shape_and_dtype(y))
    data = [message, f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
            f"x ({xn}) = ", x, f"y ({yn}) = ", y]
    cond = reduce.reduce_all(math.less(math.abs(x - y), atol + rtol * math.abs(y)))
    return Assert(cond, data, summarize=summarize)


# -- static checks -------------------------------------------------------------------------

def _static_name(x):
    return x.name if _symbolic(x) else ""


def assert_rank(x, rank, message: str | None = None, name=None) -> None:
    """Check that ``x`` has rank ``rank`` (known when traced: a ValueError at once).

    >>> tf.debugging.assert_rank(tf.zeros([2, 3]), 2)
    """
    x = _tensor(x)
    if len(x.shape) != int(rank):
        raise ValueError(f"{_message_prefix(message)}Tensor {_static_name(x)} must have rank "
                         f"{int(rank)}.  Received rank {len(x.shape)}, shape {x.shape}")


def assert_rank_at_least(x, rank, message: str | None = None, name=None) -> None:
    """Check that ``x`` has rank ``rank`` or more.

    >>> tf.debugging.assert_rank_at_least(tf.zeros([2, 3]), 1)
    """
    x = _tensor(x)
    if len(x.shape) < int(rank):
        raise ValueError(f"{_message_prefix(message)}Tensor {_static_name(x)} must have rank "
                         f"at least {int(rank)}.  Received rank {len(x.shape)}, shape {x.shape}")


def assert_rank_in(x, ranks, message: str | None = None, name=None) -> None:
    """Check that the rank of ``x`` is one of ``ranks``.

    >>> tf.debugging.assert_rank_in(tf.zeros([2]), [1, 2])
    """
    x = _tensor(x)
    ranks = tuple(int(r) for r in ranks)
    if len(x.shape) not in ranks:
        raise ValueError(f"{_message_prefix(message)}Tensor {_static_name(x)} must have rank in "
                         f"{ranks}.  Received rank {len(x.shape)}, shape {x.shape}")


def assert_scalar(tensor, message: str | None = None, name=None) -> None:
    """Check that ``tensor`` is a scalar (ValueError otherwise).

    >>> tf.debugging.assert_scalar(tf.constant(1.0))
    """
    tensor = _tensor(tensor)
    if len(tensor.shape) != 0:
        where = f" for {tensor.name}" if _symbolic(tensor) else ""
        raise ValueError(f"{_message_prefix(message)}Expected scalar shape{where}, saw shape: "
                         f"{tensor.shape}.")


def assert_type(tensor, tf_type, message: str | None = None, name=None) -> None:
    """Check that ``tensor``'s dtype is ``tf_type`` (TypeError otherwise).

    >>> tf.debugging.assert_type(tf.constant([1.0]), tf.float32)
    """
    tf_type = D.as_dtype(tf_type)
    tensor = _tensor(tensor)
    if tensor.dtype != tf_type:
        label = tensor.name if _symbolic(tensor) else "tensor"
        raise TypeError(f"{_message_prefix(message)}{label} must be of type {tf_type!r}; got "
                        f"{tensor.dtype!r}")


def assert_integer(x, message: str | None = None, name=None) -> None:
    """Check that ``x`` has an integer dtype (TypeError otherwise).

    >>> tf.debugging.assert_integer(tf.constant([1]))
    """
    x = _tensor(x)
    if not x.dtype.is_integer:
        label = x.name if _symbolic(x) else "tensor"
        raise TypeError(f'{_message_prefix(message)}Expected "x" to be integer type.  Found: '
                        f"{label} of dtype {x.dtype}")


def assert_same_float_dtype(tensors=None, dtype=None) -> D.DType:
    """The floating dtype ``tensors`` (and ``dtype``, if given) share: float32 if there is
    nothing to go by; ValueError if they differ or are not floating.

    >>> tf.debugging.assert_same_float_dtype([tf.constant([1.0]), tf.constant(2.0)])
    tf.float32
    """
    expected = None if dtype is None else D.as_dtype(dtype)
    first = None
    for item in tensors or ():
        if item is None:
            continue
        t = item.dtype
        if expected is None:
            expected, first = t, (item.name if _symbolic(item) else str(item))
        elif t != expected:
            label = item.name if _symbolic(item) else str(item)
            raise ValueError(f"{label}, type={t}, must be of the same type ({expected})"
                             + (f" as {first}" if first and dtype is None else "") + ".")
    if expected is None:
        return D.float32
    if not expected.is_floating:
        raise ValueError(f"Expected floating point type, got {expected}.")
    return expected


def _known(size):
    try:
        int(size)
    except (TypeError, ValueError):
        return False
    return size is not None


def _sizes(x):
    """The sizes of ``x``'s dims (ints, or scalar tensors where the trace does not know
    them); a scalar counts as one dim of size 1, as in TensorFlow."""
    if len(x.shape) == 0:
        return (1,)
    shape = None
    out = []
    for i, d in enumerate(x.shape):
        if d is None:
            if shape is None:
                shape = array.shape(x)
            out.append(shape[i])
        else:
            out.append(int(d))
    return out


def assert_shapes(shapes, data=None, summarize: int | None = None,
                  message: str | None = None, name=None) -> None:
    """Check the shapes of several tensors against each other: ``shapes`` is a list (or dict)
    of ``(tensor, shape)`` whose shape entries are ints, symbols (the same symbol means the
    same size everywhere), None or "." (any size), with a leading "..." or "*" for any
    number of outer dims. Known sizes are checked now (ValueError, TensorFlow's message);
    sizes a trace does not know are checked when the program runs.

    >>> n = tf.zeros([3])
    >>> tf.debugging.assert_shapes([(n, ("N",)), (tf.zeros([3, 2]), ("N", 2))])
    """
    if isinstance(shapes, dict):
        shapes = shapes.items()
    prefix = _message_prefix(message)
    constraints = [(_tensor(x), s) for x, s in shapes if s is not None]

    def label(x):
        return x.name if _symbolic(x) else _shape_and_dtype(x)

    entries = []
    for x, spec in constraints:
        if not (hasattr(spec, "__iter__") or hasattr(spec, "__getitem__")):
            raise ValueError(f"{prefix}Tensor {label(x)}.  Specified shape must be an iterable.  "
                             f"An iterable has the attribute `__iter__` or `__getitem__`.  "
                             f"Received specified shape: {spec}")
        spec = tuple(spec)
        outer = False
        for i, sym in enumerate(spec):
            if sym is Ellipsis or (isinstance(sym, str) and sym == "*"):
                if i != 0:
                    raise ValueError(f"{prefix}Tensor {label(x)} specified shape index {i}.  "
                                     f"Symbol `...` or `*` for a variable number of unspecified "
                                     f"dimensions is only allowed as the first entry")
                outer = True
        symbols = spec[1:] if outer else spec
        entries.append((x, outer, _sizes(x), symbols or (1,)))
    for x, outer, _, symbols in entries:
        rank = len(symbols)
        if outer:
            if rank > 1:
                assert_rank_at_least(x, rank, message=message)
        elif rank in (0, 1):
            assert_rank_in(x, [0, 1], message=message)
        else:
            assert_rank(x, rank, message=message)
    seen = {}
    for x, outer, actual, symbols in entries:
        for i, sym in enumerate(symbols):
            if sym is None or (isinstance(sym, str) and sym == "."):
                continue
            dim = i - len(symbols) if outer else i
            if _known(sym) or sym in seen:
                if _known(sym):
                    want, why = int(sym), "Specified explicitly"
                else:
                    want, by, at = seen[sym]
                    why = f"Specified by tensor {label(by)} dimension {at}"
                got = actual[dim]
                if _known(got) and _known(want):
                    if int(got) != int(want):
                        raise ValueError(f"{prefix}{why}.  Tensor {label(x)} dimension {dim} "
                                         f"must have size {int(want)}.  Received size "
                                         f"{int(got)}, shape {x.shape}")
                    continue
                _emit_assert(math.equal(got, want), data if data is not None else [
                    prefix, why, f"Tensor {label(x)} dimension", dim, "must have size",
                    want, "Received shape: ",
                    _sizes_tensor(actual)], summarize)
            else:
                seen[sym] = (actual[dim], x, dim)


def _sizes_tensor(actual):
    return array.stack([convert_to_tensor(a) if _known(a) else a for a in actual])


def assert_proper_iterable(values) -> None:
    """Check that ``values`` is an iterable of values, not a tensor, array or string (which
    iterate, but usually by mistake).

    >>> tf.debugging.assert_proper_iterable([1, 2])
    """
    if isinstance(values, (Tensor, Variable, np.ndarray, str, bytes)) or _symbolic(values):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: '
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def is_numeric_tensor(tensor) -> bool:
    """Whether ``tensor`` is a tensor of numbers (a floating or integer dtype; not bool).

    >>> tf.debugging.is_numeric_tensor(tf.constant([1.0])), tf.debugging.is_numeric_tensor([1.0])
    (True, False)
    """
    is_tensor = isinstance(tensor, Tensor) or _symbolic(tensor)
    return bool(is_tensor and (tensor.dtype.is_floating or tensor.dtype.is_integer))


def guarantee_const(input, name=None) -> Tensor:  # noqa: A002
    """``input``, promised constant (TensorFlow's ``GuaranteeConst``: a hint to its graph
    optimizer, deprecated there). Like TensorFlow, no gradient goes through it: a tape
    asked to differentiate it raises LookupError.

    >>> tf.guarantee_const(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
    """
    return apply("GuaranteeConst", [input])


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """Check every op's floating outputs for NaN and infinity from now on: the first op to
    make one raises InvalidArgumentError naming it, its inputs and the user's line, eagerly,
    in functions traced from now on, and in their compiled programs. (TensorFlow's limits
    on its printed stack are accepted and unused: the message names the one line.)

    >>> tf.debugging.enable_check_numerics()
    >>> tf.math.log(tf.constant([0.0, 1.0]))
    Traceback (most recent call last):
    ...
    tapeflow.errors.InvalidArgumentError: ...
    >>> tf.debugging.disable_check_numerics()
    """
    numerics_check.ENABLED[0] = True


def disable_check_numerics() -> None:
    """Stop what ``enable_check_numerics`` started (functions traced meanwhile keep their
    checks).

    >>> tf.debugging.disable_check_numerics()
    """
    numerics_check.ENABLED[0] = False


__all__ = ["check_numerics", "assert_all_finite", "Assert", "assert_equal", "assert_none_equal",
           "assert_less", "assert_less_equal", "assert_greater", "assert_greater_equal",
           "assert_positive", "assert_negative", "assert_non_negative", "assert_non_positive",
           "assert_near", "assert_shapes", "assert_rank", "assert_rank_at_least", "assert_rank_in", "assert_scalar",
           "assert_type", "assert_integer", "assert_same_float_dtype", "assert_proper_iterable",
           "is_numeric_tensor", "enable_check_numerics", "disable_check_numerics"]
# guarantee_const is tf.guarantee_const only (not in tf.debugging): tapeflow/__init__.py
