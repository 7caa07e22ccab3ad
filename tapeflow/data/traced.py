"""A dataset or iterator used inside a ``tapeflow.function``: one loop, its elements fed per call.

TensorFlow's AutoGraph turns ``for x in dataset`` in a ``tf.function`` into a loop reading the
dataset, so the body is traced once and each call iterates the dataset afresh (a ``shuffle``
reshuffles per call). Here the body is traced once too (``pyfor`` asks ``Dataset._traced_for``
for a ``TensorIter``), over elements *fed* to the program: at each call, before the program
runs, the dataset is iterated in Python and its elements joined into arrays that are graph
inputs (``context.feed_input``, a ``("feed", ...)`` source of the ConcreteFunction):

- a component whose shape is fully known (unbatched rows, ``drop_remainder`` batches) is
  stacked, ``[n, *shape]``, and element ``k`` is row ``k`` (one gather);
- a component whose first size is None (``batch`` without ``drop_remainder``: the last batch
  is smaller, as TF's ``(None, ...)`` element spec says) is joined along its first axis with
  the offsets of each element, and element ``k`` is one gather of its rows.

So a loop over a dataset is one While node whatever the number of elements, its carried state
(accumulators, variable updates) as any loop's. ``next(iterator)`` in a function is one fed
element per call, as TF's ``IteratorGetNext``; ``OutOfRangeError`` at the end; ``reduce`` is
one While carrying the state (its function traced once), as TF's ``ReduceDataset``.

Not fed (the loop is unrolled while tracing, as before, with the elements of trace time): a
component with another unknown size (``padded_batch`` to each batch's longest), or a trace that
is not a function's (``vectorized_map``). An infinite dataset cannot be fed. A feed pulls all
the elements before the program runs, so a ``break`` ends the loop but an iterator passed in is
read to its end; a ``for`` over the same dataset twice in one call sees one order. A dataset
passed as an argument keys the trace by identity (TF: by its element spec), so another dataset
object traces again. A tape outside the function differentiates through the loop (TF gives
None: its ``ReduceDataset`` has no gradient); a tape inside the body is as in TF.
"""
import warnings

import numpy as np

from ..errors import InvalidArgumentError, OutOfRangeError, user_line
from ..ir import dtypes as D
from ..ir.opdef import AVal
from ..ops import array, creation, math
from ..ops.scan import cumsum
from ..runtime.recorder import STATE
from ..runtime.tensor import convert_to_tensor
from ..tracer.context import LoopError, as_tensor, feed_input
from ..tracer.control import while_loop
from ..tracer.pyfor import TensorIter
from ..tracer.symbolic_tensor import TracingError
from . import structure as S
from .base import INFINITE, TRACED, Dataset, checked


def _plan(spec):
    """How component ``spec`` is fed: "row", "joined", or None (it cannot be)."""
    dims = S.spec_dims(spec)
    if dims is None or not hasattr(spec, "dtype"):
        return None
    if all(d is not None for d in dims):
        return "row"
    if dims[0] is None and all(d is not None for d in dims[1:]):
        return "joined"
    return None


def _plans(element_spec):
    specs = S.flatten(element_spec)
    plans = [_plan(s) for s in specs]
    return (specs, plans) if specs and all(plans) else (None, None)


def _in_function():
    """Whether a function's own trace is being built, and the innermost trace is it (not a
    loop body's or a branch's sub-trace)."""
    feeding = [getattr(ctx, "feeding", False) for ctx in STATE.traces]
    return any(feeding), bool(feeding and feeding[-1])


class _Feed:
    """What a loop over elements pulls at each call: per component, the stacked rows, or the
    joined rows and their offsets."""

    def __init__(self, elements, specs, plans, key=None):
        self.elements, self.specs, self.plans, self.key = elements, specs, plans, key

    def pull(self, call):
        rows = [S.flatten(checked(e)) for e in self.elements(call)]
        out = []
        for j, (spec, plan) in enumerate(zip(self.specs, self.plans)):
            dims, dtype = S.spec_dims(spec), spec.dtype.np
            column = [np.asarray(r[j], dtype) for r in rows]
            for c in column:
                if len(c.shape) != len(dims) or any(
                        d is not None and d != n for d, n in zip(dims, c.shape)):
                    raise InvalidArgumentError(f"a dataset element of shape {list(c.shape)} does "
                                               f"not match the element spec {spec}")
            if plan == "row":
                out.append(np.stack(column) if column else np.zeros((0, *dims), dtype))
            else:
                out.append(np.concatenate(column) if column else np.zeros((0, *dims[1:]), dtype))
                out.append(np.cumsum([0] + [c.shape[0] for c in column], dtype=np.int32))
        return out


class _NextFeed:
    """``next(iterator)`` in a function: one element per call."""

    key = None

    def __init__(self, source, specs):
        self.source, self.specs = source, specs

    def pull(self, call):
        try:
            element = next(self.source(call))
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None
        leaves = S.flatten(checked(element))
        return [np.asarray(x, s.dtype.np) for x, s in zip(leaves, self.specs)]


