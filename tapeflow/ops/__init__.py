"""The public op functions, by family. Each builds on ``runtime.dispatch.apply``.

Functions here handle TensorFlow's argument conventions (defaults, Python
values, composite ops built from primitives); the primitives themselves are
defined once in ``ir.defs`` with kernels and gradient rules beside them.
Importing this package gives tensors their Python operators (``operators``).
"""
from . import array, clip, creation, io, linalg, math, nn, reduce  # noqa: F401
from . import operators  # noqa: F401
