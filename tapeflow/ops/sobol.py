"""``tf.math.sobol_sample``: TensorFlow's Sobol points, bit for bit.

TensorFlow's SobolSample is the unscrambled Sobol sequence of Joe and Kuo's direction numbers
(new-joe-kuo-6.21201, 32 bits) without its first point (the origin), which is SciPy's
``qmc.Sobol(scramble=False, bits=32)`` after one point: the points are computed by it, in
float64, and rounded to ``dtype`` (TensorFlow 2.21's values, checked in float32 and float64 up
to dimension 21200). The arguments decide the shape, so they must be known while tracing;
the points are then a constant of the traced program.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from ..ir import dtypes as D
from ..runtime.tensor import Tensor, convert_to_tensor
from .dims import is_symbolic

MAX_DIM = 21200


def _scalar(value, what):
    if is_symbolic(value):
        raise ValueError(f"sobol_sample: {what} decides the output, so it must be known while "
                         "tracing (a Python int or a constant)")
    v = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if v.ndim != 0 or v.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{what} must be an integer scalar, got {v.tolist()!r}")
    return int(v)


def sobol_sample(dim, num_results, skip=0, dtype=D.float32, name=None) -> Tensor:
    """``num_results`` points of the ``dim``-dimensional Sobol sequence, after ``skip`` of them.

    >>> tf.math.sobol_sample(3, 4)
    <tf.Tensor: shape=(4, 3), dtype=float32, numpy=
    array([[0.5  , 0.5  , 0.5  ],
           [0.75 , 0.25 , 0.25 ],
           [0.25 , 0.75 , 0.75 ],
           [0.375, 0.375, 0.625]], dtype=float32)>
    """
    dtype = D.as_dtype(dtype)
    if dtype not in (D.float32, D.float64):
        raise InvalidArgumentError(f"Value for attr 'dtype' of {dtype.name} is not in the list of "
                                   "allowed values: float, double")
    dim, n, skip = _scalar(dim, "dim"), _scalar(num_results, "num_results"), _scalar(skip, "skip")
    if dim < 1:
        raise InvalidArgumentError("dim must be at least one")
    if dim > MAX_DIM:
        raise InvalidArgumentError(f"dim must be at most {MAX_DIM}")
    if n < 1:
        raise InvalidArgumentError("num_results must be at least one")
    if skip < 0:
        raise InvalidArgumentError("skip must be non-negative")
    if n + skip >= 2**31 - 1:
        raise InvalidArgumentError("num_results+skip must be less than 2147483647")
    from scipy.stats import qmc  # noqa  (import cost: scipy.stats loads only when asked)
    engine = qmc.Sobol(dim, scramble=False, bits=32)
    engine.fast_forward(skip + 1)
    return convert_to_tensor(engine.random(n).astype(dtype.np))


__all__ = ["sobol_sample"]
