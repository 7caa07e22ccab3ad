"""Gradient checks of the run-time checks: CheckNumerics passes its gradient through (checked
too); Assert has no outputs."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

_rng = np.random.default_rng(7)

CASES = {
    "CheckNumerics": [
        Case(lambda x: tf.debugging.check_numerics(x * x, "square") * x,
             [_rng.uniform(-1, 1, (2, 3))]),
        Case(lambda x, y: tf.debugging.check_numerics(tf.sin(x) * y, "prod"),
             [_rng.uniform(-1, 1, (3,)), _rng.uniform(-1, 1, (3,))], note="two inputs"),
    ],
    # no gradient in TF (LookupError, tests/slices/test_type_names.py): the case only takes
    # the op through the tape's forward and the compiled-vs-interpreted samples
    "GuaranteeConst": [Case(lambda x: tf.guarantee_const(tf.constant([0.5, -1.5, 2.0], tf.float64)) * x,
                            [_rng.uniform(-1, 1, (3,))], note="forward only")],
}
NOT_DIFFERENTIABLE = ["Assert"]  # no outputs (tests/api_names/test_debugging.py)
