"""NumPy kernels of the convolution and pooling ops (ir/defs/conv.py), channels-last.

A convolution is im2col then one matrix product: the padded input's windows, a strided
view ``[N, *out, *k, C]`` (no copy until the reshape), times the filter as a matrix; its
input gradient is the product with the filter transposed, then col2im (each kernel offset's
slab added into the padded input gradient, one strided slice per offset); its filter
gradient is windows^T times the output gradient. Grouped convolutions (input depth a
multiple of the filter's) and depthwise ones are one einsum over the groups. Pooling takes
the same window view; MaxPool's gradients route through each window's first maximum in
row-major window order (TensorFlow's CPU argmax), padding never chosen.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...ir.defs.conv import DEPTHWISE, geometry
from ..registry import kernel


class Geo:
    """The windows of one op call: spatial rank, window sizes, strides, dilations, output
    sizes and paddings, from an input shape and the op's attributes."""

    def __init__(self, in_shape, ksize, attrs):
        self.n = len(in_shape) - 2
        self.in_shape = tuple(in_shape)
        self.k = tuple(ksize)
        self.s = tuple(attrs["strides"][1:-1])
        dil = attrs.get("dilations") or (1,) * (self.n + 2)
        self.d = tuple(dil[1:-1])
        g = geometry(in_shape, ksize, attrs)
        self.out = tuple(o for o, _, _ in g)
        self.pads = tuple((b, a) for _, b, a in g)

    def padded_shape(self):
        return (self.in_shape[0],) + tuple(i + b + a for i, (b, a) in zip(self.in_shape[1:-1], self.pads)) \
            + (self.in_shape[-1],)

    def pad(self, x, value=0):
        if not any(b or a for b, a in self.pads):
            return x
        return np.pad(x, ((0, 0),) + self.pads + ((0, 0),), constant_values=value)

    def crop(self, xp):
        idx = tuple(slice(b, b + i) for (b, _), i in zip(self.pads, self.in_shape[1:-1]))
        return xp[(slice(None),) + idx + (slice(None),)]

    def windows(self, xp):
        """The strided view [N, *out, *k, C] of the padded input ``xp``."""
        st = xp.strides
        shape = (xp.shape[0],) + self.out + self.k + (xp.shape[-1],)
        strides = ((st[0],) + tuple(st[i + 1] * s for i, s in enumerate(self.s))
                   + tuple(st[i + 1] * d for i, d in enumerate(self.d)) + (st[-1],))
        return as_strided(xp, shape, strides, writeable=False)

    def offsets(self):
        return np.ndindex(*self.k)

    def slab(self, kk):
        """The padded-input positions kernel offset ``kk`` reads, over all outputs."""
        return (slice(None),) + tuple(
            slice(k * d, k * d + (o - 1) * s + 1, s) if o else slice(0, 0)
            for k, d, o, s in zip(kk, self.d, self.out, self.s)) + (slice(None),)

    def col2im(self, cols, dtype):
        """Sum the window columns ``cols`` [N, *out, *k, C] back into the input's positions."""
        xp = np.zeros(self.padded_shape(), dtype)
        n = self.n
        for kk in self.offsets():
            xp[self.slab(kk)] += cols[(slice(None),) * (n + 1) + kk]
        return self.crop(xp)


def _rows(a, geo):
    return int(np.prod((a.shape[0],) + geo.out))


def _kprod(geo):
    return int(np.prod(geo.k))


