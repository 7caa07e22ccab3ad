"""Kernels of CheckNumerics and Assert (ir/defs/debug.py): raise TensorFlow's message when the
check fails; ``dispatch`` then names the op, its inputs and the user's line."""
import numpy as np

from ..registry import kernel


def _numerics_problem(x):
    """TensorFlow's words for what ``x`` holds that is not finite ("NaN", "Inf", "Inf and
    NaN"), or None."""
    nan, inf = bool(np.isnan(x).any()), bool(np.isinf(x).any())
    if not (nan or inf):
        return None
    return "Inf and NaN" if nan and inf else ("NaN" if nan else "Inf")


@kernel("CheckNumerics")
def _check_numerics(x, message):
    problem = _numerics_problem(x)
    if problem is not None:
        raise ValueError(f"{message} : Tensor had {problem} values")
    return x


def _element(v):
    """One value as TensorFlow's ``PrintOneElement``: the shortest of %.6g/%.9g (float32) or
    %.15g/%.17g (float64) that reads back the same, ints as ints, bools as 1/0."""
    if isinstance(v, (np.bool_, bool)):
        return "1" if v else "0"
    if isinstance(v, np.floating):
        short, long_ = (6, 9) if v.dtype.itemsize <= 4 else (15, 17)
        text = "%.*g" % (short, v)
        if np.isfinite(v) and v.dtype.type(text) != v:
            text = "%.*g" % (long_, v)
        return text
    return str(v)


def summarize_value(a, summarize):
    """``a`` printed as TensorFlow's ``Tensor::SummarizeValue(summarize)``: the first
    ``summarize`` elements (all for a negative one) in nested brackets, "..." where cut."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    limit = flat.size if summarize < 0 else min(summarize, flat.size)
    if a.ndim == 0:
        return _element(flat[0]) if limit else ""
    out, index = [], [0]

    def one_dim(dim):
        if index[0] >= limit:
            return
        if dim == a.ndim - 1:
            for i in range(a.shape[dim]):
                if index[0] >= limit:
                    if dim != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(_element(flat[index[0]]))
                index[0] += 1
            return
        for _ in range(a.shape[dim]):
            opened = index[0] < limit
            if opened:
                out.append("[")
            one_dim(dim + 1)
            if index[0] < limit or opened:
                out.append("]")

    one_dim(0)
    if flat.size > limit:
        out.append("...")
    return "".join(out)


@kernel("Assert")
def _assert(cond, *data, template, summarize):
    if not cond:
        raise ValueError("assertion failed: " +
                         template.format(*[summarize_value(d, summarize) for d in data]))
    return ()


@kernel("GuaranteeConst")
def _guarantee_const(x):
    return x
