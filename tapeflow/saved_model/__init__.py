"""``tapeflow.saved_model``: save traced programs with their variables and custom gradients; load them.

A saved program is data: a directory holding a versioned JSON manifest, IR graphs
as JSON and arrays as ``.npy``. Loading validates every field and never imports,
executes or unpickles anything from the files; a bad file raises ``SavedModelError``
(a ``ValueError``) naming the file and what was wrong. See docs/saved_programs.md.
"""
from .errors import SavedModelError
from .load import load
from .save import SaveOptions, save

__all__ = ["save", "load", "SaveOptions", "SavedModelError"]
