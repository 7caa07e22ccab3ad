"""``Dataset.rejection_resample``: elements drawn so their classes follow ``target_dist``, as
TensorFlow 2.21's ``dataset_ops.rejection_resample`` builds it: each element is either taken
as it comes (probability ``m``, the smallest target/initial ratio) or passed through a rejection
filter that accepts class ``i`` with probability ``(r_i - m) / (max r - m)``, where
``r = target / (initial + tiny)``; ``initial_dist`` is given, or estimated from the class counts
seen so far (starting at 10 each, updated per 32 elements). Elements come out as
``(class, element)``. The uniform draws are NumPy's, seeded from ``seed`` and the global seed,
so a seeded pipeline repeats, but its choices differ from TensorFlow's random streams.
"""
import numpy as np

from ..tracer.function import TensorSpec
from . import structure as S
from .base import BUILD, UNKNOWN, Dataset, ElementError
from .sources import _seed_sequence
from .transforms import TracedFunction

_BATCH, _SMOOTHING = 32, 10        # TF's dist_estimation_batch_size and smoothing_constant


def acceptance_probs_with_mixing(initial, target):
    """(per-class acceptance probabilities, probability of taking an element unfiltered).

    >>> a, m = acceptance_probs_with_mixing([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    >>> [round(float(x), 4) for x in a], round(float(m), 4)
    ([0.0, 0.2857, 1.0], 0.4)
    """
    initial, target = np.asarray(initial, np.float32), np.asarray(target, np.float32)
    ratio = target / (initial + np.finfo(np.float32).tiny)
    m = ratio.min()
    return (ratio - m) / (ratio.max() - m), m


class RejectionResampleDataset(Dataset):
    """``(class, element)`` pairs whose classes follow ``target_dist``.

    >>> ds = tf.data.Dataset.from_tensor_slices(np.array([0] * 90 + [1] * 10, np.int32))
    >>> ds = ds.repeat().rejection_resample(lambda x: x, [0.5, 0.5], initial_dist=[0.9, 0.1], seed=1)
    >>> classes = [int(c) for c, _ in ds.take(2000)]
    >>> 0.45 < sum(classes) / len(classes) < 0.55
    True
    """

    def __init__(self, input_dataset, class_func, target_dist, initial_dist=None, seed=None):
        self._input = input_dataset
        self._class_fn = TracedFunction(class_func, input_dataset.element_spec)
        spec = self._class_fn.output_spec
        if not isinstance(spec, TensorSpec) or spec.shape.rank != 0 or not spec.dtype.is_integer:
            raise ValueError(f"`class_func` must return an integer scalar (the class), got {spec}")
        self._target = np.asarray(S.to_array(target_dist), np.float32)
        self._initial = None if initial_dist is None else np.asarray(S.to_array(initial_dist), np.float32)
        self._seed = _seed_sequence(seed)
        self._epoch = 0
        super().__init__((spec, input_dataset.element_spec))

    def _cardinality(self):
        return UNKNOWN

    def _class_of(self, element):
        return self._class_fn(element)

    def _dists(self):
        """Per input element: (acceptance probabilities, probability of the unfiltered branch)."""
        if self._initial is not None:
            fixed = acceptance_probs_with_mixing(self._initial, self._target)
            while True:
                yield fixed
        counts = np.full(len(self._target), _SMOOTHING, np.int64)
        elements = iter(self._input._elements())
        while True:
            batch = [e for _, e in zip(range(_BATCH), elements)]
            if not batch:
                return
            for e in batch:
                if not isinstance(e, ElementError):
                    counts[int(np.asarray(self._class_of(e)))] += 1
            dist = (counts / counts.sum()).astype(np.float32)
            mixing = acceptance_probs_with_mixing(dist, self._target)
            for _ in batch:
                yield mixing

    def _iterate(self):
        rng = np.random.default_rng(None if self._seed is None else self._seed + [self._epoch])
        self._epoch += 1

        def with_class(element):
            return element if isinstance(element, ElementError) else (self._class_of(element), element)

        def filtered():
            for element, (accept, _) in zip(self._input._elements(), self._dists()):
                if isinstance(element, ElementError):
                    yield element
                    continue
                c = self._class_of(element)
                if rng.uniform() < accept[int(np.asarray(c))]:
                    yield c, element

        static = None if self._initial is None else float(np.min(self._target / self._initial))
        if static == 1:
            yield from (with_class(e) for e in self._input._elements())
            return
        if static == 0:
            yield from filtered()
            return
        original, rejected = (with_class(e) for e in self._input._elements()), filtered()
        for _, m in self._dists():      # sample_from_datasets with weights (m, 1 - m), stopping at an empty one
            source = original if rng.uniform() < m else rejected
            item = next(source, None)
            if item is None:
                return
            yield item


BUILD["rejection_resample"] = RejectionResampleDataset

__all__ = ["RejectionResampleDataset", "acceptance_probs_with_mixing"]
