"""The keras-io guide "Writing a training loop from scratch in TensorFlow": a ``GradientTape``
loop over a ``tf.data`` pipeline (``from_tensor_slices -> shuffle -> batch``), the metrics'
``update_state``/``result``/``reset_state``, a validation loop, the same steps compiled with
``tf.function``, and a layer's ``add_loss`` summed into the loss, on synthetic uint8 "MNIST" of
the real shapes (tests/keras/guide_data.py; fewer samples and epochs). Each program is a
function of the ``tf`` and ``keras`` modules: TensorFlow 2.21 ran the same code, with the same
initial weights and unshuffled batches, for the figures quoted.
"""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import keras
from tapeflow.keras import backend

from guide_data import digits, initial_weights

BATCH_SIZE = 32
X_ALL, Y_ALL = digits(320, seed=7, as_uint8=True)     # keras.datasets.mnist's dtypes
X_VAL, Y_VAL = X_ALL[-64:], Y_ALL[-64:]
X_TRAIN, Y_TRAIN = X_ALL[:-64], Y_ALL[:-64]


@pytest.fixture(autouse=True)
def _setup(numpy_backend):
    backend.clear_session()
    tf.random.set_seed(0)


def get_model(keras):
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = keras.layers.Dense(64, activation="relu")(inputs)
    x2 = keras.layers.Dense(64, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.set_weights(initial_weights(model, scale=0.002))
    return model


def datasets(tf, shuffle):
    train_dataset = tf.data.Dataset.from_tensor_slices((X_TRAIN, Y_TRAIN))
    if shuffle:
        train_dataset = train_dataset.shuffle(buffer_size=1024)
    train_dataset = train_dataset.batch(BATCH_SIZE)
    val_dataset = tf.data.Dataset.from_tensor_slices((X_VAL, Y_VAL)).batch(BATCH_SIZE)
    return train_dataset, val_dataset


def eager_loop(tf, keras, shuffle=True, epochs=2):
    model = get_model(keras)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    train_dataset, val_dataset = datasets(tf, shuffle)
    losses, accuracies = [], []
    for epoch in range(epochs):
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            with tf.GradientTape() as tape:
                logits = model(x_batch_train, training=True)
                loss_value = loss_fn(y_batch_train, logits)
            grads = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply(grads, model.trainable_weights)
            train_acc_metric.update_state(y_batch_train, logits)
            losses.append(float(loss_value))
        train_acc = train_acc_metric.result()
        train_acc_metric.reset_state()
        for x_batch_val, y_batch_val in val_dataset:
            val_logits = model(x_batch_val, training=False)
            val_acc_metric.update_state(y_batch_val, val_logits)
        val_acc = val_acc_metric.result()
        val_acc_metric.reset_state()
        accuracies.append((float(train_acc), float(val_acc)))
    return losses, accuracies


def compiled_loop(tf, keras, shuffle=True, epochs=2):
    model = get_model(keras)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    train_dataset, val_dataset = datasets(tf, shuffle)
    losses, accuracies = [], []
    for epoch in range(epochs):
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            losses.append(float(train_step(x_batch_train, y_batch_train)))
        train_acc = train_acc_metric.result()
        train_acc_metric.reset_state()
        for x_batch_val, y_batch_val in val_dataset:
            test_step(x_batch_val, y_batch_val)
        val_acc = val_acc_metric.result()
        val_acc_metric.reset_state()
        accuracies.append((float(train_acc), float(val_acc)))
    return losses, accuracies


def added_loss_step(tf, keras):
    class ActivityRegularizationLayer(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_sum(inputs))
            return inputs

    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu")(inputs)
    x = ActivityRegularizationLayer()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.set_weights(initial_weights(model, scale=0.002))
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
            loss_value += sum(model.losses)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        train_acc_metric.update_state(y, logits)
        return loss_value

    train_dataset, _ = datasets(tf, shuffle=False)
    return [float(train_step(x, y)) for x, y in train_dataset]


# TF 2.21 (Keras 3.15.1), same data and initial weights, unshuffled batches
TF_LOSSES = [2.3025436401367188, 2.189934730529785, 1.7743299007415771, 1.079568862915039,
             0.5851998329162598, 0.663851261138916, 1.952169418334961, 0.7564399242401123,
             1.1459033489227295, 1.7209498882293701, 1.1087398529052734, 0.8344147205352783,
             0.625189483165741, 0.7224197387695312, 0.9187926054000854, 0.7282547950744629]
TF_ACCURACIES = [(0.6953125, 0.859375), (0.76953125, 0.859375)]     # (train, validation) per epoch
TF_ADDED_LOSS = [32.22600173950195, 2.360215663909912, 2.335268020629883, 2.307135820388794,
                 2.305497407913208, 2.2938170433044434, 2.293382406234741, 2.2900500297546387]


def test_eager_and_compiled_loops_match_tensorflow():
    losses, accuracies = eager_loop(tf, keras, shuffle=False)
    np.testing.assert_allclose(losses, TF_LOSSES, rtol=1e-4)
    np.testing.assert_allclose(accuracies, TF_ACCURACIES)
    compiled_losses, compiled_accuracies = compiled_loop(tf, keras, shuffle=False)
    np.testing.assert_allclose(compiled_losses, losses, rtol=1e-5)     # compiled == eager
    assert compiled_accuracies == accuracies
    np.testing.assert_allclose(added_loss_step(tf, keras), TF_ADDED_LOSS, rtol=1e-4)


def test_the_guides_step_iterating_its_pipeline_in_one_function():
    # the guide's training step, with the loop over its tf.data pipeline moved inside the
    # tf.function: one program (one While, traced once) giving TF's per-step losses
    model = get_model(keras)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_epoch(dataset):
        losses = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for step, (x, y) in enumerate(dataset):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss_value = loss_fn(y, logits)
            grads = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply(grads, model.trainable_weights)
            train_acc_metric.update_state(y, logits)
            losses = losses.write(tf.cast(step, tf.int32), loss_value)
        return losses.stack()

    train_dataset, _ = datasets(tf, shuffle=False)
    losses = [train_epoch(train_dataset).numpy() for _ in range(2)]
    np.testing.assert_allclose(np.concatenate(losses), TF_LOSSES, rtol=1e-4)
    # not reset between the two epochs: the mean of TF's two epoch accuracies
    np.testing.assert_allclose(float(train_acc_metric.result()), np.mean([a for a, _ in TF_ACCURACIES]))
    assert train_epoch.experimental_get_tracing_count() == 1
    graph = train_epoch.get_concrete_function(train_dataset).graph
    assert sum(node.op == "While" for node in graph.nodes) == 1


def test_the_guides_shuffled_loops_train():
    losses, accuracies = eager_loop(tf, keras)      # as the guide runs it
    assert np.mean(losses[-4:]) < np.mean(losses[:4])
    losses, accuracies = compiled_loop(tf, keras)
    assert np.mean(losses[-4:]) < np.mean(losses[:4])
