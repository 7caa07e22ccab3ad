"""Batching rules of the decompositions and matrix functions: they map over leading dims."""
from .registry import batching
