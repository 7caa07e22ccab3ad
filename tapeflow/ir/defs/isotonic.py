"""IsotonicRegression (TensorFlow's op): each row (the last axis) replaced by its best
non-increasing fit in the squared error, and the int32 ids of its constant segments."""
from ...errors import InferError
from .. import dtypes as D
from ..opdef import AVal, defop

# TensorFlow's kernels: the input dtype decides the output's
OUTPUT_DTYPE = {D.float16: D.float16, D.float32: D.float32, D.float64: D.float64,
                D.int8: D.float32, D.int16: D.float32, D.int32: D.float64, D.int64: D.float64}


def _isotonic(avals):
    """TensorFlow's ``output_dtype`` attribute is decided by the input's dtype (its only
    kernels), so it is no attribute here."""
    (x,) = avals
    want = OUTPUT_DTYPE.get(x.dtype)
    if want is None:
        names = ", ".join(d.name for d in OUTPUT_DTYPE)
        raise InferError(f"input has dtype {x.dtype.name}, expected one of: {names}")
    return AVal(x.shape, want), AVal(x.shape, D.int32)


def _keeps_rows(attrs, flags, in_avals, out_avals):
    """Rows of the leading axis stay apart unless the input is 1-D (one problem)."""
    return len(in_avals[0].shape) >= 2


defop("IsotonicRegression", _isotonic, multi_output=True,
      keeps_rows=_keeps_rows)
