"""``tf.keras.backend``: the little of it that eager code without models uses."""
from .layers import reset_uids


def clear_session():
    """Start layer names over ('dense', 'dense_1', ... again), as Keras does."""
    reset_uids()


def floatx():
    return "float32"


__all__ = ["clear_session", "floatx"]
