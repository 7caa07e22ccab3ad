"""The two ways a seed example runs in a ``tapeflow.function`` (as in the TF oracle, ../shared/tf-oracle).

"through": the forward computation is a ``tf.function`` called under eager tapes;
"inside":  the tapes and ``gradient`` calls run inside a ``tf.function``.
A test writes its tapes once as ``run(body, *args)`` and asks ``in_mode`` for either.
"""
import pytest

import tapeflow as tf

MODES = ("through", "inside")
modes = pytest.mark.parametrize("mode", MODES)


def in_mode(mode, run, body, *args):
    """``run(body, *args)`` with ``body`` compiled (through) or all of ``run`` compiled (inside)."""
    if mode == "through":
        return run(tf.function(body), *args)
    if mode == "inside":
        return tf.function(lambda *a: run(body, *a))(*args)
    raise ValueError(mode)
