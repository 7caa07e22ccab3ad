"""Layer and activation cases run the same way in TF 2.21 (answers in keras_facts.py) and in
tapeflow (test_misc_layers.py)."""
import numpy as np

X = np.array([[-1.5, -0.5, 0.0, 0.3, 1.2, 3.0], [2.0, -2.5, 0.7, -0.1, 0.05, -4.0]], np.float32)
Y = np.array([[0.5, 1.0, -1.0, 2.0, 0.0, 1.5], [1.0, 0.2, 0.3, -0.7, 2.0, 1.0]], np.float32)
X3 = X.reshape(2, 3, 2)
Y3 = Y.reshape(2, 3, 2)

ACTIVATIONS = [("relu", {}), ("relu", {"negative_slope": 0.1, "max_value": 2.0, "threshold": 0.2}),
               ("leaky_relu", {}), ("relu6", {}), ("softmax", {}), ("elu", {"alpha": 0.5}), ("selu", {}),
               ("softplus", {}), ("softsign", {}), ("soft_shrink", {}), ("sparse_plus", {}), ("silu", {}),
               ("squareplus", {}), ("gelu", {}), ("gelu", {"approximate": True}), ("celu", {"alpha": 0.7}),
               ("glu", {}), ("tanh", {}), ("tanh_shrink", {}), ("hard_tanh", {}), ("hard_shrink", {}),
               ("threshold", {"threshold": 0.1, "default_value": -9.0}), ("sigmoid", {}), ("exponential", {}),
               ("hard_sigmoid", {}), ("log_sigmoid", {}), ("sparse_sigmoid", {}), ("hard_silu", {}),
               ("linear", {}), ("mish", {}), ("log_softmax", {}), ("sparsemax", {})]


def layer_outputs(keras):
    """(name, output) of each deterministic layer case."""
    L = keras.layers
    out = []

    def add(name, layer, inputs):
        out.append((name, np.asarray(layer(inputs)).astype(np.float64).tolist()))
    add("LeakyReLU", L.LeakyReLU(), X)
    add("ELU", L.ELU(alpha=0.5), X)
    add("PReLU", L.PReLU(alpha_initializer=keras.initializers.Constant(0.25)), X)
    add("PReLU_shared", L.PReLU(alpha_initializer=keras.initializers.Constant(0.1), shared_axes=[1]), X3)
    add("Multiply", L.Multiply(), [X, Y])
    add("Subtract", L.Subtract(), [X, Y])
    add("Average", L.Average(), [X, Y, X])
    add("Maximum", L.Maximum(), [X, Y])
    add("Minimum", L.Minimum(), [X, Y])
    add("Dot", L.Dot(axes=1), [X, Y])
    add("Dot_normalize", L.Dot(axes=1, normalize=True), [X, Y])
    add("Dot_3d", L.Dot(axes=(2, 2)), [X3, Y3])
    add("Dot_3d_axis1", L.Dot(axes=1), [X3, Y3])
    add("Permute", L.Permute((2, 1)), X3)
    add("RepeatVector", L.RepeatVector(2), X)
    add("Rescaling", L.Rescaling(1.0 / 255, offset=-1.0), X)
    add("Identity", L.Identity(), X)
    norm = L.Normalization()
    norm.adapt(np.concatenate([X, Y]))
    add("Normalization_adapt", norm, X)
    norm3 = L.Normalization(axis=None)
    norm3.adapt(X3)
    add("Normalization_axis_none", norm3, Y3)
    add("Normalization_invert", L.Normalization(mean=[0.5] * 6, variance=[4.0] * 6, invert=True), X)
    add("functional_concatenate", _functional(keras, "concatenate"), [X, Y])
    return out


def _functional(keras, name):
    return lambda inputs: getattr(keras.layers, name)(inputs)
