"""Symbolic tensors: stand-ins for values inside a traced function.

They flow through the same op functions as eager tensors; dispatch adds a node
to the graph being traced for every op that sees one. Asking for a concrete
value (``bool``, ``float``, ``.numpy()``) is an error that names the user's line,
since the value does not exist until the compiled program runs.
"""
from ..errors import OperatorNotAllowedInGraphError, user_line
from ..runtime.recorder import current_trace
from ..runtime.tensor import TensorShape, _next_id, _Operators


class TracingError(OperatorNotAllowedInGraphError):
    """A traced function asked for something only a concrete value has (TensorFlow's
    ``OperatorNotAllowedInGraphError``, a ``TypeError``)."""


class SymbolicTensor(_Operators):
    """A tensor inside a trace: an IR Value plus a tape id."""

    __slots__ = ("_id", "value", "_name", "__weakref__")

    def __init__(self, value, name=None):
        self._id = _next_id()
        self.value = value
        self._name = name

    @property
    def name(self):
        """TensorFlow's graph tensor name, ``"x:0"``: an argument's name, or the op's type made
        unique in its trace, with the output index (beyond TF: op types, not Python op names)."""
        if self._name is not None:
            return self._name
        node = self.value.node
        if node is None:
            return "input:0"
        return f"{node.op}:{node.outputs.index(self.value)}"

    @property
    def aval(self):
        return self.value.aval

    @property
    def shape(self):
        return TensorShape(self.value.aval.shape)

    def get_shape(self):
        return self.shape

    @property
    def dtype(self):
        return self.value.aval.dtype

    @property
    def ndim(self):
        return len(self.value.aval.shape)

    def _concrete(self, what):
        raise TracingError(
            f"{what} of a symbolic tensor inside tapeflow.function at {user_line()}: its value is "
            f"not known while tracing. Use tapeflow ops (tf.where, tf.cond) instead of Python "
            f"control flow on tensors, or compute this outside the function.")

    def __bool__(self):
        ctx = current_trace()
        if ctx is None:
            self._concrete("Python truth value (if/while/and/or)")
        return ctx.decide(self, "Python truth value (if/while/and/or)")

    def __float__(self):
        self._concrete("float()")

    def __int__(self):
        self._concrete("int()")

    def __index__(self):
        self._concrete("Using as an index")

    def numpy(self):
        if current_trace() is None:
            # as TensorFlow's graph tensors, which have no ``numpy`` at all
            raise AttributeError(
                f"'SymbolicTensor' object has no attribute 'numpy': {self!r} was made inside a "
                f"tapeflow.function trace and has no value outside it (at {user_line()}); return "
                f"it from the function instead.")
        self._concrete(".numpy()")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(
            f"Cannot convert a symbolic tensor to a NumPy array (at {user_line()}): NumPy cannot "
            f"see values inside tapeflow.function; use tapeflow ops instead.")

    def __len__(self):
        if not self.shape or self.shape[0] is None:
            # TensorFlow's words (with autograph off; its autograph makes len a tensor)
            raise TypeError(f"len is not well defined for a symbolic Tensor ({self.name}) of "
                            f"shape {self.shape}. Please call `x.shape` rather than `len(x)` "
                            f"for shape information, or tf.shape(x)[0] for the size at run "
                            f"time (at {user_line()}).")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        shape = "<unknown>" if self.value.aval.shape is None else self.shape
        return f"<tf.Tensor '{self.name}' shape={shape} dtype={self.dtype.name}>"

    def __str__(self):
        shape = "" if self.value.aval.shape is None else f", shape={self.shape}"
        return f'Tensor("{self.name}"{shape}, dtype={self.dtype.name})'


__all__ = ["SymbolicTensor", "TracingError"]
