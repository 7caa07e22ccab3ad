"""BATCHERS, the table of batching rules, and what the rules share.

Its own module so the rule modules register into it without importing the package that
imports them (``batching/__init__.py``); ``passes.vectorize`` reads the filled table.
"""
BATCHERS = {}


def batching(*names):
    """Register ``fn`` as the batching rule of the ops ``names``."""
    def deco(fn):
        for name in names:
            if name in BATCHERS:
                raise KeyError(f"batching rule for {name!r} registered twice")
            BATCHERS[name] = fn
        return fn
    return deco


def shift_axis(axis, rank):
    """An axis of an unbatched value of ``rank`` dims, as an axis of its batched form."""
    return axis % rank + 1 if rank else 1