def _conv(x, w, **attrs):
    n = x.ndim - 2
    geo = Geo(x.shape, w.shape[:n], attrs)
    cols = geo.windows(geo.pad(x))
    c, cg, o = x.shape[-1], w.shape[-2], w.shape[-1]
    g = c // cg if cg else 1
    r, kp = _rows(x, geo), _kprod(geo)
    if g == 1:
        out = cols.reshape(r, kp * c) @ w.reshape(kp * c, o)
    else:
        out = np.einsum("rkgc,kcgo->rgo", cols.reshape(r, kp, g, cg),
                        w.reshape(kp, cg, g, o // g)).reshape(r, o)
    return out.reshape((x.shape[0],) + geo.out + (o,)).astype(x.dtype, copy=False)


def _conv_backprop_input(w, dy, like=None, input_sizes=None, **attrs):
    shape = like.shape if like is not None else tuple(input_sizes)
    n = len(shape) - 2
    geo = Geo(shape, w.shape[:n], attrs)
    c, cg, o = shape[-1], w.shape[-2], w.shape[-1]
    g = c // cg if cg else 1
    r, kp = _rows(dy, geo), _kprod(geo)
    if g == 1:
        cols = dy.reshape(r, o) @ w.reshape(kp * c, o).T
    else:
        cols = np.einsum("rgo,kcgo->rkgc", dy.reshape(r, g, o // g),
                         w.reshape(kp, cg, g, o // g))
    cols = cols.reshape((shape[0],) + geo.out + geo.k + (c,))
    return geo.col2im(cols, dy.dtype)


def _conv_backprop_filter(x, dy, like=None, filter_sizes=None, **attrs):
    shape = like.shape if like is not None else tuple(filter_sizes)
    n = x.ndim - 2
    geo = Geo(x.shape, shape[:n], attrs)
    cols = geo.windows(geo.pad(x))
    c, cg, o = x.shape[-1], shape[-2], shape[-1]
    g = c // cg if cg else 1
    r, kp = _rows(x, geo), _kprod(geo)
    if g == 1:
        dw = cols.reshape(r, kp * c).T @ dy.reshape(r, o)
    else:
        dw = np.einsum("rkgc,rgo->kcgo", cols.reshape(r, kp, g, cg), dy.reshape(r, g, o // g))
    return dw.reshape(shape).astype(dy.dtype, copy=False)


def _depthwise(x, w, **attrs):
    geo = Geo(x.shape, w.shape[:2], attrs)
    cols = geo.windows(geo.pad(x))
    c, m = w.shape[-2], w.shape[-1]
    r, kp = _rows(x, geo), _kprod(geo)
    out = np.einsum("rkc,kcm->rcm", cols.reshape(r, kp, c), w.reshape(kp, c, m))
    return out.reshape((x.shape[0],) + geo.out + (c * m,)).astype(x.dtype, copy=False)


def _depthwise_backprop_input(w, dy, like=None, input_sizes=None, **attrs):
    shape = like.shape if like is not None else tuple(input_sizes)
    geo = Geo(shape, w.shape[:2], attrs)
    c, m = w.shape[-2], w.shape[-1]
    r, kp = _rows(dy, geo), _kprod(geo)
    cols = np.einsum("rcm,kcm->rkc", dy.reshape(r, c, m), w.reshape(kp, c, m))
    return geo.col2im(cols.reshape((shape[0],) + geo.out + geo.k + (c,)), dy.dtype)


def _depthwise_backprop_filter(x, dy, like=None, filter_sizes=None, **attrs):
    shape = like.shape if like is not None else tuple(filter_sizes)
    geo = Geo(x.shape, shape[:2], attrs)
    cols = geo.windows(geo.pad(x))
    c, m = shape[-2], shape[-1]
    r, kp = _rows(x, geo), _kprod(geo)
    dw = np.einsum("rkc,rcm->kcm", cols.reshape(r, kp, c), dy.reshape(r, c, m))
    return dw.reshape(shape).astype(dy.dtype, copy=False)


for _name, _fn in (("Conv2D", _conv), ("Conv3D", _conv), ("DepthwiseConv2dNative", _depthwise)):
    kernel(_name)(_fn)
kernel("Conv2DBackpropInput")(_conv_backprop_input)
kernel("Conv3DBackpropInputV2")(_conv_backprop_input)
kernel("Conv2DBackpropFilter")(_conv_backprop_filter)
kernel("Conv3DBackpropFilterV2")(_conv_backprop_filter)
kernel(DEPTHWISE[1])(_depthwise_backprop_input)
kernel(DEPTHWISE[2])(_depthwise_backprop_filter)


# -- pooling ----------------------------------------------------------------------------

def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _pool_geo(x_shape, attrs):
    return Geo(x_shape, attrs["ksize"][1:-1], attrs)


def _flat_windows(geo, x, value):
    """[N, *out, prod(k), C] copy of the windows of ``x`` padded with ``value``."""
    w = geo.windows(geo.pad(x, value))
    n = geo.n
    # move the window axes next to each other before C: they already are
    return w.reshape(w.shape[:n + 1] + (_kprod(geo), w.shape[-1]))


def _valid_windows(geo, dtype):
    """[1, *out, prod(k), 1]: whether each window position is inside the input (not padding)."""
    ones = np.ones((1,) + geo.in_shape[1:-1] + (1,), dtype)
    return _flat_windows(geo, ones, 0).astype(bool)


def _max_pool(x, **attrs):
    geo = _pool_geo(x.shape, attrs)
    if 0 in geo.out or x.size == 0:
        return np.zeros((x.shape[0],) + geo.out + (x.shape[-1],), x.dtype)
    return _flat_windows(geo, x, _lowest(x.dtype)).max(axis=-2)


def _argmax(geo, x):
    """Per output, the flat window index of the first maximum among the input's positions
    (padding, filled with the lowest value, never wins: a window of lowest values takes its
    first input position)."""
    w = _flat_windows(geo, x, _lowest(x.dtype))
    am = np.argmax(w, axis=-2)
    valid = _valid_windows(geo, x.dtype)
    if not valid.all():
        top = np.take_along_axis(w, am[..., None, :], axis=-2)[..., 0, :]
        am = np.where(top == _lowest(x.dtype), np.argmax(valid, axis=-2), am)
    return am


def _padded_index(geo, am):
    """Flat indices into the padded input of the window positions ``am`` [N, *out, C]."""
    n = geo.n
    offs = np.unravel_index(am, geo.k)
    pshape = geo.padded_shape()
    grids = np.indices(am.shape, sparse=True)
    coords = [grids[0]]
    for i in range(n):
        coords.append(grids[i + 1] * geo.s[i] + offs[i])
    coords.append(grids[-1])
    return np.ravel_multi_index(coords, pshape)


def _max_pool_grad(x, y, g, **attrs):
    geo = _pool_geo(x.shape, attrs)
    out = np.zeros(geo.padded_shape(), g.dtype)
    if g.size:
        idx = _padded_index(geo, _argmax(geo, x))
        np.add.at(out.reshape(-1), idx.reshape(-1), g.reshape(-1))
    return geo.crop(out)


def _max_pool_grad_grad(x, y, g, **attrs):
    geo = _pool_geo(x.shape, attrs)
    shape = (x.shape[0],) + geo.out + (x.shape[-1],)
    if 0 in shape:
        return np.zeros(shape, g.dtype)
    idx = _padded_index(geo, _argmax(geo, x))
    return geo.pad(g).reshape(-1)[idx].reshape(shape)


def _avg_pool(x, **attrs):
    geo = _pool_geo(x.shape, attrs)
    if 0 in geo.out or x.size == 0:
        return np.zeros((x.shape[0],) + geo.out + (x.shape[-1],), x.dtype)
    total = _flat_windows(geo, x, 0).sum(axis=-2)
    count = _valid_windows(geo, x.dtype).sum(axis=-2).astype(x.dtype)
    return (total / count).astype(x.dtype, copy=False)


def _avg_pool_grad(g, like=None, orig_input_shape=None, **attrs):
    shape = like.shape if like is not None else tuple(orig_input_shape)
    geo = _pool_geo(shape, attrs)
    if 0 in geo.out:
        return np.zeros(shape, g.dtype)
    count = _valid_windows(geo, g.dtype).sum(axis=-2).astype(g.dtype)
    share = g / count
    cols = np.broadcast_to(share.reshape(share.shape[:-1] + (1,) * geo.n + share.shape[-1:]),
                           share.shape[:-1] + geo.k + share.shape[-1:])
    return geo.col2im(cols, g.dtype)


for _sfx in ("", "3D"):
    kernel(f"MaxPool{_sfx}")(_max_pool)
    kernel(f"MaxPool{_sfx}Grad")(_max_pool_grad)
    kernel(f"MaxPool{_sfx}GradGrad")(_max_pool_grad_grad)
    kernel(f"AvgPool{_sfx}")(_avg_pool)
    kernel(f"AvgPool{_sfx}Grad")(_avg_pool_grad)


@kernel("MaxPoolWithArgmax")
def _max_pool_with_argmax(x, ksize, strides, padding, Targmax, include_batch_in_index=False):
    attrs = {"ksize": ksize, "strides": strides, "padding": padding}
    geo = _pool_geo(x.shape, attrs)
    shape = (x.shape[0],) + geo.out + (x.shape[-1],)
    if 0 in shape:
        return np.zeros(shape, x.dtype), np.zeros(shape, np.dtype(Targmax.np))
    am = _argmax(geo, x)
    offs = np.unravel_index(am, geo.k)
    grids = np.indices(am.shape, sparse=True)
    h = grids[1] * geo.s[0] + offs[0] - geo.pads[0][0]
    w = grids[2] * geo.s[1] + offs[1] - geo.pads[1][0]
    H, W, C = x.shape[1:]
    flat = (h * W + w) * C + grids[3]
    if include_batch_in_index:
        flat = flat + grids[0] * (H * W * C)
    y = _max_pool(x, **attrs)
    return y, flat.astype(Targmax.np)

