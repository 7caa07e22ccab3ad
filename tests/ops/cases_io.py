"""tf.print (PrintV2) has no outputs: nothing to differentiate (tests/ops/test_print.py)."""
CASES = {}
NOT_DIFFERENTIABLE = ["PrintV2"]
