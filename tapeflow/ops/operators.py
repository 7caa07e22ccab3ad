"""Python operators on tensors, installed on the core's ``_Operators`` class.

TensorFlow's math_ops overloads its Tensor the same way: the tensor type lives below the ops
and knows nothing of them; the ops give it ``+``, ``@``, ``[]`` and comparisons.
"""
from ..runtime import tensor
from . import array, linalg, math


def _eq(self, o):
    return False if o is None else math.equal(self, o, incompatible_shape_error=False)


def _ne(self, o):
    return True if o is None else math.not_equal(self, o, incompatible_shape_error=False)


def _binary(fn):
    return (lambda self, o: fn(self, o)), (lambda self, o: fn(o, self))


_BINARY = {"add": math.add, "sub": math.subtract, "mul": math.multiply, "truediv": math.truediv,
           "floordiv": math.floordiv, "mod": math.floormod, "pow": math.pow,
           "matmul": linalg.matmul, "and": math.logical_and, "or": math.logical_or}

_UNARY = {"__neg__": math.negative, "__abs__": math.abs, "__invert__": math.logical_not}

_COMPARE = {"__lt__": math.less, "__le__": math.less_equal, "__gt__": math.greater,
            "__ge__": math.greater_equal}


def install():
    cls = tensor._Operators
    for name, fn in _BINARY.items():
        forward, reflected = _binary(fn)
        setattr(cls, f"__{name}__", forward)
        setattr(cls, f"__r{name}__", reflected)
    for name, fn in {**_UNARY, **_COMPARE}.items():
        setattr(cls, name, fn)
    cls.__getitem__ = array.getitem
    cls.__eq__ = _eq
    cls.__ne__ = _ne
    tensor.STACK = array.stack


install()
