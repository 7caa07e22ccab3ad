"""``tf.data`` for in-memory data: ``tf.data.Dataset`` and its iterators (record and text file
readers are out of tapeflow's scope).

base.py holds the public class and iterators; sources.py the datasets that start a pipeline;
transforms.py, windows.py, element_errors.py (``ignore_errors``) and resampling.py
(``rejection_resample``) the transformations, registered into base.BUILD. structure.py
turns elements between NumPy arrays (inside the pipeline) and tensors (what users see).
traced.py: a dataset or iterator used inside a ``function`` (one loop, elements fed per call).
"""
from . import base, element_errors, resampling, sources, traced, transforms, windows  # noqa: F401  (they fill base.BUILD, base.TRACED)
from .base import (AUTOTUNE, Dataset, DatasetSpec, IteratorSpec, NumpyIterator, Options,
                   ThreadingOptions)
from .base import INFINITE as INFINITE_CARDINALITY
from .base import UNKNOWN as UNKNOWN_CARDINALITY
from .base import OwnedIterator as Iterator

__all__ = ["Dataset", "DatasetSpec", "Iterator", "IteratorSpec", "NumpyIterator", "Options",
           "ThreadingOptions", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]
