"""TensorFlow's generic Conv op (``tf.conv``): Conv2D or Conv3D on an input with
``batch_dims`` leading batch dimensions (folded into one by the kernel), channels last.

TensorFlow registers no gradient for it (its ``LookupError``), and its CPU kernel refuses
grouped filters and channels-first data (UnimplementedError, raised by ops/conv_raw.py).
"""
from ...errors import InferError
from ..opdef import AVal, check_dtype, check_same_dtype, defop
from .conv import CONV_DTYPES, _check_window_attrs, _conv_out

ATTRS = {"strides": "ints", "padding": "str", "explicit_paddings": "ints",
         "dilations": "ints", "batch_dims": "int"}


def window_attrs(attrs, n):
    """The Conv2D/Conv3D attributes of a Conv op with ``n`` spatial dimensions."""
    out = {"strides": tuple(attrs["strides"]), "padding": attrs["padding"],
           "dilations": tuple(attrs.get("dilations") or (1,) * (n + 2))}
    if n == 2:
        out["explicit_paddings"] = tuple(attrs.get("explicit_paddings") or ())
    return out


def spatial(x_shape, batch_dims):
    return len(x_shape) - batch_dims - 1


def _infer(avals, strides, padding, explicit_paddings=(), dilations=(), batch_dims=1):
    x, w = avals
    dt = check_same_dtype(avals)
    check_dtype(x, CONV_DTYPES)
    n = spatial(x.shape, batch_dims)
    if n not in (2, 3):
        raise InferError(f"The input must have 2 or 3 spatial dimensions but got {n}")
    if len(w.shape) != n + 2:
        raise InferError(f"filter must be {n + 2}-dimensional: {list(w.shape)}")
    if n == 3 and padding == "EXPLICIT":
        raise InferError("Conv3D has no explicit padding (TensorFlow's CPU kernel aborts on it)")
    a = window_attrs({"strides": strides, "padding": padding, "dilations": dilations,
                      "explicit_paddings": explicit_paddings}, n)
    _check_window_attrs("Conv", n + 2, a["strides"], a["padding"],
                        a.get("explicit_paddings") or (), a["dilations"])
    folded = (None,) + tuple(x.shape[batch_dims:])
    out = _conv_out(folded, w.shape, a, False)
    return AVal(tuple(x.shape[:batch_dims]) + tuple(out[1:]), dt)


def _rows(attrs, flags, in_avals, out_avals):
    return flags[0] and not flags[1] and attrs.get("batch_dims", 1) >= 1


defop("Conv", _infer, arity=2, attrs=dict(ATTRS), same_dtype=(0, 1), keeps_rows=_rows)
