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
def _gemm_plan(w_shape, channels, out_shape):
    """What the three im2col + GEMM loops size by: the filter's (k0, k1, k2, Cg, O), the
    groups and outputs per group, the output's (o0, o1, o2), the im2col matrix's rows and
    width, and the rows per block."""
    k0, k1, k2, cg, O = w_shape
    groups = channels // cg
    o0, o1, o2 = out_shape[1], out_shape[2], out_shape[3]
    rows = out_shape[0] * o0 * o1 * o2
    width = k0 * k1 * k2 * cg
    # whole lines of o2 outputs per block (im2col fills a line's span at once)
    line = max(o2, 1)
    block = max(min(_rows_per_block(width), max(rows, 1)) // line, 1) * line
    return k0, k1, k2, cg, O, groups, O // groups, o0, o1, o2, rows, width, block


@njit(**_JIT)
def _span(q_count, start, step, size):
    """The outputs q in [0, q_count) whose input position q * step + start lies in [0, size)."""
    lo = 0 if start >= 0 else min((-start + step - 1) // step, q_count)
    hi = 0 if start > size - 1 else min(q_count, (size - 1 - start) // step + 1)
    return lo, max(hi, lo)


@njit(**_JIT)
def _fill_cols(x, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2, p0, p1, p2,
               c0, cg):
    """im2col: cols[r - r0] = the window of output row r (channels c0 .. c0 + cg of each
    position, zeros outside the input); r0 and r1 are whole lines of o2 outputs. Per line and
    window offset the outputs that read inside the input are one span: no test per value."""
    N, D, H, W, C = x.shape
    x2 = x.reshape((N * D * H * W, C))
    for line in range(r0 // o2, r1 // o2):
        q1 = line % o1
        q0 = (line // o1) % o0
        n = line // (o1 * o0)
        rb = line * o2 - r0
        col = 0
        for i in range(k0):
            z = q0 * s0 + i * d0 - p0
            for j in range(k1):
                yy = q1 * s1 + j * d1 - p1
                inside = 0 <= z < D and 0 <= yy < H
                base = ((n * D + z) * H + yy) * W
                for l in range(k2):
                    lo, hi = _span(o2, l * d2 - p2, s2, W) if inside else (0, 0)
                    for q2 in range(lo):
                        for c in range(cg):
                            cols[rb + q2, col + c] = 0
                    for q2 in range(lo, hi):
                        src = base + q2 * s2 + l * d2 - p2
                        for c in range(cg):
                            cols[rb + q2, col + c] = x2[src, c0 + c]
                    for q2 in range(hi, o2):
                        for c in range(cg):
                            cols[rb + q2, col + c] = 0
                    col += cg
    return k0 * k1 * k2 * cg


@njit(**_JIT)
def _add_cols(dx, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2, p0, p1, p2,
              c0, cg):
    """col2im: dx[window of row r] += cols[r - r0] (positions inside the input only); r0
    and r1 are whole lines of o2 outputs, as for ``_fill_cols``."""
    N, D, H, W, C = dx.shape
    dx2 = dx.reshape((N * D * H * W, C))
    for line in range(r0 // o2, r1 // o2):
        q1 = line % o1
        q0 = (line // o1) % o0
        n = line // (o1 * o0)
        rb = line * o2 - r0
        col = 0
        for i in range(k0):
            z = q0 * s0 + i * d0 - p0
            for j in range(k1):
                yy = q1 * s1 + j * d1 - p1
                inside = 0 <= z < D and 0 <= yy < H
                base = ((n * D + z) * H + yy) * W
                for l in range(k2):
                    if inside:
                        lo, hi = _span(o2, l * d2 - p2, s2, W)
                        for q2 in range(lo, hi):
                            dst = base + q2 * s2 + l * d2 - p2
                            for c in range(cg):
                                dx2[dst, c0 + c] += cols[rb + q2, col + c]
                    col += cg


@njit(**_JIT)
def _copy_cols(src, dst, c0):
    """dst[:, :] = src[:, c0:c0 + dst.shape[1]] as loops (slices of slices cost more to
    compile, and keep every GEMM operand C-contiguous)."""
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, c0 + j]


@njit(**_JIT)
def _put_cols(src, dst, c0, add):
    """dst[:, c0:c0 + src.shape[1]] = src (or += with ``add``)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            if add:
                dst[i, c0 + j] += src[i, j]
            else:
                dst[i, c0 + j] = src[i, j]


@njit(**_JIT)
def conv_gemm(x, w, out, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """out = conv(x, w) by im2col + GEMM; x [N,D,H,W,C], w [k0,k1,k2,Cg,O], out [N,o0,o1,o2,O].
    Every GEMM operand is C-contiguous (one group: the filter and the output's row blocks as
    they are; several: the group's filter columns and results through buffers)."""
    k0, k1, k2, cg, O, groups, og, o0, o1, o2, rows, width, block = _gemm_plan(
        w.shape, x.shape[4], out.shape)
    w2 = w.reshape((width, O))
    out2 = out.reshape((rows, O))
    cols = np.empty((block, width), x.dtype)
    if groups == 1:
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            _fill_cols(x, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2,
                       p0, p1, p2, 0, cg)
            gemm(cols[:r1 - r0], w2, out2[r0:r1])
        return
    wg = np.empty((width, og), x.dtype)
    res = np.empty((block, og), x.dtype)
    for g in range(groups):
        _copy_cols(w2, wg, g * og)
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            _fill_cols(x, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2,
                       p0, p1, p2, g * cg, cg)
            gemm(cols[:r1 - r0], wg, res[:r1 - r0])
            _put_cols(res[:r1 - r0], out2[r0:r1], g * og, False)


@njit(**_JIT)
def conv_input_gemm(w, dy, dx, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """dx = the input gradient of conv(x, w) given dy: (dy @ w^T) then col2im."""
    k0, k1, k2, cg, O, groups, og, o0, o1, o2, rows, width, block = _gemm_plan(
        w.shape, dx.shape[4], dy.shape)
    w2 = w.reshape((width, O))
    dy2 = dy.reshape((rows, O))
    dx[...] = 0
    cols = np.empty((block, width), dx.dtype)
    if groups == 1:
        wt = w2.T
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            gemm(dy2[r0:r1], wt, cols[:r1 - r0])
            _add_cols(dx, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2,
                      p0, p1, p2, 0, cg)
        return
    wg = np.empty((width, og), dx.dtype)
    dyg = np.empty((block, og), dx.dtype)
    for g in range(groups):
        _copy_cols(w2, wg, g * og)
        wgt = wg.T
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            _copy_cols(dy2[r0:r1], dyg[:r1 - r0], g * og)
            gemm(dyg[:r1 - r0], wgt, cols[:r1 - r0])
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
    dyg = np.empty((block if groups > 1 else 0, og), x.dtype)
    for g in range(groups):
        for r0 in range(0, rows, block):
            r1 = min(r0 + block, rows)
            _fill_cols(x, cols, r0, r1, o0, o1, o2, k0, k1, k2, s0, s1, s2, d0, d1, d2,
                       p0, p1, p2, g * cg, cg)
            if groups == 1:
                gemm(cols[:r1 - r0].T, dy2[r0:r1], part)
            else:
                _copy_cols(dy2[r0:r1], dyg[:r1 - r0], g * og)
                gemm(cols[:r1 - r0].T, dyg[:r1 - r0], part)
            _put_cols(part, dw2, g * og, True)


# -- direct loops -------------------------------------------------------------------------

@njit(**_JIT)
def _direct_plan(x, w, depthwise):
    """x as [rows, C]; the filter as [taps, Cg, O] (a depthwise [.., C, M] is the grouped
    filter [.., 1, C * M] of C groups: the same memory); groups, Cg, outputs per group."""
    N, D, H, W, C = x.shape
    k0, k1, k2, cw, O = w.shape
    if depthwise:
        w3 = w.reshape((k0 * k1 * k2, 1, cw * O))
    else:
        w3 = w.reshape((k0 * k1 * k2, cw, O))
    cg = w3.shape[1]
    groups = C // cg
    return x.reshape((N * D * H * W, C)), w3, groups, cg, w3.shape[2] // groups


@njit(**_JIT)
def conv_direct_fwd(x, w, y, depthwise, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """y = conv(x, w) by loops over each output's window, the output channels innermost (they
    vectorize): for few input channels per group (a first layer), depthwise, integers."""
    N, D, H, W, C = x.shape
    k0, k1, k2 = w.shape[0], w.shape[1], w.shape[2]
    x2, w3, groups, cg, og = _direct_plan(x, w, depthwise)
    o0, o1, o2 = y.shape[1], y.shape[2], y.shape[3]
    y2 = y.reshape((N * o0 * o1 * o2, groups * og))
    y[...] = 0
    r = 0
    for n in range(N):
        for q0 in range(o0):
            for q1 in range(o1):
                for q2 in range(o2):
                    out = y2[r]
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
                                xr = x2[((n * D + z) * H + yy) * W + xx]
                                wt = w3[(i * k1 + j) * k2 + l]
                                for g in range(groups):
                                    og_out = out[g * og:(g + 1) * og]
                                    for c in range(cg):
                                        v = xr[g * cg + c]
                                        wr = wt[c, g * og:(g + 1) * og]
                                        for f in range(og):
                                            og_out[f] += v * wr[f]
                    r += 1


@njit(**_JIT)
def conv_direct_input(x, w, y, depthwise, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """x = the input gradient of conv given w and the output gradient y, by loops."""
    N, D, H, W, C = x.shape
    k0, k1, k2 = w.shape[0], w.shape[1], w.shape[2]
    x2, w3, groups, cg, og = _direct_plan(x, w, depthwise)
    o0, o1, o2 = y.shape[1], y.shape[2], y.shape[3]
    y2 = y.reshape((N * o0 * o1 * o2, groups * og))
    x[...] = 0
    r = 0
    for n in range(N):
        for q0 in range(o0):
            for q1 in range(o1):
                for q2 in range(o2):
                    gr = y2[r]
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
                                xr = x2[((n * D + z) * H + yy) * W + xx]
                                wt = w3[(i * k1 + j) * k2 + l]
                                for g in range(groups):
                                    gg = gr[g * og:(g + 1) * og]
                                    for c in range(cg):
                                        wr = wt[c, g * og:(g + 1) * og]
                                        acc = xr[g * cg + c]
                                        for f in range(og):
                                            acc += gg[f] * wr[f]
                                        xr[g * cg + c] = acc
                    r += 1


@njit(**_JIT)
def conv_direct_filter(x, w, y, depthwise, s0, s1, s2, d0, d1, d2, p0, p1, p2):
    """w = the filter gradient of conv given x and the output gradient y, by loops (the
    output channels innermost)."""
    N, D, H, W, C = x.shape
    k0, k1, k2 = w.shape[0], w.shape[1], w.shape[2]
    x2, w3, groups, cg, og = _direct_plan(x, w, depthwise)
    o0, o1, o2 = y.shape[1], y.shape[2], y.shape[3]
    y2 = y.reshape((N * o0 * o1 * o2, groups * og))
    w[...] = 0
    r = 0
    for n in range(N):
        for q0 in range(o0):
            for q1 in range(o1):
                for q2 in range(o2):
                    gr = y2[r]
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
                                xr = x2[((n * D + z) * H + yy) * W + xx]
                                wt = w3[(i * k1 + j) * k2 + l]
                                for g in range(groups):
                                    gg = gr[g * og:(g + 1) * og]
                                    for c in range(cg):
                                        v = xr[g * cg + c]
                                        wr = wt[c, g * og:(g + 1) * og]
                                        for f in range(og):
                                            wr[f] += v * gg[f]
                    r += 1


# -- pooling ----------------------------------------------------------------------------

@njit(**_JIT)
def _window_argmax(x2, nd, q0, q1, q2, k0, k1, k2, s0, s1, s2, p0, p1, p2, D, H, W, best, idx):
    """Every channel's first maximum (row-major window order) of one window: ``best[c]`` and
    ``idx[c]``, its row of ``x2`` (the input as [N*D*H*W, C]; ``nd`` = n * D). Channels are
    the inner loop, so the comparisons vectorize. False when the window holds no position."""
    C = best.shape[0]
    found = False
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
                row = ((nd + z) * H + yy) * W + xx
                if not found:
                    for c in range(C):
                        best[c] = x2[row, c]
                        idx[c] = row
                    found = True
                else:
                    for c in range(C):
                        v = x2[row, c]
                        take = v > best[c]
                        best[c] = v if take else best[c]
                        idx[c] = row if take else idx[c]
    return found


@njit(**_JIT)
def _window_max_into(x2, o, nd, q0, q1, q2, k0, k1, k2, s0, s1, s2, p0, p1, p2, D, H, W):
    """o[c] = channel c's maximum over one window (0 for a window of padding only)."""
    C = o.shape[0]
    found = False
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
                row = ((nd + z) * H + yy) * W + xx
                if not found:
                    for c in range(C):
                        o[c] = x2[row, c]
                    found = True
                else:
                    for c in range(C):
                        v = x2[row, c]
                        o[c] = v if v > o[c] else o[c]
    if not found:
        for c in range(C):
            o[c] = 0


@njit(**_JIT)
def pool_max(x, out, argmax, mode, k0, k1, k2, s0, s1, s2, p0, p1, p2, with_batch):
    """``mode`` 0: out = the window maxima; 1: also ``argmax`` = their flat input index
    (``((z * H + y) * W + x) * C + c``, plus n * D * H * W * C ``with_batch``)."""
    N, D, H, W, C = x.shape
    o0, o1, o2 = out.shape[1], out.shape[2], out.shape[3]
    x2 = x.reshape((N * D * H * W, C))
    out2 = out.reshape((N * o0 * o1 * o2, C))
    a2 = argmax.reshape((N * o0 * o1 * o2, C))
    best = np.empty(C, x.dtype)
    idx = np.empty(C, np.int64)
    orow = 0
    for n in range(N):
        for q0 in range(o0):
            for q1 in range(o1):
                for q2 in range(o2):
                    if mode == 0:
                        _window_max_into(x2, out2[orow], n * D, q0, q1, q2, k0, k1, k2,
                                         s0, s1, s2, p0, p1, p2, D, H, W)
                    else:
                        found = _window_argmax(x2, n * D, q0, q1, q2, k0, k1, k2, s0, s1, s2,
                                               p0, p1, p2, D, H, W, best, idx)
                        base = 0 if with_batch else n * D * H * W
                        for c in range(C):
                            out2[orow, c] = best[c] if found else 0
                            a2[orow, c] = (idx[c] - base) * C + c if found else c
                    orow += 1


@njit(**_JIT)
def pool_max_grad(x, g, out, mode, k0, k1, k2, s0, s1, s2, p0, p1, p2):
    """``mode`` 0 (MaxPoolGrad): out [like x] += g at each window's first maximum; 1
    (MaxPoolGradGrad): out [like the pooled output] = g [like x] at that maximum."""
    N, D, H, W, C = x.shape
    o = g if mode == 0 else out
    o0, o1, o2 = o.shape[1], o.shape[2], o.shape[3]
    x2 = x.reshape((N * D * H * W, C))
    if mode == 0:
        out[...] = 0
        src = g.reshape((N * o0 * o1 * o2, C))
        dst = out.reshape((N * D * H * W, C))
    else:
        src = g.reshape((N * D * H * W, C))
        dst = out.reshape((N * o0 * o1 * o2, C))
    best = np.empty(C, x.dtype)
    idx = np.empty(C, np.int64)
    orow = 0
    for n in range(N):
        for q0 in range(o0):
            for q1 in range(o1):
                for q2 in range(o2):
                    found = _window_argmax(x2, n * D, q0, q1, q2, k0, k1, k2, s0, s1, s2,
                                           p0, p1, p2, D, H, W, best, idx)
                    if mode == 0:
                        if found:
                            for c in range(C):
                                dst[idx[c], c] += src[orow, c]
                    else:
                        for c in range(C):
                            dst[orow, c] = src[idx[c], c] if found else 0
                    orow += 1


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
