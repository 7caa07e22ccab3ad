"""Gradient of CustomGradient: replay the traced gradient function on the upstream gradients.

A CustomGradient loaded from a saved program that was saved without its gradient
graph (``SaveOptions(experimental_custom_gradients=False)``), in another process
than the one that saved it, has none: differentiating it raises TensorFlow's
``LookupError``.
"""
from ...errors import InternalError
from ...runtime.interpret import replay
from ...runtime.registry import gradient


@gradient("CustomGradient", inputs="all")
def _custom(op, *upstream):
    n_in, n_cap, mask = op.attrs["n_in"], op.attrs["n_cap"], op.attrs["mask"]
    if op.attrs["grad"] is None:
        raise LookupError("No gradient defined for operation 'CustomGradient' (op type: "
                          "CustomGradient): it comes from a saved program saved without custom "
                          "gradients; save with tapeflow.saved_model.SaveOptions("
                          "experimental_custom_gradients=True) to keep them")
    error = getattr(op.attrs["grad"], "error", None)   # custom_gradient.FailedGradient
    if error is not None:
        # what TensorFlow's tape raises inside a function (through one, vjp_graph says ValueError)
        raise InternalError(f"Recorded operation 'CustomGradient' returned {error.got} "
                            f"gradients; expected {error.expected}: {error}") from error
    captured = list(op.inputs[n_in:n_in + n_cap])
    grads = iter(replay(op.attrs["grad"], list(upstream) + captured))
    result = [next(grads) if has else None for has in mask]
    return result + [None] * (len(op.inputs) - n_in)
