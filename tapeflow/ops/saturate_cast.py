"""``tf.saturate_cast``: a cast that clamps to the target's range first, as TensorFlow's
composite does (clip, then Cast), with its limits nudged inward where the input dtype cannot
hold the target's bound exactly (float32 -> int32 saturates at 2147483520)."""
from __future__ import annotations

import numpy as np

from ..ir import dtypes as D
from ..runtime.tensor import Tensor, constant
from . import math
from .clip import clip_by_value


def _limits(in_dt, out_dt):
    """TensorFlow's clamp bounds (``math_ops.saturate_cast``): in ``in_dt``, within ``out_dt``."""
    np_dtype = in_dt.np.type
    promoted = np.promote_types(in_dt.np, out_dt.np)
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np_dtype(np.maximum(in_dt.min, out_dt.min))
        if np.array([lo, out_dt.min], dtype=promoted)[0] < np.array([lo, out_dt.min],
                                                                     dtype=promoted)[1]:
            lo = np.nextafter(lo, np_dtype(0), dtype=np_dtype)
        hi = np_dtype(np.minimum(float(in_dt.max), float(out_dt.max)))
        if np.array([hi, out_dt.max], dtype=promoted)[0] > np.array([hi, out_dt.max],
                                                                     dtype=promoted)[1]:
            hi = np.nextafter(hi, np_dtype(0), dtype=np_dtype)
    return lo, hi


def saturate_cast(value, dtype, name=None) -> Tensor:
    """``value`` cast to ``dtype`` without overflow: values beyond ``dtype``'s range become
    its largest or smallest value.

    >>> tf.saturate_cast(tf.constant([1.5, 300.0, -300.0]), tf.uint8)
    <tf.Tensor: shape=(3,), dtype=uint8, numpy=array([  1, 255,   0], dtype=uint8)>
    >>> tf.saturate_cast(tf.constant([70000, -70000]), tf.int16)
    <tf.Tensor: shape=(2,), dtype=int16, numpy=array([ 32767, -32768], dtype=int16)>
    """
    value = math._tensor(value)
    out = D.as_dtype(dtype)
    in_dt = value.dtype
    if in_dt.is_bool or out.is_bool:
        return math.cast(value, out)
    lo, hi = _limits(in_dt, out)
    value = clip_by_value(value, constant(lo, dtype=in_dt), constant(hi, dtype=in_dt))
    return math.cast(value, out)


__all__ = ["saturate_cast"]
