"""tf.print (PrintV2) has no outputs: nothing to differentiate (tests/ops/test_print.py)."""
CASES = {}
NOT_DIFFERENTIABLE = ["PrintV2", "EagerPyFunc"]  # EagerPyFunc: tf.py_function in a function (tests/ops/test_py_function.py)
