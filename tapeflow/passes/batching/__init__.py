"""Batching rules: how each op runs on values with a leading batch dimension (``passes.vectorize``).

``BATCHERS[op](b, node, inputs, batched) -> [(value, batched), ...]`` per output, where
``b`` is the ``vectorize.Builder``, ``inputs`` the node's inputs in the new graph and
``batched`` which of them carry the batch dimension at axis 0 (at least one does).
A rule may return None to ask for the loop fallback (e.g. a case it does not cover).
Rules are declared per op family, like kernels, gradient rules and codegen templates;
``tests/passes/test_vectorize.py`` checks every rule against the loop on random inputs.
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


from . import array, control, elementwise, linalg, nn, reduce  # noqa: E402,F401  (register the rules)

__all__ = ["BATCHERS", "batching", "shift_axis"]
