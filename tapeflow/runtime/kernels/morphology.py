"""NumPy kernels of Dilation2D and its backprop ops (ir/defs/morphology.py).

The padded input's windows as a strided view [N, out_h, out_w, kh, kw, C] plus the filter,
positions outside the input masked to the dtype's lowest value; the forward takes each
window's maximum, the backprops its first maximum (row-major) as TensorFlow's CPU kernels
do, a window with no value above the lowest sending its gradient to its clamped corner
(input) or to filter offset (0, 0).
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...ir.defs.conv import geometry
from ...ir.defs.morphology import window_attrs
from ..registry import kernel


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _values(x, f, strides, rates, padding):
    """(window values [N, oh, ow, kh * kw, C], geometry) with masked positions lowest."""
    kh, kw = f.shape[:2]
    geo = geometry(x.shape, (kh, kw), window_attrs(strides, rates, padding))
    (oh, pt, pb), (ow, pl, pr) = geo
    low = _lowest(x.dtype)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=low)
    ok = np.pad(np.ones(x.shape[1:3], bool), ((pt, pb), (pl, pr)))
    st = xp.strides
    shape = (x.shape[0], oh, ow, kh, kw, x.shape[3])
    win = as_strided(xp, shape, (st[0], st[1] * strides[1], st[2] * strides[2],
                                 st[1] * rates[1], st[2] * rates[2], st[3]), writeable=False)
    mask = as_strided(ok, (oh, ow, kh, kw), (ok.strides[0] * strides[1],
                                             ok.strides[1] * strides[2],
                                             ok.strides[0] * rates[1], ok.strides[1] * rates[2]),
                      writeable=False)
    with np.errstate(over="ignore"):
        vals = win + f[None, None, None]
    vals = np.where(mask[None, :, :, :, :, None], vals, low).astype(x.dtype, copy=False)
    return vals.reshape(shape[:3] + (kh * kw, x.shape[3])), geo


@kernel("Dilation2D")
def _dilation(x, f, strides, rates, padding):
    vals, _ = _values(x, f, strides, rates, padding)
    return vals.max(axis=3)


def _first_max(x, f, strides, rates, padding):
    """(flat window offset of each output's first maximum, whether it beats the lowest)."""
    vals, geo = _values(x, f, strides, rates, padding)
    idx = vals.argmax(axis=3)
    best = np.take_along_axis(vals, idx[:, :, :, None], axis=3)[:, :, :, 0]
    return idx, best > _lowest(x.dtype), geo


@kernel("Dilation2DBackpropInput")
def _backprop_input(x, f, dy, strides, rates, padding):
    idx, found, ((oh, pt, _), (ow, pl, _)) = _first_max(x, f, strides, rates, padding)
    kw = f.shape[1]
    n, _, _, c = np.indices(idx.shape, sparse=True)
    h0 = (np.arange(oh) * strides[1] - pt)[None, :, None, None]
    w0 = (np.arange(ow) * strides[2] - pl)[None, None, :, None]
    h = np.where(found, h0 + (idx // kw) * rates[1], np.maximum(h0, 0))
    w = np.where(found, w0 + (idx % kw) * rates[2], np.maximum(w0, 0))
    dx = np.zeros_like(x, dtype=dy.dtype)
    np.add.at(dx, (np.broadcast_to(n, idx.shape), h, w, np.broadcast_to(c, idx.shape)), dy)
    return dx


@kernel("Dilation2DBackpropFilter")
def _backprop_filter(x, f, dy, strides, rates, padding):
    idx, found, _ = _first_max(x, f, strides, rates, padding)
    kw = f.shape[1]
    idx = np.where(found, idx, 0)
    c = np.broadcast_to(np.arange(x.shape[3]), idx.shape)
    df = np.zeros_like(f, dtype=dy.dtype)
    np.add.at(df, (idx // kw, idx % kw, c), dy)
    return df
