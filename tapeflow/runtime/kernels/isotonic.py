"""NumPy kernel of IsotonicRegression: TensorFlow's pool-adjacent-violators solver
(isotonic_regression_op.cc), in the output dtype: a pool keeps the sum of its inputs and its
mean ``sum / count``; a new pool merges into the previous while its mean is larger."""
import numpy as np

from ...ir import dtypes as D
from ...ir.defs.isotonic import OUTPUT_DTYPE
from ..registry import kernel


def pava_row(y, out, seg):
    """Solve one row ``y`` (already in the output dtype) into ``out`` and ``seg``."""
    starts, sums, means = [], [], []
    for c, v in enumerate(y):
        starts.append(c)
        sums.append(v)
        means.append(v)
        while len(means) > 1 and means[-1] > means[-2]:
            sums[-2] = sums[-2] + sums[-1]
            count = c + 1 - starts[-2]
            means[-2] = sums[-2] / y.dtype.type(count)
            del starts[-1], sums[-1], means[-1]
    starts.append(len(y))
    for k, mean in enumerate(means):
        out[starts[k]:starts[k + 1]] = mean
        seg[starts[k]:starts[k + 1]] = k


@kernel("IsotonicRegression")
def _isotonic(x):
    x = np.asarray(x)
    output_dtype = OUTPUT_DTYPE[D.as_dtype(x.dtype)]
    rows, n = (int(np.prod(x.shape[:-1], dtype=np.int64)), x.shape[-1]) if x.ndim else (1, 1)
    y = x.astype(output_dtype.np).reshape((rows, n))
    out = np.empty_like(y)
    seg = np.empty(y.shape, np.int32)
    for r in range(y.shape[0]):
        pava_row(y[r], out[r], seg[r])
    return out.reshape(x.shape), seg.reshape(x.shape)
