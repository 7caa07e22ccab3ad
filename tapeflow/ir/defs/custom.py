"""CustomGradient: a traced ``custom_gradient`` call (TensorFlow's IdentityN with a gradient override).

Operands: the call's inputs (n_in), values its gradient function reads from the
forward (n_cap), then the forward outputs; results: the forward outputs. The
``grad`` attribute is the gradient function traced into a Graph taking
(upstream gradients..., captured values...) and returning the gradients of the
inputs marked in ``mask``. Its outputs are copies, so gradients reach the inputs
only through ``grad``.
"""
from ...errors import InferError
from ..opdef import defop


def _custom(avals, grad, n_in, n_cap, mask):
    outs = tuple(avals[n_in + n_cap:])
    if not outs:
        raise InferError("CustomGradient needs at least one output")
    return outs


defop("CustomGradient", _custom, arity=None,
      attrs={"grad": "gradient", "n_in": "int", "n_cap": "int", "mask": "bools"}, multi_output=True)
