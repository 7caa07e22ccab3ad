"""``tf.print``: print tensors' values when the code runs (eagerly now; in a function, each call).

The Python values and the structure of the arguments are formatted once, into a template
with one field per tensor; the tensors are formatted when the print runs (``PrintV2``).
"""
from __future__ import annotations

import sys
from typing import TextIO

from .. import _nest
from ..runtime.dispatch import apply
from ..runtime.tensor import Tensor, Variable


class _Field:
    """A tensor's place in the printed structure: ``str()`` of the structure shows a field."""

    def __repr__(self):
        return "\x00"


def _literal(text):
    """``text`` as literal text of a ``str.format`` template."""
    return text.replace("{", "{{").replace("}", "}}")


def _stream_name(stream):
    if stream is sys.stderr or stream is None:
        return "stderr"
    if stream is sys.stdout:
        return "stdout"
    raise ValueError(f"tapeflow.print: output_stream must be sys.stderr or sys.stdout, got {stream!r}")


def print(*inputs, output_stream: TextIO | None = None, summarize: int = 3,  # noqa: A001
          sep: str = " ", end: str = "\n", name: str | None = None) -> None:
    """Print tensors and Python values, as TensorFlow prints them (to stderr by default).

    Print ``inputs`` as TensorFlow does: tensors by their values (``summarize`` entries
    from each end of an axis; -1 for all), strings as they are, other Python values and
    structures as Python prints them with the tensors' values in place. ``output_stream``:
    ``sys.stderr`` (the default, as in TensorFlow) or ``sys.stdout``.

    Args:
      *inputs: tensors, strings and Python values (structures too) to print.
      output_stream: ``sys.stderr`` (the default) or ``sys.stdout``.
      summarize: entries shown from each end of an axis (-1: all).
      sep: the text between inputs.
      end: the text after the last input.

    >>> import sys
    >>> tf.print("x:", tf.constant([1.0, 2.0]), output_stream=sys.stdout)
    x: [1 2]
    >>> tf.print(tf.range(10), summarize=2, output_stream=sys.stdout)
    [0 1 ... 8 9]
    """
    tensors = []

    def field(x):
        if isinstance(x, (Tensor, Variable)) or hasattr(x, "aval"):
            tensors.append(x)
            return _Field()
        return x

    parts = []
    for item in inputs:
        if isinstance(item, str):
            parts.append(_literal(item))
        else:
            shown = _nest.map_structure(field, item)
            text = "\x00" if isinstance(shown, _Field) else str(shown)
            parts.append(_literal(text).replace("\x00", "{}"))
    template = _literal(str(sep)).join(parts) + _literal(str(end))
    apply("PrintV2", tensors, {"template": template, "summarize": int(summarize),
                               "stream": _stream_name(output_stream)})


__all__ = ["print"]
