"""Optimizer and schedule configurations the numerics tests run (TF 2.21's answers in
keras_facts.py): each optimizer updates W (2x3) and b (3,) three times from fixed gradients."""
import numpy as np

W0 = np.array([[0.5, -1.0, 0.25], [1.5, 0.0, -0.75]], np.float32)
B0 = np.array([0.1, -0.2, 0.3], np.float32)
GRADS = [
    (np.array([[0.1, -0.3, 0.2], [0.0, 0.5, -0.1]], np.float32), np.array([0.2, 0.0, -0.4], np.float32)),
    (np.array([[-0.2, 0.1, 0.4], [0.3, -0.5, 0.05]], np.float32), np.array([-0.1, 0.3, 0.2], np.float32)),
    (np.array([[0.05, 0.2, -0.3], [-0.4, 0.1, 0.2]], np.float32), np.array([0.0, -0.2, 0.1], np.float32)),
]

OPTIMIZERS = [
    ("AdamW", {"learning_rate": 0.01}),
    ("AdamW", {"learning_rate": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("Adagrad", {"learning_rate": 0.1}),
    ("Adadelta", {"learning_rate": 1.0}),
    ("Adamax", {"learning_rate": 0.02}),
    ("Nadam", {"learning_rate": 0.02}),
    ("Ftrl", {"learning_rate": 0.1}),
    ("Ftrl", {"learning_rate": 0.1, "l1_regularization_strength": 0.01, "l2_regularization_strength": 0.02,
              "l2_shrinkage_regularization_strength": 0.01, "beta": 0.5}),
    ("Lion", {"learning_rate": 0.01}),
    ("Lamb", {"learning_rate": 0.01}),
    ("Adafactor", {"learning_rate": 0.1}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("Adam", {"learning_rate": 0.01, "use_ema": True, "ema_momentum": 0.9}),
    ("RMSprop", {"learning_rate": 0.01, "clipnorm": 0.3}),
]

SCHEDULES = [
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.5}),
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.5, "staircase": True}),
    ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 8, "alpha": 0.1}),
    ("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 6, "warmup_target": 0.2, "warmup_steps": 3}),
    ("CosineDecayRestarts", {"initial_learning_rate": 0.1, "first_decay_steps": 3, "t_mul": 2.0, "m_mul": 0.5}),
    ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5}),
    ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5, "staircase": True}),
    ("PiecewiseConstantDecay", {"boundaries": [2, 5], "values": [0.1, 0.05, 0.01]}),
    ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 6, "end_learning_rate": 0.01, "power": 2.0}),
    ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 4, "end_learning_rate": 0.01, "cycle": True}),
]
SCHEDULE_STEPS = [0, 1, 2, 3, 4, 5, 7, 9, 12]
