"""The table of convolution and pooling cases checked against TensorFlow 2.21 (test_conv_ops.py).

Written against the ``tf`` API alone (``facts(tf, case)``), so the same code computed the
facts in TensorFlow (tests/conv/make_tf_facts.py, run under /work/tfvenv) and computes them
in tapeflow. Inputs are fixed formulas, not random draws. Each case's facts: the output
shape, then weighted sums (weights ``_w``) of the output, of the first-order gradients and
of a second-order gradient: for a convolution d/dw of |dL/dx|^2 (the gradient of
Conv2DBackpropInput) and d/dx of |dL/dw|^2 (of Conv2DBackpropFilter); for a pooling the
gradient of <dL/dx, Q> with respect to the output weights (MaxPoolGradGrad, AvgPool).
"""
import numpy as np


def _x(shape, phase=0.1):
    n = int(np.prod(shape))
    return np.sin(0.37 * np.arange(n) + phase).reshape(shape)


def _w(shape, phase=0.3):
    n = int(np.prod(shape))
    return np.cos(0.23 * np.arange(n) + phase).reshape(shape)


EX = [[0, 0], [1, 2], [2, 0], [0, 0]]
CASES = []
_CH = [(2, 3, 4), (1, 1, 16), (1, 16, 3)]          # (batch, in channels, out channels)
for _pad in ("SAME", "VALID", EX):
    for _s, _d in ((1, 1), (2, 1), (1, 2)):
        for _k, (_n, _c, _o) in enumerate(_CH):
            _hw = (7, 6) if _k != 2 else (5, 5)
            CASES.append(dict(kind="conv2d", x=(_n,) + _hw + (_c,), w=(3, 2, _c, _o), s=_s,
                              d=_d, pad=_pad))
    for _s, _d in ((1, 1), (2, 1), (1, 2)):
        CASES.append(dict(kind="depthwise", x=(2, 7, 6, 3), w=(3, 2, 3, 2), s=_s, d=_d, pad=_pad))
    for _s in (1, 2):
        CASES.append(dict(kind="max_pool2d", x=(2, 7, 6, 3), k=(3, 2), s=_s,
                          pad=_pad if _pad != EX else [[0, 0], [1, 1], [1, 0], [0, 0]]))
for _pad in ("SAME", "VALID"):
    for _s in (1, 2):
        CASES.append(dict(kind="avg_pool2d", x=(2, 7, 6, 3), k=(3, 2), s=_s, pad=_pad))
        CASES.append(dict(kind="conv3d", x=(1, 5, 4, 3, 2), w=(3, 2, 2, 2, 3), s=_s, d=1,
                          pad=_pad))
        CASES.append(dict(kind="max_pool3d", x=(2, 5, 4, 3, 2), k=(2, 2, 3), s=_s, pad=_pad))
        CASES.append(dict(kind="avg_pool3d", x=(2, 5, 4, 3, 2), k=(2, 2, 3), s=_s, pad=_pad))
        CASES.append(dict(kind="conv1d", x=(2, 9, 3), w=(3, 3, 4), s=_s, d=1, pad=_pad))
        CASES.append(dict(kind="conv2d_transpose", x=(2, 4, 3, 4), w=(3, 3, 2, 4), s=_s, d=1,
                          pad=_pad, out=(2, 4 * _s, 3 * _s, 2) if _pad == "SAME" else
                          (2, 3 * _s + 3, 2 * _s + 3, 2)))
        CASES.append(dict(kind="conv2d_nchw", x=(2, 3, 7, 6), w=(3, 2, 3, 4), s=_s, d=1,
                          pad=_pad))
        CASES.append(dict(kind="max_pool_nchw", x=(2, 3, 7, 6), k=(3, 2), s=_s, pad=_pad))
CASES.append(dict(kind="conv2d", x=(1, 5, 5, 4), w=(3, 3, 2, 6), s=1, d=1, pad="SAME",
                  note="2 groups"))
CASES.append(dict(kind="conv1d", x=(1, 9, 2), w=(2, 2, 3), s=1, d=2, pad="SAME"))
CASES.append(dict(kind="conv3d", x=(1, 5, 4, 3, 2), w=(2, 2, 2, 2, 3), s=(1, 2, 1),
                  d=1, pad="SAME"))


def name(case):
    keys = ("kind", "x", "w", "k", "s", "d", "pad", "note")
    return " ".join(f"{k}={case[k]}" for k in keys if k in case).replace(" ", "")


