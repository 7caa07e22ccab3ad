"""Gradient-check cases of TopKV2 (through top_k and sort); no ties (TF's rule sends a tie's
gradient to the lower index, which finite differences cannot see)."""
import numpy as np

import tapeflow as tf

from ops.cases import Case

X = np.array([[0.3, -1.2, 2.5, 0.9], [1.7, 0.1, -0.4, -2.2]])

CASES = {
    "TopKV2": [Case(lambda x: tf.math.top_k(x, k=2).values * tf.math.top_k(x, k=2).values, [X]),
               Case(lambda x: tf.sort(x, axis=0, direction="ASCENDING") * x, [X],
                    note="sort along axis 0")],
}
NOT_DIFFERENTIABLE = ["InTopKV2"]
