"""NumPy kernel of TensorFlow's generic Conv op (ir/defs/conv_raw.py): the batch dimensions
folded into one, then Conv2D's or Conv3D's kernel."""
from ...ir.defs.conv_raw import spatial, window_attrs
from ..registry import kernel
from .conv import _conv


@kernel("Conv")
def _conv_op(x, w, batch_dims=1, **attrs):
    n = spatial(x.shape, batch_dims)
    lead = x.shape[:batch_dims]
    y = _conv(x.reshape((-1,) + x.shape[batch_dims:]), w, **window_attrs(attrs, n))
    return y.reshape(lead + y.shape[1:])
