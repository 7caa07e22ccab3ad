"""``tapeflow.train``: TensorFlow's checkpoints of variables (``Checkpoint``,
``latest_checkpoint``, ``list_variables``, ``load_variable``)."""
from .checkpoint import (Checkpoint, CheckpointLoadStatus, latest_checkpoint, list_variables,
                         load_variable)

__all__ = ["Checkpoint", "CheckpointLoadStatus", "latest_checkpoint", "list_variables",
           "load_variable"]
