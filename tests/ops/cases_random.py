"""The stateless random ops have no gradient (TensorFlow's NotDifferentiable); their values
are checked against TensorFlow's in tests/api_names/test_random.py."""
CASES = {}
NOT_DIFFERENTIABLE = ["StatelessRandomGetKeyCounter", "StatelessRandomUniformV2",
                      "StatelessRandomNormalV2", "StatelessTruncatedNormalV2",
                      "StatelessRandomUniformIntV2", "StatelessRandomUniformFullIntV2"]
