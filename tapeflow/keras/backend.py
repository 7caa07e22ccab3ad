"""``tf.keras.backend``: the session-wide settings (settings.py) and ``clear_session``."""
from .layers import reset_uids
from .settings import epsilon, floatx, image_data_format, set_epsilon, set_floatx, set_image_data_format


def clear_session(free_memory=True):
    """Start layer names over ('dense', 'dense_1', ... again), as Keras does."""
    reset_uids()


__all__ = ["clear_session", "floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
           "set_image_data_format"]
