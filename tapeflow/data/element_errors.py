"""``Dataset.ignore_errors``: drop the elements whose computation raised (see
``base.ElementError``), optionally logging each error, as ``tf.data``'s IgnoreErrorsDataset."""
import logging

from .base import BUILD, UNKNOWN, Dataset, ElementError

_log = logging.getLogger("tapeflow")


class IgnoreErrorsDataset(Dataset):
    """The input's elements without those that failed.

    >>> ds = tf.data.Dataset.from_tensor_slices([1., 2., 0., 4.])
    >>> ds = ds.map(lambda x: tf.debugging.check_numerics(1. / x, "error"))
    >>> [float(x) for x in ds.ignore_errors()]
    [1.0, 0.5, 0.25]
    """

    def __init__(self, input_dataset, log_warning=False):
        self._input, self._log = input_dataset, bool(log_warning)
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        return UNKNOWN

    def _iterate(self):
        for element in self._input._elements():
            if isinstance(element, ElementError):
                if self._log:
                    _log.warning("Error raised with error message %s", element.error)
                continue
            yield element


BUILD["ignore_errors"] = IgnoreErrorsDataset

__all__ = ["IgnoreErrorsDataset"]
