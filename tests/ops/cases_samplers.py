"""The stateless samplers: categorical, Poisson, binomial and the index shuffle have no
gradient (TensorFlow's NotDifferentiable). Gamma's and the truncated normal's gradients are
implicit (the sample's derivative at a fixed CDF, not the derivative of the sampling path), so
a finite-difference check does not apply: tests/api_names/test_random_samplers.py checks them
against TensorFlow's values."""
CASES = {}
NOT_DIFFERENTIABLE = ["StatelessMultinomial", "StatelessRandomPoisson", "StatelessRandomBinomial",
                      "RandomIndexShuffle"]
