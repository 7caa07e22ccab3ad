"""Batching rules: how each op runs on values with a leading batch dimension (``passes.vectorize``).

``BATCHERS[op](b, node, inputs, batched) -> [(value, batched), ...]`` per output, where
``b`` is the ``vectorize.Builder``, ``inputs`` the node's inputs in the new graph and
``batched`` which of them carry the batch dimension at axis 0 (at least one does).
A rule may return None to ask for the loop fallback (e.g. a case it does not cover).
Rules are declared per op family, like kernels, gradient rules and codegen templates;
``tests/passes/test_vectorize.py`` checks every rule against the loop on random inputs.
"""
from .registry import BATCHERS, batching, shift_axis
from . import array, control, debug, elementwise, io, linalg, lists, nn, random, reduce, samplers, scan, indexing, sort  # noqa: F401  (register the rules)

__all__ = ["BATCHERS", "batching", "shift_axis"]
from . import conv  # noqa: F401  (the convolution and pooling family)
from . import segment  # noqa: F401  (segment max, min and product)
from . import lrn  # noqa: F401  (LRN and LRNGrad)
from . import isotonic  # noqa: F401  (IsotonicRegression)
from . import bitcast  # noqa: F401  (Bitcast)
from . import parallel_concat  # noqa: F401  (ParallelConcat)
from . import morphology  # noqa: F401  (Dilation2D and its backprops)
from . import fractional_pool  # noqa: F401  (FractionalMaxPool, FractionalAvgPool, their gradients)
from . import conv_raw  # noqa: F401  (the generic Conv op of tf.conv)
