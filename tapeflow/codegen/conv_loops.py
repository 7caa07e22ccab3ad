"""Jitted convolution and pooling loops that generated programs call (``rt.conv_*``, ``rt.pool_*``).

Every helper works on 5-D channels-last arrays [N, D, H, W, C]; the 2-D ops call them with a
unit depth (the template reshapes, a view). Sizes come from the arrays, geometry (strides,
dilations, padding before) from arguments, so one compiled helper serves every shape.

Two lowerings of a convolution, the size class the template chooses (``templates/conv.py``):
``gemm``: im2col of a block of output rows into a buffer, then NumPy's own GEMM
(``blas.gemm``) against the filter as a matrix, per group; the input gradient is the GEMM
with the filter transposed then col2im, the filter gradient windows^T times the output
gradient, accumulated over row blocks. ``direct``: plain loops over the window (few input
channels per group, integer dtypes, depthwise).
"""
import numpy as np
from numba import njit

from .blas import gemm

_JIT = dict(cache=True, error_model="numpy", nogil=True)
# rows of im2col per block: the buffer stays under ~4 MB (float64) for any filter
_BLOCK_VALUES = 1 << 19


@njit(**_JIT)
def _rows_per_block(width):
    r = _BLOCK_VALUES // max(width, 1)
    return max(r, 1)


@njit(**_JIT)
def _row_position(r, o0, o1, o2):
    """Row ``r`` of the im2col matrix as (batch, output position depth, height, width)."""
    q2 = r % o2
    r //= o2
    q1 = r % o1
    r //= o1
    return r // o0, r % o0, q1, q2


@njit(**_JIT)
def _gemm_plan(w_shape, channels, out_shape):
    """What the three im2col + GEMM loops size by: the filter's (k0, k1, k2, Cg, O), the
    groups and outputs per group, the output's (o0, o1, o2), the im2col matrix's rows and
    width, and the rows per block."""
    k0, k1, k2, cg, O = w_shape
    groups = channels // cg
    o0, o1, o2 = out_shape[1], out_shape[2], out_shape[3]
    rows = out_shape[0] * o0 * o1 * o2
    width = k0 * k1 * k2 * cg
    block = min(_rows_per_block(width), max(rows, 1))
    return k0, k1, k2, cg, O, groups, O // groups, o0, o1, o2, rows, width, block


@njit(**_JIT)
def _fill_cols(x, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2, p0, p1, p2,
               c0, cg):
    D, H, W = x.shape[1], x.shape[2], x.shape[3]
    width = k0 * k1 * k2 * cg
    for r in range(r0, r1):
        n, q0, q1, q2 = _row_position(r, o0, o1, o2)
        row = r - r0
        col = 0
        for i in range(k0):
            z = q0 * s0 + i * d0 - p0
            for j in range(k1):
                y = q1 * s1 + j * d1 - p1
                for l in range(k2):
                    xx = q2 * s2 + l * d2 - p2
                    if 0 <= z < D and 0 <= y < H and 0 <= xx < W:
                        for c in range(cg):
                            cols[row, col + c] = x[n, z, y, xx, c0 + c]
                    else:
                        for c in range(cg):
                            cols[row, col + c] = 0
                    col += cg
    return width


@njit(**_JIT)
def _add_cols(dx, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2, p0, p1, p2,
              c0, cg):
    """col2im: dx[window of row r] += cols[r - r0] (positions inside the input only)."""
    D, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    for r in range(r0, r1):
        n, q0, q1, q2 = _row_position(r, o0, o1, o2)
        row = r - r0
        col = 0
        for i in range(k0):
            z = q0 * s0 + i * d0 - p0
            for j in range(k1):
                y = q1 * s1 + j * d1 - p1
                for l in range(k2):
                    xx = q2 * s2 + l * d2 - p2
                    if 0 <= z < D and 0 <= y < H and 0 <= xx < W:
                        for c in range(cg):
                            dx[n, z, y, xx, c0 + c] += cols[row, col + c]
                    col += cg


