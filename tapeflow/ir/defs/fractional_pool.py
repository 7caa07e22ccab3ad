"""Fractional pooling (Graham, 2015): TensorFlow's FractionalMaxPool and FractionalAvgPool,
NHWC, and their gradient ops.

Each spatial size ``n`` pools to ``floor(n / ratio)`` (float32 division, TensorFlow's) by
windows of ``n // out`` or one more rows, their boundaries the op's second and third outputs
(the cumulative row and column sequences, int64, ``out + 1`` long, drawn from TensorFlow's
Philox stream of ``seed``/``seed2``: runtime/kernels/fractional_pool.py). A window covers
rows ``[seq[i], seq[i + 1])``, and also row ``seq[i + 1]`` when ``overlapping``.

The gradient ops take the pooled input itself where TensorFlow's FractionalAvgPoolGrad takes
its shape as a tensor (its shape is all they read of it).
"""
import numpy as np

from ...errors import InferError
from ..opdef import AVal, check_dtype, check_same_dtype, defop
from .. import dtypes as D

DTYPES = (D.float32, D.float64, D.int32, D.int64)
ATTRS = {"pooling_ratio": "floats", "pseudo_random": "bool", "overlapping": "bool",
         "deterministic": "bool", "seed": "int", "seed2": "int"}


def output_size(size, ratio):
    """TensorFlow's ``floor(input_size / pooling_ratio)`` in float32."""
    if size is None:
        return None
    return int(np.floor(np.float32(int(size)) / np.float32(ratio)))


def _pool_infer(avals, pooling_ratio, pseudo_random=False, overlapping=False,
                deterministic=False, seed=0, seed2=0):
    (x,) = avals
    check_dtype(x, DTYPES)
    if len(x.shape) != 4:
        raise InferError(f"tensor_in must be 4-dimensional: {list(x.shape)}")
    if len(pooling_ratio) != 4:
        raise InferError("pooling_ratio field must specify 4 dimensions")
    if pooling_ratio[0] != 1.0 or pooling_ratio[3] != 1.0:
        raise InferError("Fractional pooling is not yet supported on the batch nor channel "
                         "dimension.")
    out = [output_size(x.shape[i], pooling_ratio[i]) for i in range(4)]
    for i in (1, 2):
        if out[i] is not None and out[i] <= 0:
            raise InferError(f"pooling_ratio cannot be bigger than input tensor dim size: "
                             f"{pooling_ratio[i]} vs {x.shape[i]}")
    seqs = [None if v is None else v + 1 for v in out[1:3]]
    return (AVal((x.shape[0], out[1], out[2], x.shape[3]), x.dtype),
            AVal((seqs[0],), D.int64), AVal((seqs[1],), D.int64))


def _check_seqs(row, col, out_shape):
    for seq, what in ((row, "row_pooling_sequence"), (col, "col_pooling_sequence")):
        if seq.dtype != D.int64 or len(seq.shape) != 1:
            raise InferError(f"{what} must be a 1-D int64 tensor, got {seq.dtype.name} "
                             f"{list(seq.shape)}")
    for seq, size, what in ((row, out_shape[1], "row"), (col, out_shape[2], "col")):
        if seq.shape[0] is not None and size is not None and int(seq.shape[0]) != int(size) + 1:
            raise InferError(f"{what}_pooling_sequence must have {int(size) + 1} elements, got "
                             f"{seq.shape[0]}")


def _max_grad_infer(avals, overlapping=False):
    x, y, dy, row, col = avals
    dt = check_same_dtype([x, y, dy])
    check_dtype(x, DTYPES)
    if len(x.shape) != 4 or len(y.shape) != 4 or len(dy.shape) != 4:
        raise InferError("orig_input, orig_output and out_backprop must be 4-dimensional")
    _check_seqs(row, col, y.shape)
    return AVal(tuple(x.shape), dt)


def _avg_grad_infer(avals, overlapping=False):
    x, dy, row, col = avals
    check_dtype(dy, DTYPES)
    if len(x.shape) != 4 or len(dy.shape) != 4:
        raise InferError("orig_input and out_backprop must be 4-dimensional")
    _check_seqs(row, col, dy.shape)
    return AVal(tuple(x.shape), dy.dtype)


def _grad_rows(attrs, flags, in_avals, out_avals):
    """Rows are independent; the sequences are shared by every row."""
    return not any(flags[-2:])


for _name in ("FractionalMaxPool", "FractionalAvgPool"):
    defop(_name, _pool_infer, arity=1, multi_output=True, attrs=dict(ATTRS))
defop("FractionalMaxPoolGrad", _max_grad_infer, arity=5, attrs={"overlapping": "bool"},
      keeps_rows=_grad_rows)
defop("FractionalAvgPoolGrad", _avg_grad_infer, arity=4, attrs={"overlapping": "bool"},
      keeps_rows=_grad_rows)