def dtype(case):
    """float64, except where TensorFlow's CPU computes only float32 (its oneDNN kernels):
    3-D pooling, NCHW, the gradients of dilated convolutions."""
    f32 = case["kind"] in ("max_pool3d", "avg_pool3d", "conv2d_nchw", "max_pool_nchw") \
        or case.get("d") == 2
    return "float32" if f32 else "float64"


def _forward(tf, case, x, w):
    k, s, d, pad = case["kind"], case.get("s"), case.get("d"), case["pad"]
    if k == "conv2d":
        return tf.nn.conv2d(x, w, s, pad, dilations=d)
    if k == "conv2d_nchw":
        return tf.nn.conv2d(x, w, s, pad, data_format="NCHW", dilations=d)
    if k == "depthwise":
        return tf.nn.depthwise_conv2d(x, w, [1, s, s, 1], pad, dilations=[d, d])
    if k == "conv3d":
        ss = [1] + (list(s) if isinstance(s, tuple) else [s] * 3) + [1]
        return tf.nn.conv3d(x, w, ss, pad)
    if k == "conv1d":
        return tf.nn.conv1d(x, w, s, pad, dilations=d)
    if k == "conv2d_transpose":
        return tf.nn.conv2d_transpose(x, w, case["out"], s, pad)
    if k == "max_pool2d":
        return tf.nn.max_pool2d(x, case["k"], s, pad)
    if k == "max_pool_nchw":
        return tf.nn.max_pool2d(x, case["k"], s, pad, data_format="NCHW")
    if k == "avg_pool2d":
        return tf.nn.avg_pool2d(x, case["k"], s, pad)
    if k == "max_pool3d":
        return tf.nn.max_pool3d(x, case["k"], s, pad)
    if k == "avg_pool3d":
        return tf.nn.avg_pool3d(x, case["k"], s, pad)
    raise ValueError(k)


def _sum(tf, a, phase):
    """<a, weights>: a weighted sum that sees every element."""
    return tf.reduce_sum(a * tf.constant(_w(tuple(a.shape), phase).astype(a.dtype.name)))


def facts(tf, case, num=float):
    """[output shape as floats..., weighted output, first and second-order gradients];
    ``num`` makes a fact a number (inside a function: a float64 tensor)."""
    dt = dtype(case)
    x = tf.constant(_x(case["x"]).astype(dt))
    pooled = "w" not in case
    if pooled:
        y0 = _forward(tf, case, x, None)
        p = tf.constant(_w(tuple(y0.shape), 0.7).astype(dt))
        with tf.GradientTape() as outer:
            outer.watch(p)
            with tf.GradientTape() as inner:
                inner.watch([x, p])
                loss = tf.reduce_sum(_forward(tf, case, x, None) * p)
            gx = inner.gradient(loss, x)
            second = _sum(tf, gx, 0.5)
        gp = outer.gradient(second, p)
        return [float(v) for v in y0.shape] + [num(loss), num(_sum(tf, gx, 0.9)),
                                               num(_sum(tf, gp, 0.2))]
    w = tf.constant(_w(case["w"]).astype(dt))
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, w])
        with tf.GradientTape() as inner:
            inner.watch([x, w])
            y = _forward(tf, case, x, w)
            loss = _sum(tf, y, 0.7)
        gx, gw = inner.gradient(loss, [x, w])
        sx = tf.reduce_sum(gx * gx)
        sw = tf.reduce_sum(gw * gw)
    ggw = outer.gradient(sx, w)
    ggx = outer.gradient(sw, x)
    return [float(v) for v in y.shape] + [num(loss), num(_sum(tf, gx, 0.9)),
                                          num(_sum(tf, gw, 0.4)), num(_sum(tf, ggw, 0.2)),
                                          num(_sum(tf, ggx, 0.6))]


def forward_facts(tf, case, num=float):
    """[output shape..., weighted output]: where TensorFlow's CPU has no gradient kernel
    (grouped convolutions, NCHW max pooling in float32), the facts stop here."""
    dt = dtype(case)
    x = tf.constant(_x(case["x"]).astype(dt))
    w = None if "w" not in case else tf.constant(_w(case["w"]).astype(dt))
    y = _forward(tf, case, x, w)
    return [float(v) for v in y.shape] + [num(_sum(tf, y, 0.7))]