def _element_reader(feed, specs, plans):
    """(count, element(k)) over the fed inputs of ``feed``; None outside a function's trace."""
    parts, j = [], 0
    for spec, plan in zip(specs, plans):
        dims = S.spec_dims(spec)
        if plan == "row":
            x = feed_input(feed, j, AVal((None, *dims), spec.dtype))
            parts.append((x,))
            j += 1
        else:
            x = feed_input(feed, j, AVal((None, *dims[1:]), spec.dtype))
            parts.append((x, feed_input(feed, j + 1, AVal((None,), D.int32))))
            j += 2
        if x is None:
            return None
    first = parts[0]
    n = array.shape(first[0])[0] if len(first) == 1 else math.subtract(array.shape(first[1])[0], 1)

    def element(k):
        leaves = []
        for part in parts:
            if len(part) == 1:
                leaves.append(array.gather(part[0], k))
                continue
            values, offsets = part
            start = array.gather(offsets, k)
            size = math.subtract(array.gather(offsets, math.add(k, 1)), start)
            rows = math.add(cumsum(creation.ones([size], D.int32), exclusive=True), start)
            leaves.append(array.gather(values, rows))
        return leaves
    return n, element


def _loop(elements, element_spec, key):
    """The TensorIter of a ``for`` over ``elements(call)``, or None (unrolled)."""
    specs, plans = _plans(element_spec)
    in_function, _ = _in_function()
    if specs is None or not in_function:
        return None
    reader = _element_reader(_Feed(elements, specs, plans, key), specs, plans)
    if reader is None:
        return None
    n, element = reader
    it = TensorIter(n, lambda k: S.pack(element_spec, element(k)))
    it.index_dtype = D.int64        # enumerate(dataset) counts in int64, as Dataset.enumerate
    return it


def dataset_loop(dataset):
    """``Dataset._traced_for``: ``for x in dataset`` inside a function."""
    if dataset._cardinality() == INFINITE:
        raise LoopError(f"an infinite dataset is iterated by a `for` loop inside a "
                           f"tapeflow.function (at {user_line()}): tapeflow feeds the dataset's "
                           f"elements to the compiled loop at each call, so it must end; use "
                           f"`dataset.take(n)`, or iterate it outside the function")
    it = _loop(lambda call: dataset._elements(), dataset.element_spec, ("dataset", id(dataset)))
    if it is None and _draws_randomly(dataset):
        warnings.warn("A tf.data.Dataset that shuffles or draws random numbers is iterated inside a "
                      "tf.function where tapeflow cannot feed its elements (a component of unknown "
                      "size): the loop is unrolled while tracing, so every call reuses the order "
                      "drawn at trace time.", stacklevel=4)
    return it


def _source(iterator):
    """call -> the Python iterator of ``iterator``'s elements for this call: its own (made
    outside the function: its position persists across calls), or, made inside the function,
    a fresh one per call (TF makes the iterator each time the function runs)."""
    if not iterator._made_in_trace:
        return lambda call: iterator._it
    return lambda call: call.setdefault(("iterator", id(iterator)),
                                        iter(iterator._dataset._elements()))


def _nested_iterator_error(what):
    return TracingError(f"{what} of a tf.data iterator inside a loop or branch on tensors in a "
                        f"tapeflow.function (at {user_line()}): tapeflow feeds an iterator's "
                        f"elements once per call, so it cannot give a new one per iteration; "
                        f"iterate the dataset itself (`for x in dataset`), or call `next` at "
                        f"the top of the function")


def iterator_loop(iterator):
    """``OwnedIterator._traced_for``: ``for x in iterator`` inside a function (its remaining
    elements)."""
    in_function, at_top = _in_function()
    if in_function and not at_top:
        raise _nested_iterator_error("a `for` loop over the elements")
    source = _source(iterator)
    return _loop(source, iterator.element_spec, None)


def next_element(iterator):
    """``next(iterator)`` inside a function: the element fed at each call, or None (not fed)."""
    specs, plans = _plans(iterator.element_spec)   # as a loop's: both unrolled, or both fed
    in_function, at_top = _in_function()
    if specs is None or not in_function:
        return None
    if not at_top:
        raise _nested_iterator_error("`next`")
    feed = _NextFeed(_source(iterator), specs)
    leaves = [feed_input(feed, j, AVal(tuple(S.spec_dims(s)), s.dtype)) for j, s in enumerate(specs)]
    return S.pack(iterator.element_spec, leaves)


def traced_reduce(dataset, initial_state, reduce_func):
    """``dataset.reduce`` inside a function: one While over the fed elements carrying the state
    (TF's ReduceDataset), or None (reduced while tracing, as outside a function)."""
    if not _in_function()[0] or _plans(dataset.element_spec)[0] is None:
        return None
    it = dataset_loop(dataset)
    if it is None:
        return None
    state = S.map_leaves(as_tensor, initial_state)

    def body(k, state):
        element = it.at(k)
        new = reduce_func(state, element)        # the element whole, as TF passes it
        return math.add(k, 1), S.map_leaves(as_tensor, new)
    counter = convert_to_tensor(0, dtype=D.int32)
    return while_loop(lambda k, state: math.less(k, it.length), body, (counter, state))[1]


_RANDOM = ("ShuffleDataset", "RandomDataset", "SampleDataset")


def _draws_randomly(dataset, seen=None):
    """Whether ``dataset`` or a dataset it reads from shuffles or draws random numbers."""
    seen = set() if seen is None else seen
    if id(dataset) in seen:
        return False
    seen.add(id(dataset))
    if type(dataset).__name__ in _RANDOM:
        return True
    for value in vars(dataset).values():
        inputs = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, Dataset) and _draws_randomly(v, seen) for v in inputs):
            return True
    return False


TRACED.update(loop=dataset_loop, iterator_loop=iterator_loop, next=next_element, reduce=traced_reduce)

__all__ = ["dataset_loop", "iterator_loop", "next_element", "traced_reduce"]
