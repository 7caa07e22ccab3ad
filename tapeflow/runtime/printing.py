"""``tf.print``'s text: TensorFlow's formatting of tensor values, and the printing itself.

TensorFlow formats a float32 like absl's ``SimpleFtoa`` (6 significant digits if they read
back as the same float, else 9: ``1e-08``, ``0.333333343``) and a float64 with 15 or 17
digits; booleans print as 1/0; an axis longer than ``2 * summarize`` shows its first and
last ``summarize`` entries around ``...``; nested dimensions are laid out as NumPy does
(one bracket per dimension, a blank line between blocks of rank 3 and more).
"""
import sys

import numpy as np

STREAMS = ("stderr", "stdout")


def format_scalar(x):
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (np.floating, float)):
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        kind = np.float32 if isinstance(x, (np.float32, np.float16)) else np.float64
        short, long_ = (6, 9) if kind is np.float32 else (15, 17)
        text = "%.*g" % (short, float(x))
        return text if kind(text) == x else "%.*g" % (long_, float(x))
    return str(x)


def format_tensor(value, summarize=3):
    """A tensor's value as ``tf.print`` shows it (``summarize=-1``: every element)."""
    a = np.asarray(value)
    if a.ndim == 0:
        return format_scalar(a[()])
    return _format_axis(a, summarize, 1)


def _format_axis(a, summarize, depth):
    n = a.shape[0]
    if summarize is not None and 0 <= summarize and n > 2 * summarize:
        rows, skipped = list(range(summarize)) + list(range(n - summarize, n)), summarize
    else:
        rows, skipped = list(range(n)), None
    if a.ndim == 1:
        items = [format_scalar(a[i]) for i in rows]
        if skipped is not None:
            items.insert(skipped, "...")
        return "[" + " ".join(items) + "]"
    items = [_format_axis(a[i], summarize, depth + 1) for i in rows]
    if skipped is not None:
        items.insert(skipped, "...")
    separator = "\n" * (a.ndim - 1) + " " * depth
    return "[" + separator.join(items) + "]"


def print_values(template, values, summarize, stream):
    """Fill ``template`` (``str.format`` fields, one per tensor) with the formatted values and
    write it to the stream named ``stream`` (looked up now, so redirected streams work)."""
    text = template.format(*[format_tensor(v, summarize) for v in values])
    out = sys.stdout if stream == "stdout" else sys.stderr
    out.write(text)
    out.flush()
