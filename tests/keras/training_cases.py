"""Seeded training runs with fixed weights, run the same way in TF 2.21 (its History, stopping
epoch and final weights are in keras_facts.py) and in tapeflow (test_callbacks_training.py)."""
import numpy as np

RNG = np.random.RandomState(0)
X = RNG.randn(24, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
Y_BIN = (Y > 0).astype(np.float32)
K1 = (RNG.randn(3, 4) * 0.5).astype(np.float32)
B1 = np.array([0.1, -0.1, 0.05, 0.0], np.float32)
K2 = (RNG.randn(4, 1) * 0.5).astype(np.float32)
B2 = np.array([0.2], np.float32)
WEIGHTS = [K1, B1, K2, B2]


def build(keras, first_layer_kwargs=None, final_activation=None):
    """Input(3) -> Dense(4, relu) -> Dense(1), with WEIGHTS."""
    model = keras.Sequential([keras.Input((3,)),
                              keras.layers.Dense(4, activation="relu", **(first_layer_kwargs or {})),
                              keras.layers.Dense(1, activation=final_activation)])
    model.set_weights(WEIGHTS)
    return model


def run(keras, name):
    """The named run; returns (history dict, epochs run, final weights)."""
    k = keras
    if name == "regularized":
        model = build(k, dict(kernel_regularizer=k.regularizers.L2(0.01), bias_regularizer=k.regularizers.L1(0.01),
                              activity_regularizer=k.regularizers.L1(0.001),
                              kernel_constraint=k.constraints.MaxNorm(1.0)))
        model.compile(k.optimizers.SGD(0.05), "mse")
        history = model.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    elif name == "early_stopping":
        model = build(k)
        model.compile(k.optimizers.SGD(0.02), "mse", metrics=["mae"])
        stop = k.callbacks.EarlyStopping(monitor="loss", min_delta=0.4, patience=1, restore_best_weights=True)
        history = model.fit(X, Y, batch_size=8, epochs=20, shuffle=False, verbose=0, callbacks=[stop])
    elif name == "early_stopping_val":
        model = build(k)
        model.compile(k.optimizers.SGD(0.05), "mse")
        stop = k.callbacks.EarlyStopping(patience=2)
        history = model.fit(X[:16], Y[:16], batch_size=4, epochs=15, shuffle=False, verbose=0, callbacks=[stop],
                            validation_data=(X[16:], Y[16:]))
    elif name == "reduce_lr":
        model = build(k)
        model.compile(k.optimizers.SGD(0.05), "mse")
        cb = k.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=0.9)
        history = model.fit(X, Y, batch_size=8, epochs=4, shuffle=False, verbose=0, callbacks=[cb])
    elif name == "lr_scheduler":
        model = build(k)
        model.compile(k.optimizers.SGD(0.05), "mse")
        cb = k.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch > 0 else lr)
        history = model.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0, callbacks=[cb])
    elif name == "ema_swap":
        model = build(k)
        model.compile(k.optimizers.Adam(0.05, use_ema=True, ema_momentum=0.5), "mse")
        history = model.fit(X[:16], Y[:16], batch_size=8, epochs=2, shuffle=False, verbose=0,
                            validation_data=(X[16:], Y[16:]), callbacks=[k.callbacks.SwapEMAWeights()])
    elif name == "adamw_schedule_auc":
        model = build(k, dict(kernel_regularizer=k.regularizers.L2(0.01)), final_activation="sigmoid")
        schedule = k.optimizers.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
        model.compile(k.optimizers.AdamW(schedule, weight_decay=0.01), "binary_crossentropy",
                      metrics=[k.metrics.AUC(), "accuracy"])
        history = model.fit(X, Y_BIN, batch_size=8, epochs=2, shuffle=False, verbose=0)
    else:
        raise KeyError(name)
    return history.history, len(history.epoch), [np.asarray(w) for w in model.get_weights()]


RUNS = ["regularized", "early_stopping", "early_stopping_val", "reduce_lr", "lr_scheduler", "ema_swap",
        "adamw_schedule_auc"]
