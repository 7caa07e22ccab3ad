"""Neural-network ops: activations, softmax, and the *Grad ops their gradients are made of.

The *Grad ops (ReluGrad(g, y) ...) exist, as in TensorFlow, so that the gradient of a
gradient has TensorFlow's structure: their own gradients give zeros, not None, for
the saved activation.
"""
from ...errors import InferError
from ..opdef import AVal, FLOATS, NUMERIC, check_dtype, check_same_dtype, def_unary, defop
from ..shapes import normalize_axis


def _grad_pair(allowed):
    """(gradients, features) -> a tensor like both; TF requires equal shapes, no broadcasting."""
    def infer(avals, **attrs):
        dt = check_same_dtype(avals)
        check_dtype(avals[0], allowed)
        g, x = avals
        if len(g.shape) != len(x.shape) or any(a is not None and b is not None and a != b
                                               for a, b in zip(g.shape, x.shape)):
            raise InferError(f"gradients and features must have the same shape: "
                             f"{list(g.shape)} vs. {list(x.shape)}")
        return AVal(x.shape, dt)
    return infer


for _name, _allowed in (("Relu", NUMERIC), ("Relu6", NUMERIC), ("Elu", FLOATS), ("Selu", FLOATS)):
    def_unary(_name, _allowed)
    defop(_name + "Grad", _grad_pair(_allowed), arity=2, same_dtype=(0, 1), kind="elementwise",
          linear_in=(0,), same_shape=True)


def _leaky_relu(avals, alpha=0.2):
    check_dtype(avals[0], FLOATS)
    return avals[0]


defop("LeakyRelu", _leaky_relu, attrs={"alpha": "number"}, kind="elementwise")
defop("LeakyReluGrad", _grad_pair(FLOATS), arity=2, attrs={"alpha": "number"}, same_dtype=(0, 1),
      kind="elementwise", linear_in=(0,), same_shape=True)
def_unary("Softplus", FLOATS)
def_unary("Softsign", FLOATS)


def _softmax(avals, axis=-1):
    x = avals[0]
    check_dtype(x, FLOATS, "logits")
    if not x.shape:
        raise InferError("logits must have >= 1 dimension, got shape []")
    normalize_axis(axis, len(x.shape))
    return x


def _softmax_keeps_rows(attrs, flags, in_avals, out_avals):
    """Rows stay apart unless the softmax runs along the batch axis."""
    return attrs.get("axis", -1) % len(in_avals[0].shape) != 0


defop("Softmax", _softmax, attrs={"axis": "axis"}, keeps_rows=_softmax_keeps_rows)
defop("LogSoftmax", _softmax, attrs={"axis": "axis"}, keeps_rows=_softmax_keeps_rows)