@njit(**_JIT)
def conv_gemm(x, w, out, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """out = conv(x, w) by im2col + GEMM; x [N,D,H,W,C], w [k0,k1,k2,Cg,O], out [N,o0,o1,o2,O]."""
    k0, k1, k2, cg, O, groups, og, o0, o1, o2, rows, width, block = _gemm_plan(
        w.shape, x.shape[4], out.shape)
    w2 = w.reshape((width, O))
    out2 = out.reshape((rows, O))
    cols = np.empty((block, width), x.dtype)
    for g in range(groups):
        wg = w2[:, g * og:(g + 1) * og]
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            _fill_cols(x, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2,
                       p0, p1, p2, g * cg, cg)
            gemm(cols[:r1 - r0], wg, out2[r0:r1, g * og:(g + 1) * og])


@njit(**_JIT)
def conv_input_gemm(w, dy, dx, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """dx = the input gradient of conv(x, w) given dy: (dy @ w^T) then col2im."""
    k0, k1, k2, cg, O, groups, og, o0, o1, o2, rows, width, block = _gemm_plan(
        w.shape, dx.shape[4], dy.shape)
    w2 = w.reshape((width, O))
    dy2 = dy.reshape((rows, O))
    dx[...] = 0
    cols = np.empty((block, width), dx.dtype)
    for g in range(groups):
        wgt = w2[:, g * og:(g + 1) * og].T
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            gemm(dy2[r0:r1, g * og:(g + 1) * og], wgt, cols[:r1 - r0])
            _add_cols(dx, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2,
                      p0, p1, p2, g * cg, cg)


@njit(**_JIT)
def conv_filter_gemm(x, dy, dw, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """dw = the filter gradient of conv(x, w) given dy: windows^T @ dy, over row blocks."""
    k0, k1, k2, cg, O, groups, og, o0, o1, o2, rows, width, block = _gemm_plan(
        dw.shape, x.shape[4], dy.shape)
    dw2 = dw.reshape((width, O))
    dy2 = dy.reshape((rows, O))
    dw[...] = 0
    cols = np.empty((block, width), x.dtype)
    part = np.empty((width, og), x.dtype)
    for g in range(groups):
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            _fill_cols(x, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2,
                       p0, p1, p2, g * cg, cg)
            gemm(cols[:r1 - r0].T, dy2[r0:r1, g * og:(g + 1) * og], part)
            dw2[:, g * og:(g + 1) * og] += part


# -- direct loops -------------------------------------------------------------------------

@njit(**_JIT)
def conv_direct(x, w, y, mode, depthwise, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """The three convolution ops by loops over each output's window; ``mode`` 0: y = conv(x, w)
    (y the output); 1: x = the input gradient given w and the output gradient y; 2: w = the
    filter gradient given x and y. ``depthwise``: w is [k0, k1, k2, C, M], output channel
    c * M + m; otherwise input channels come in groups of w's depth."""
    N, D, H, W, C = x.shape
    k0, k1, k2, cw, O = w.shape
    o0, o1, o2, oc = y.shape[1], y.shape[2], y.shape[3], y.shape[4]
    groups = 1 if depthwise else C // cw
    og = O // groups
    if mode == 1:
        x[...] = 0
    elif mode == 2:
        w[...] = 0
    zero = np.zeros(1, y.dtype)[0]
    for n in range(N):
        for q0 in range(o0):
            for q1 in range(o1):
                for q2 in range(o2):
                    for f in range(oc):
                        if depthwise:
                            c_lo, c_n, wo = f // O, 1, f % O
                        else:
                            c_lo, c_n, wo = (f // og) * cw, cw, f
                        acc = zero
                        g = y[n, q0, q1, q2, f] if mode != 0 else zero
                        for i in range(k0):
                            z = q0 * s0 + i * d0 - p0
                            if z < 0 or z >= D:
                                continue
                            for j in range(k1):
                                yy = q1 * s1 + j * d1 - p1
                                if yy < 0 or yy >= H:
                                    continue
                                for l in range(k2):
                                    xx = q2 * s2 + l * d2 - p2
                                    if xx < 0 or xx >= W:
                                        continue
                                    for c in range(c_n):
                                        wc = c_lo if depthwise else c
                                        if mode == 0:
                                            acc += x[n, z, yy, xx, c_lo + c] * w[i, j, l, wc, wo]
                                        elif mode == 1:
                                            x[n, z, yy, xx, c_lo + c] += g * w[i, j, l, wc, wo]
                                        else:
                                            w[i, j, l, wc, wo] += x[n, z, yy, xx, c_lo + c] * g
                        if mode == 0:
                            y[n, q0, q1, q2, f] = acc


# -- pooling ----------------------------------------------------------------------------

@njit(**_JIT)
def _window_max(x, n, q0, q1, q2, c, k0, k1, k2, s0, s1, s2, p0, p1, p2):
    """(z, y, x) of the first maximum of a window among the input's positions, z = -1 when
    the window holds none."""
    D, H, W = x.shape[1], x.shape[2], x.shape[3]
    bz, by, bx = -1, 0, 0
    best = x[n, 0, 0, 0, c]
    for i in range(k0):
        z = q0 * s0 + i - p0
        if z < 0 or z >= D:
            continue
        for j in range(k1):
            yy = q1 * s1 + j - p1
            if yy < 0 or yy >= H:
                continue
            for l in range(k2):
                xx = q2 * s2 + l - p2
                if xx < 0 or xx >= W:
                    continue
                v = x[n, z, yy, xx, c]
                if bz < 0 or v > best:
                    bz, by, bx, best = z, yy, xx, v
    return bz, by, bx


@njit(**_JIT)
def pool_max(x, out, argmax, mode, k0, k1, k2, s0, s1, s2, p0, p1, p2, with_batch):
    """``mode`` 0: out = the window maxima; 1: also ``argmax`` = their flat input index
    (``((z * H + y) * W + x) * C + c``, plus n * D * H * W * C ``with_batch``)."""
    N, D, H, W, C = x.shape
    for n in range(N):
        for q0 in range(out.shape[1]):
            for q1 in range(out.shape[2]):
                for q2 in range(out.shape[3]):
                    for c in range(C):
                        z, yy, xx = _window_max(x, n, q0, q1, q2, c, k0, k1, k2, s0, s1, s2,
                                                p0, p1, p2)
                        out[n, q0, q1, q2, c] = x[n, z, yy, xx, c] if z >= 0 else 0
                        if mode == 1:
                            idx = ((z * H + yy) * W + xx) * C + c
                            if with_batch:
                                idx += n * D * H * W * C
                            argmax[n, q0, q1, q2, c] = idx


@njit(**_JIT)
def pool_max_grad(x, g, out, mode, k0, k1, k2, s0, s1, s2, p0, p1, p2):
    """``mode`` 0 (MaxPoolGrad): out [like x] += g at each window's first maximum; 1
    (MaxPoolGradGrad): out [like the pooled output] = g [like x] at that maximum."""
    N, D, H, W, C = x.shape
    if mode == 0:
        out[...] = 0
    o = g if mode == 0 else out
    for n in range(N):
        for q0 in range(o.shape[1]):
            for q1 in range(o.shape[2]):
                for q2 in range(o.shape[3]):
                    for c in range(C):
                        z, yy, xx = _window_max(x, n, q0, q1, q2, c, k0, k1, k2, s0, s1, s2,
                                                p0, p1, p2)
                        if mode == 0:
                            if z >= 0:
                                out[n, z, yy, xx, c] += g[n, q0, q1, q2, c]
                        else:
                            out[n, q0, q1, q2, c] = g[n, z, yy, xx, c] if z >= 0 else 0


@njit(**_JIT)
def pool_avg(x, y, mode, k0, k1, k2, s0, s1, s2, p0, p1, p2):
    """``mode`` 0: y = the mean of each window's input positions; 1: x = the gradient given
    y (each output's share added to its window)."""
    N, D, H, W, C = x.shape
    if mode == 1:
        x[...] = 0
    zero = np.zeros(1, y.dtype)[0]
    for n in range(N):
        for q0 in range(y.shape[1]):
            z0, z1 = max(q0 * s0 - p0, 0), min(q0 * s0 - p0 + k0, D)
            for q1 in range(y.shape[2]):
                y0, y1 = max(q1 * s1 - p1, 0), min(q1 * s1 - p1 + k1, H)
                for q2 in range(y.shape[3]):
                    x0, x1 = max(q2 * s2 - p2, 0), min(q2 * s2 - p2 + k2, W)
                    count = max((z1 - z0) * (y1 - y0) * (x1 - x0), 1)
                    for c in range(C):
                        if mode == 0:
                            acc = zero
                            for z in range(z0, z1):
                                for yy in range(y0, y1):
                                    for xx in range(x0, x1):
                                        acc += x[n, z, yy, xx, c]
                            y[n, q0, q1, q2, c] = acc / count
                        else:
                            share = y[n, q0, q1, q2, c] / count
                            for z in range(z0, z1):
                                for yy in range(y0, y1):
                                    for xx in range(x0, x1):
                                        x[n, z, yy, xx, c] += share
