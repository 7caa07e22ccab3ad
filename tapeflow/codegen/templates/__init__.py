"""CODEGEN: how each op is emitted, keyed by op name like the kernels and gradient rules.

A template has one of three forms:

- ``scalar(args, ins, out, **attrs) -> expression``: an elementwise op written for ONE
  element. Such ops never get loops of their own: the fusion planner groups them into loops
  (``codegen/loop_nest.py``), which handle broadcasting by index arithmetic.
- ``reduce``: a ``Reduction`` (init / combine / finalize), folded into the loop of the
  elementwise chain that feeds it.
- ``emit(em, node)``: any other op, writing statements through the ``Emitter``.

The table and its decorators live in ``registry.py``; importing this package fills it.
"""
from .registry import CODEGEN, Template, reduce_op, scalar_op, stmt_op
from . import elementwise, reduce, array, linalg, linalg_decomp, nn, custom, control, debug, io, loops, lists, ragged, random, samplers, scan, special, indexing, sort  # noqa: F401  (fill CODEGEN)
from . import shape_tensors  # noqa: F401  (fill CODEGEN: ops taking a shape as a tensor)

__all__ = ["CODEGEN", "Template", "reduce_op", "scalar_op", "stmt_op"]
from . import conv  # noqa: F401  (the convolution and pooling family)
from . import segment  # noqa: F401  (segment max, min and product)
from . import lrn  # noqa: F401  (LRN and LRNGrad)
from . import isotonic  # noqa: F401  (IsotonicRegression)
from . import bitcast  # noqa: F401  (Bitcast)
from . import parallel_concat  # noqa: F401  (ParallelConcat)
from . import morphology  # noqa: F401  (Dilation2D and its backprops)
from . import fractional_pool  # noqa: F401  (FractionalMaxPool, FractionalAvgPool, their gradients)
from . import conv_raw  # noqa: F401  (the generic Conv op of tf.conv)
