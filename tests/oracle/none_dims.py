"""The oracle's programs with every function traced with None dims: ``tf`` stands for tapeflow
except that ``tf.function`` traces each tensor argument with every dim unknown (an
``input_signature`` of ``TensorSpec([None] * rank)`` built from the first call; variables
keep their shapes, as TensorFlow's), so one graph must give TensorFlow's results at every
size the program uses."""
import functools

import numpy as np

import tapeflow


class NoneDimsLib:
    """``tapeflow`` with ``function`` tracing tensor arguments with None dims."""

    def __init__(self):
        self.traced = []   # per function, the signature it was traced with

    def __getattr__(self, name):
        return getattr(tapeflow, name)

    def function(self, func=None, **kw):
        if func is None:
            return functools.partial(self.function, **kw)
        lib, made = self, {}

        @functools.wraps(func)
        def call(*args):
            if "f" not in made:
                sig = [_spec(a) for a in args]
                if any(s is None for s in sig):   # a Python value: TensorFlow needs tensors
                    made["f"] = tapeflow.function(func, **kw)
                else:
                    made["f"] = tapeflow.function(func, input_signature=sig, **kw)
                    lib.traced.append(sig)
            return made["f"](*args)
        return call


def _spec(x):
    if isinstance(x, tapeflow.Variable):
        return tapeflow.TensorSpec(x.shape, x.dtype)
    if isinstance(x, (tapeflow.Tensor, np.ndarray)) or hasattr(x, "aval"):
        return tapeflow.TensorSpec([None] * len(x.shape), x.dtype)
    return None
