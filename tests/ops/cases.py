"""Gradient-check cases for every op, gathered from the per-family tables.

Each family file defines ``CASES``: {op name: [Case, ...]} covering that op
(first and second order), and ``NOT_DIFFERENTIABLE``: op names whose gradient
is None by definition (comparisons, ...), checked to return None instead.
"""
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Case:
    """``fn(*tensors)`` on float64 ``args`` (arrays); ``order`` 1 or 2; tolerances for the checker."""
    fn: Callable
    args: list
    order: int = 2
    note: str = ""
    kw: dict = field(default_factory=dict)

    def __repr__(self):
        shapes = ",".join(str(getattr(a, "shape", ())) for a in self.args)
        return f"Case({self.note or self.fn.__name__}; {shapes})"


def all_cases():
    import importlib
    cases, nondiff = {}, set()
    for fam in ("math", "reduce", "array", "linalg", "nn", "custom", "control", "io", "lists",
                "special", "scan", "indexing", "sort", "conv", "debug", "random", "morphology",
                "fractional_pool", "conv_raw", "segment", "lrn", "isotonic", "bitcast",
                "parallel_concat", "samplers"):
        try:
            mod = importlib.import_module(f"ops.cases_{fam}")
        except ModuleNotFoundError:
            continue
        for k, v in mod.CASES.items():
            cases.setdefault(k, []).extend(v)
        nondiff |= set(getattr(mod, "NOT_DIFFERENTIABLE", ()))
    return cases, nondiff
