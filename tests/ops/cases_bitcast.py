"""Bitcast is not differentiable (None, as TensorFlow); tests/codegen/samples.py compiles it."""
CASES = {}
NOT_DIFFERENTIABLE = ["Bitcast"]
