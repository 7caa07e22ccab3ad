"""Batching rules of the segment max, min and product: as the segment sum's (batched data with
shared ids: the batch dim joins the trailing dims); batched ids take the loop."""
from ...ir.defs.segment import SORTED, UNSORTED
from .reduce import segment_sum
from .registry import batching

batching(*SORTED, *UNSORTED)(segment_sum)
