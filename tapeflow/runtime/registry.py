"""Per-concern tables keyed by op name: NumPy kernels and gradient rules.

A gradient rule is written with tapeflow ops, so it runs eagerly, under an outer
tape (higher order) and under tracing alike. It *declares* what it reads: the
tape saves exactly those inputs/outputs and nothing else (ReLU keeps its output,
Add keeps nothing), and the compiler's partitioner will use the same declaration.
"""
from dataclasses import dataclass
from typing import Callable

KERNELS: dict[str, Callable] = {}
GRADS: dict[str, "GradRule"] = {}
# Gradients registered by name with tf.RegisterGradient (autodiff/custom_gradient.py), for
# gradient_override_map: dispatch records an overridden op with one of these rules.
USER_GRADS: dict[str, "GradRule"] = {}
# The rules that pass an IndexedSlices gradient on instead of densifying it (TensorFlow's
# ``_IdentityGrad``, ``_CastGrad``, ``_EnsureShapeGrad``): {name: fn(op, slices) -> [input
# grad]}. Every other rule gets an IndexedSlices densified, as TensorFlow's ops convert it.
SLICES_GRADS: dict[str, Callable] = {}
# Ops taking a shape as a tensor (DynamicReshape, ...): {name: fn(*inputs, **attrs)} giving
# their outputs through the static form of the op, used by dispatch when the shape input is
# known while tracing (a constant). Registered by the ops layer (ops/dims.py), which builds
# those static forms.
STATIC_FORMS: dict[str, Callable] = {}


@dataclass(frozen=True)
class GradRule:
    """``fn(op, *output_grads) -> [input_grad or None, ...]``.

    ``inputs``/``outputs`` are the indices the rule reads from ``op.inputs`` /
    ``op.outputs`` ("all" for every one). ``fn`` None means not differentiable.
    ``accepts_none``: outputs without a gradient arrive as None rather than zeros.
    ``holds``: ``holds(entry) -> [(what, bytes), ...]``, memory the rule will allocate for
    the recorded ``entry`` beyond what it saved (a compiled call's loop gradients), for
    ``GradientTape.saved_bytes``.
    """
    fn: Callable | None
    inputs: tuple | str = ()
    outputs: tuple | str = ()
    accepts_none: bool = False
    holds: Callable | None = None


def kernel(name):
    """Register the NumPy kernel ``fn(*arrays, **attrs) -> array | tuple``."""
    def deco(fn):
        if name in KERNELS:
            raise KeyError(f"kernel for {name!r} registered twice")
        KERNELS[name] = fn
        return fn
    return deco


def gradient(name, inputs=(), outputs=()):
    """Register the gradient rule of op ``name`` (see GradRule)."""
    def deco(fn):
        if name in GRADS:
            raise KeyError(f"gradient for {name!r} registered twice")
        GRADS[name] = GradRule(fn, inputs, outputs)
        return fn
    return deco


def slices_gradient(name):
    """Register op ``name``'s rule for an IndexedSlices gradient (see SLICES_GRADS)."""
    def deco(fn):
        if name in SLICES_GRADS:
            raise KeyError(f"IndexedSlices gradient for {name!r} registered twice")
        SLICES_GRADS[name] = fn
        return fn
    return deco


def not_differentiable(*names):
    """Ops whose gradient is None for every input (comparisons, Shape, ...)."""
    for n in names:
        if n in GRADS:
            raise KeyError(f"gradient for {n!r} registered twice")
        GRADS[n] = GradRule(None)
