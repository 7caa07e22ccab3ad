"""Keras layers of the convolution family on fixed inputs and weights, for test_conv_layers.py
and make_keras_facts.py (Keras 3's facts, under TensorFlow's interpreter). ``layers`` is
``keras.layers`` or ``tapeflow.keras.layers``."""
import numpy as np

LAYERS = [
    ("Conv2D", dict(filters=4, kernel_size=3), (2, 7, 6, 3)),
    ("Conv2D", dict(filters=4, kernel_size=(3, 2), strides=2, padding="same", activation="relu"),
     (2, 7, 6, 3)),
    ("Conv2D", dict(filters=6, kernel_size=3, groups=2, dilation_rate=2), (1, 9, 8, 4)),
    ("Conv2D", dict(filters=2, kernel_size=2, data_format="channels_first"), (2, 3, 5, 4)),
    ("Conv1D", dict(filters=2, kernel_size=3, padding="causal", dilation_rate=2), (2, 9, 3)),
    ("Conv1D", dict(filters=5, kernel_size=2, strides=2, padding="same"), (2, 9, 3)),
    ("Conv3D", dict(filters=2, kernel_size=2, padding="same"), (1, 4, 5, 3, 2)),
    ("Conv1DTranspose", dict(filters=3, kernel_size=3, strides=2), (2, 5, 2)),
    ("Conv2DTranspose", dict(filters=3, kernel_size=2, strides=2, padding="same"), (1, 4, 3, 5)),
    ("Conv2DTranspose", dict(filters=2, kernel_size=3, strides=2), (1, 4, 3, 5)),
    ("Conv3DTranspose", dict(filters=2, kernel_size=2, strides=(1, 2, 1)), (1, 2, 3, 2, 3)),
    ("DepthwiseConv2D", dict(kernel_size=3, depth_multiplier=2, padding="same"), (2, 5, 6, 3)),
    ("DepthwiseConv1D", dict(kernel_size=3, strides=2), (2, 9, 3)),
    ("SeparableConv2D", dict(filters=4, kernel_size=3, depth_multiplier=2), (2, 6, 5, 3)),
    ("SeparableConv1D", dict(filters=3, kernel_size=2, padding="same"), (2, 7, 2)),
    ("MaxPooling2D", dict(), (2, 7, 6, 3)),
    ("MaxPooling2D", dict(pool_size=3, strides=2, padding="same"), (2, 7, 6, 3)),
    ("MaxPooling1D", dict(pool_size=3), (2, 9, 3)),
    ("MaxPooling3D", dict(pool_size=(2, 2, 1)), (1, 4, 5, 3, 2)),
    ("AveragePooling2D", dict(pool_size=(3, 2), padding="same"), (2, 7, 6, 3)),
    ("AveragePooling1D", dict(pool_size=2, strides=1), (2, 9, 3)),
    ("AveragePooling3D", dict(pool_size=2, padding="same"), (1, 4, 5, 3, 2)),
    ("AveragePooling2D", dict(pool_size=2, data_format="channels_first"), (2, 3, 6, 4)),
    ("GlobalMaxPooling2D", dict(), (2, 7, 6, 3)),
    ("GlobalAveragePooling2D", dict(keepdims=True), (2, 7, 6, 3)),
    ("GlobalAveragePooling1D", dict(), (2, 9, 3)),
    ("GlobalMaxPooling3D", dict(keepdims=True), (1, 4, 5, 3, 2)),
    ("GlobalAveragePooling3D", dict(data_format="channels_first"), (1, 4, 5, 3, 2)),
    ("GlobalMaxPooling1D", dict(), (2, 9, 3)),
    ("UpSampling2D", dict(size=(2, 3)), (1, 3, 2, 2)),
    ("UpSampling2D", dict(interpolation="bilinear"), (1, 3, 4, 2)),
    ("UpSampling1D", dict(size=3), (2, 4, 3)),
    ("UpSampling3D", dict(size=(1, 2, 2)), (1, 2, 2, 3, 2)),
    ("ZeroPadding2D", dict(padding=((1, 0), (2, 1))), (1, 3, 2, 2)),
    ("ZeroPadding1D", dict(padding=2), (2, 4, 3)),
    ("ZeroPadding3D", dict(padding=1), (1, 2, 2, 3, 2)),
    ("Cropping2D", dict(cropping=((1, 0), (2, 1))), (1, 5, 6, 2)),
    ("Cropping1D", dict(cropping=(2, 1)), (2, 6, 3)),
    ("Cropping3D", dict(cropping=1), (1, 4, 4, 3, 2)),
    ("Conv2DTranspose", dict(filters=2, kernel_size=3, strides=2, output_padding=1),
     (1, 4, 3, 5)),
    ("Conv1DTranspose", dict(filters=2, kernel_size=3, strides=3, padding="same",
                             output_padding=2), (2, 5, 2)),
    ("Conv3DTranspose", dict(filters=2, kernel_size=3, strides=2, padding="same",
                             output_padding=(1, 0, 1)), (1, 2, 3, 2, 3)),
    ("Conv2DTranspose", dict(filters=3, kernel_size=(3, 2), strides=(3, 2), output_padding=(2, 1),
                             data_format="channels_first"), (1, 5, 3, 4)),
    ("AdaptiveAveragePooling1D", dict(output_size=4), (2, 11, 3)),
    ("AdaptiveMaxPooling1D", dict(output_size=(3,)), (2, 7, 3)),
    ("AdaptiveAveragePooling2D", dict(output_size=(3, 5)), (2, 7, 6, 3)),
    ("AdaptiveMaxPooling2D", dict(output_size=4), (2, 7, 6, 3)),
    ("AdaptiveMaxPooling2D", dict(output_size=(2, 3), data_format="channels_first"),
     (2, 3, 5, 7)),
    ("AdaptiveAveragePooling2D", dict(output_size=(9, 4)), (1, 5, 6, 2)),
    ("AdaptiveAveragePooling3D", dict(output_size=(2, 3, 2)), (1, 5, 4, 3, 2)),
    ("AdaptiveMaxPooling3D", dict(output_size=2, data_format="channels_first"),
     (1, 2, 5, 4, 3)),
    ("ConvLSTM2D", dict(filters=3, kernel_size=3, padding="same", return_sequences=True),
     (2, 4, 5, 6, 2)),
    ("ConvLSTM1D", dict(filters=2, kernel_size=2, strides=2, go_backwards=True), (2, 3, 7, 3)),
    ("ConvLSTM2D", dict(filters=2, kernel_size=(3, 2), dilation_rate=2,
                        data_format="channels_first"), (1, 3, 2, 7, 6)),
    ("ConvLSTM3D", dict(filters=2, kernel_size=2, padding="same", use_bias=False,
                        return_sequences=True), (1, 2, 3, 4, 3, 2)),
    ("ConvLSTM2D", dict(filters=2, kernel_size=2, activation="softsign",
                        recurrent_activation="hard_sigmoid", unit_forget_bias=False),
     (2, 3, 4, 4, 1)),
]


def name(i, entry):
    return f"{i}:{entry[0]}"


def _x(shape):
    return np.sin(0.37 * np.arange(int(np.prod(shape))) + 0.1).reshape(shape).astype(np.float32)


def facts(layers, entry):
    cls, kw, shape = entry
    layer = getattr(layers, cls)(**kw)
    x = _x(shape)
    layer(x)
    layer.set_weights([np.cos(0.29 * np.arange(w.size) + k).reshape(w.shape).astype(np.float32)
                       for k, w in enumerate(layer.get_weights())])
    y = np.asarray(layer(x))
    w = np.cos(0.23 * np.arange(y.size) + 0.3).reshape(y.shape)
    return [float(v) for v in y.shape] + [float(np.sum(y * w)), float(np.abs(y).sum())]
