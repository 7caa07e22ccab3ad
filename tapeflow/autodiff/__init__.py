"""Reverse-mode autodiff on the eager runtime: gradient rules, the reverse sweep, GradientTape,
custom gradients and the explanation of None gradients."""
