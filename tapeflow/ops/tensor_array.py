"""``tf.TensorArray``: eagerly a Python list of tensors, in a function a dense or padded one.

Eagerly (no trace running when it is made) it is TensorFlow's ``_EagerTensorArray``: a list
of tensors, mutated in place (``write`` returns ``self``), every op recorded on the tapes as
the op it is (``read`` returns the written tensor itself, ``stack`` is a ``Pack`` with zeros
for unwritten elements), so gradients, None versus zeros included, are TensorFlow's eager
ones, and its errors are checked exactly (out of range, negative index, wrong dtype or
shape, a second read after ``clear_after_read``, Pack's error for a stack of elements of
different shapes, zeros of an element shape not fully known). Indices may be tensors.

``element_shape`` is TensorFlow's: the shape given (``TensorShape(None)`` when none), merged
with each written shape when ``infer_shape`` (a write must be compatible with it either way),
in one cell shared by every TensorArray that writes, loops and branches make from this one,
as TensorFlow shares its ``_element_shape`` list.

Inside a function each method returns a new TensorArray (TensorFlow's graph-mode semantics:
``ta = ta.write(i, x)``), held as one dense tensor of shape ``[size, *shape]`` while every
element written has one static shape (``_shape``). ``write`` at a tensor index is
``TensorListSetItem``, ``read`` at one ``TensorListGetItem`` (TensorFlow's error text when it
is out of range), ``gather`` and a Python index ``GatherV2``; as in TensorFlow's TensorList,
unwritten elements read as zeros, writing twice overwrites, and ``clear_after_read`` is
ignored. Its size is static, except for one made with a tensor size, or a dynamic-size one
that a loop of unknown trip count assigns: the size is then a run-time one (``_n`` None, the
tensor's leading dim None, as TensorFlow's ``[None, ...]`` stack), and a dynamic-size write
past the end appends zero rows up to the index (``_grown``) before writing.

An element of another shape (``infer_shape=False``, ``split`` into unequal lengths) or of a
size known only at run time makes it the padded list of ``ops/ragged_list.py``: values padded
to the largest sizes written plus each element's shape (``_shapes``), whose readers follow
TensorFlow's TensorList rules and errors for elements of different shapes and uninitialized
ones. Written at Python indices with static shapes it stays static (the program compiles);
written in a loop on a tensor its sizes are data, so the program runs on the NumPy
interpreter. One element rank per TensorArray (TensorFlow's TensorList takes several).

Until the element shape is known (``element_shape=`` or a first write) there is no tensor
yet; a read, stack or concat before it reads a padded list of uninitialized elements, so it
raises TensorFlow's error. A loop variable flattens to its tensor(s) through the
``__tf_flatten__`` protocol (``_nest``), so a converted loop carries it as While variables
(``tracer/loop_lists.py`` sizes it, and retraces a loop whose body makes it padded).
"""
from __future__ import annotations

import weakref

import numpy as np

from ..errors import InvalidArgumentError, OutOfRangeError, user_line
from ..ir import dtypes as D
from ..runtime.dispatch import apply
from ..runtime.recorder import STATE
from ..runtime.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from . import array, creation, dims, math, ragged_list


def tensor_list_set_item(lst, index, item):
    """``lst`` with element ``index`` replaced by ``item`` (TensorListSetItem)."""
    return apply("TensorListSetItem", [lst, convert_to_tensor(index, dtype=D.int32)
                                       if isinstance(index, (int, np.integer)) else index, item])


_BOUNDS = {}    # id(symbolic int tensor) -> (weakref to it, lowest, highest value it takes)


def note_index_bounds(t, lo, hi):
    """``t``, a tensor of the trace, takes values in [lo, hi] only (the counter of a ``for``
    over a ``tf.range`` of constant bounds: tracer/pyfor.py): a dynamic-size TensorArray of
    more than ``hi`` elements written at ``t`` need not grow, so its shape stays static."""
    key = id(t)
    _BOUNDS[key] = (weakref.ref(t, lambda _, k=key: _BOUNDS.pop(k, None)), lo, hi)
    return t


def _in_range(index, n):
    entry = _BOUNDS.get(id(index))
    return entry is not None and entry[0]() is index and 0 <= entry[1] and entry[2] < n


def tensor_list_get_item(lst, index):
    """Element ``index`` of ``lst`` (TensorListGetItem)."""
    return apply("TensorListGetItem", [lst, convert_to_tensor(index, dtype=D.int32)
                                       if isinstance(index, (int, np.integer)) else index])


def _symbolic(x):
    return hasattr(x, "aval") and not isinstance(x, (Tensor, Variable))


def _static_int(x, what):
    """``x`` as a Python int, or None when it is a symbolic tensor."""
    if _symbolic(x):
        return None
    if isinstance(x, (Tensor, Variable)):
        x = x.numpy()
    if np.ndim(x) != 0:
        raise ValueError(f"TensorArray {what} must be a scalar, got {x!r}")
    return int(x)


class TensorArray:
    """A list of tensors of one dtype that a loop can write (TensorFlow's ``tf.TensorArray``).

    TensorFlow's ``tf.TensorArray`` (see the module docstring for the representations).

    A list of tensors of one dtype: eagerly, TensorFlow's eager list; inside a ``function``,
    a loop variable (``ta = ta.write(i, x)``) that becomes one dense tensor (of run-time
    length when it is dynamic-size and the loop's trip count is data), or a padded one when
    its elements differ in shape.

    Args:
      dtype: the elements' dtype.
      size: the number of elements (inside a function, a dynamic-size one written in a loop
        may start at 0).
      dynamic_size: allow writes past ``size``.
      infer_shape: merge each written element's shape into ``element_shape`` (so later
        writes must be compatible); False lets elements differ in shape.
      element_shape: the elements' shape, if known (``None`` sizes allowed).

    >>> ta = tf.TensorArray(tf.float32, size=3)
    >>> for i in range(3):
    ...     ta = ta.write(i, tf.constant(float(i)) * 2.0)
    >>> ta.stack()
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0., 2., 4.], dtype=float32)>
    >>> @tf.function(jit_compile=False)
    ... def squares(n):
    ...     ta = tf.TensorArray(tf.float32, size=4)
    ...     for i in tf.range(4):
    ...         ta = ta.write(i, tf.cast(i * i, tf.float32))
    ...     return ta.stack()
    >>> squares(4)
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([0., 1., 4., 9.], dtype=float32)>
    >>> @tf.function
    ... def ragged(x, n):
    ...     ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
    ...     for i in tf.range(n):
    ...         ta = ta.write(i, tf.ones([i + 1]) * x)
    ...     return ta.concat()
    >>> ragged(tf.constant(2.0), tf.constant(3))
    <tf.Tensor: shape=(6,), dtype=float32, numpy=array([2., 2., 2., 2., 2., 2.], dtype=float32)>
    """

    _start = 0       # run-time sized with no tensor yet: the rows it starts with (an int, or
    #                  the size tensor a fixed-size one was made with)
    _shape = None    # traced, dense: the shape of its tensor's rows
    _shapes = None   # traced, elements of different shapes: their shapes (_buf: the values)
    _written = None  # traced, dense: the Python indices written (None: not known)

    def __init__(self, dtype: D.DType | str, size: int | Tensor | None = None,
                 dynamic_size: bool | None = None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None,
                 colocate_with_first_write_call=True, name=None) -> None:
        self._dtype = D.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape)
        self._es_cell = [TensorShape(element_shape)]
        n = 0 if size is None else _static_int(size, "size")
        if n is not None and n < 0:
            raise InvalidArgumentError(f"TensorArray size must be non-negative, got {n}")
        self._graph = bool(STATE.traces)
        if self._graph:
            self._n, self._buf, self._written = n, None, frozenset()
            if n is None:       # a tensor of the trace: its size is known when the program runs
                self._start = math.cast(size, D.int32)
            if self._es.is_fully_defined():
                self._shape = tuple(self._es)
                self._buf = self._zeros(self._start if n is None else n)
        else:
            self._items, self._cleared = [None] * n, set()

    # -- common ------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape:
        """TensorFlow's: the shape given, merged with each write's when ``infer_shape``."""
        return self._es

    @property
    def _es(self):
        # one cell shared by every TensorArray a write, a loop or a branch makes from this
        # one, as TensorFlow shares its ``_element_shape`` list: a write anywhere merges in
        return self._es_cell[0]

    @_es.setter
    def _es(self, shape):
        self._es_cell[0] = shape

    def __repr__(self):
        kind = "traced" if self._graph else "eager"
        return (f"<tf.TensorArray {kind} dtype={self._dtype.name} size={self._length()} "
                f"element_shape={self._es}>")

    def _length(self):
        return self._n if self._graph else len(self._items)

    def size(self, name=None) -> Tensor:
        if self._graph and self._n is None:     # grown in a loop, or given as a tensor
            if self._buf is None:
                return convert_to_tensor(self._start, dtype=D.int32)
            return dims.dim(dims.shape_of(self._buf), 0)
        return convert_to_tensor(self._length(), dtype=D.int32)

    def _value(self, value):
        if hasattr(value, "aval") or isinstance(value, (Tensor, Variable)):
            if value.dtype != self._dtype:
                raise InvalidArgumentError(f"TensorArray dtype is {self._dtype.name} but Op is "
                                           f"trying to write dtype {value.dtype.name}")
            return value if _symbolic(value) else convert_to_tensor(value)
        return convert_to_tensor(value, dtype=self._dtype)

    def _check_shape(self, shape):
        """TensorFlow's check of a written shape against the element shape (its eager and
        graph texts); ``infer_shape`` then merges it in."""
        if not shape.is_compatible_with(self._es):
            if not self._graph:
                raise ValueError(f"Incompatible shape for value ({shape}), expected "
                                 f"({self._es}) (at {user_line()})")
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self._es} "
                             f"(at {user_line()})")
        if self._infer_shape:
            self._es = self._es.merge_with(shape)

    def _zeros(self, n):
        return creation.zeros([n, *self._shape], self._dtype)

    def _index(self, index, op):
        """The index as a Python int, or None for a tensor of the trace; eagerly a negative
        one is TensorFlow's OutOfRangeError (in a function, the list ops' range error)."""
        i = _static_int(index, "index")
        if i is not None and i < 0 and not self._graph:
            verb = "Reading from" if op == "read" else "Writing to"
            raise OutOfRangeError(f"{verb} negative indices (index {i}) is not allowed.")
        return i

    def __iter__(self):
        """Beyond TensorFlow (whose TensorArray is not iterable): the elements in order."""
        if self._graph and self._shapes is not None and self._n is not None:
            return iter([self.read(k) for k in range(self._n)])
        if self._graph:
            return iter(array.unstack(self.stack()))
        return iter(self._eager_items(range(len(self._items))))

    # -- methods ---------------------------------------------------------------------
    def write(self, index, value, name=None) -> TensorArray:
        return self._write(index, self._value(value), check=True)

    def _write(self, index, value, check):
        i = self._index(index, "write")
        if check:
            self._check_shape(TensorShape(value.shape))
        out = self if not self._graph else self._copy()
        if not self._graph:
            return out._eager_write(i, value)
        if out._shapes is None and not out._dense_fits(tuple(value.shape)):
            out = out._as_ragged(len(value.shape))
        if out._dynamic_size and out._n is not None and i is None and not _in_range(index, out._n):
            # a tensor index the trace cannot bound: TensorFlow grows the list to it
            out = out._run_time_sized(math.multiply(math.cast(index, D.int32), 0))
        elif i is not None and out._n is not None and (i >= out._n or i < 0):
            if not out._dynamic_size or i < 0:   # TensorFlow's TensorListSetItem, at trace time
                raise InvalidArgumentError(f"Trying to modify element {i} in a list with "
                                           f"{out._n} elements. (at {user_line()})")
            out = out._with_size(i + 1)
        at = index if i is None else i
        if out._shapes is not None:
            out._check_rank(len(value.shape))
            out._buf, out._shapes = ragged_list.set_item(out._buf, out._shapes, at, value,
                                                         resize=out._grows())
            return out
        out._written = None if i is None or out._written is None else out._written | {i}
        if out._shape is None:
            out._shape = tuple(value.shape)
        if out._n is None and out._buf is None:
            out._buf = out._zeros(out._start)
        if out._grows():                        # run-time size: grow to the index first
            out._buf = _grown(out._buf, at)
        if out._buf is None:
            out._buf = out._zeros(out._n)
        out._buf = tensor_list_set_item(out._buf, at, value)
        return out

    def read(self, index, name=None) -> Tensor:
        i = self._index(index, "read")
        if not self._graph:
            return self._eager_read(i)
        ta = self._listed()
        if i is not None and ta._n is not None and not 0 <= i < ta._n:   # TensorListGetItem
            raise InvalidArgumentError(f"Trying to access element {i} in a list with {ta._n} "
                                       f"elements. (at {user_line()})")
        at = index if i is None else i
        if ta._shapes is not None:
            return ragged_list.get_item(ta._buf, ta._shapes, at, ta._es)
        if i is None or i < 0:
            return tensor_list_get_item(ta._buf, at)
        return array.list_rows(ta._buf, i)

    def stack(self, name=None) -> Tensor:
        if not self._graph:
            return self._eager_stack(self._eager_items(range(len(self._items))))
        ta = self._listed()
        if ta._shapes is not None:
            return ragged_list.stack(ta._buf, ta._shapes, ta._es)
        return ta._buf

    def gather(self, indices, name=None) -> Tensor:
        if not self._graph:
            idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
            for i in idx.reshape(-1):
                if not 0 <= i < len(self._items):
                    raise OutOfRangeError(f"Tried to gather index {int(i)} but array size is: "
                                          f"{len(self._items)}")
            out = self._eager_stack(self._eager_items([int(i) for i in idx.reshape(-1)]),
                                    name="stack")
            return out if idx.ndim == 1 else array.reshape(out, idx.shape + tuple(out.shape[1:]))
        ta = self._listed()
        if ta._shapes is not None:
            return ragged_list.gather(ta._buf, ta._shapes, indices, ta._es)
        return array.list_rows(ta._buf, indices)

    def concat(self, name=None) -> Tensor:
        if not self._graph:
            items = self._eager_items(range(len(self._items)))
            for k, t in enumerate(items):
                if not t.shape:
                    raise InvalidArgumentError(f"Concat saw a scalar shape at index {k} but "
                                               f"requires at least vectors.")
            return array.concat(items, 0) if items else creation.zeros((0,), self._dtype)
        ta = self._listed()
        if ta._shapes is not None:
            return ragged_list.concat(ta._buf, ta._shapes, ta._es)
        if len(ta._buf.shape) < 2 and ta._es.rank is None:     # TensorListConcatV2's error
            raise InvalidArgumentError(f"Concat saw a scalar shape at index 0 but requires at "
                                       f"least vectors. (at {user_line()})")
        if len(ta._buf.shape) < 2:      # TensorFlow: "Shapes must be equal rank", tracing
            raise ValueError(f"TensorArray.concat needs elements of rank >= 1, got scalars "
                             f"(at {user_line()})")
        return array.reshape(ta._buf, (-1,) + tuple(ta._buf.shape[2:]))

    def unstack(self, value, name=None) -> TensorArray:
        value = self._value(value)
        if not value.shape:
            raise ValueError(f"Cannot unstack a scalar into a TensorArray (at {user_line()})")
        k = value.shape[0]
        if not self._dynamic_size and self._length() is not None and k > self._length():
            raise ValueError(f"Cannot unstack {k} tensors into a TensorArray of static size "
                             f"{self._length()} ")
        if self._graph:
            return self.scatter(list(range(k)), value)
        for i in range(k):      # TensorFlow's eager unstack neither checks nor merges shapes
            self._write(i, array.list_rows(value, i), check=False)
        return self

    def scatter(self, indices, value, name=None) -> TensorArray:
        value = self._value(value)
        idx = [int(i) for i in np.asarray(indices.numpy() if isinstance(indices, Tensor)
                                          else indices).reshape(-1)] \
            if not _symbolic(indices) else None
        if idx is None:
            k = indices.shape[0]
            if k is None:
                raise ValueError("TensorArray.scatter: the number of indices must be static")
            idx = [array.gather(indices, j) for j in range(k)]
        if len(idx) != value.shape[0]:
            raise InvalidArgumentError(f"TensorArray.scatter: {len(idx)} indices for "
                                       f"{value.shape[0]} values")
        out = self
        for j, i in enumerate(idx):
            out = out.write(i, array.list_rows(value, j))
        return out

    def split(self, value, lengths, name=None) -> TensorArray:
        """TensorFlow checks and merges the pieces' shape only when the lengths are equal."""
        value = self._value(value)
        lengths = [int(n) for n in np.asarray(lengths.numpy() if isinstance(lengths, Tensor)
                                              else lengths).reshape(-1)]
        if sum(lengths) != value.shape[0]:
            raise InvalidArgumentError(
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                f"{sum(lengths)} and value's shape is: {list(value.shape)} ")
        check = self._graph and len(set(lengths)) == 1
        out, start = self, 0
        for i, n in enumerate(lengths):
            out = out._write(i, array.strided_slice(value, ((start, start + n, None),)), check)
            start += n
        return out

    def close(self, name=None) -> None:
        pass

    def mark_used(self):
        pass

    # -- eager ---------------------------------------------------------------------------
    def _eager_write(self, i, value):
        if i >= len(self._items):
            if not self._dynamic_size:
                raise OutOfRangeError(f"Tried to write to index {i} but array is not resizeable "
                                      f"and size is: {len(self._items)}")
            self._items += [None] * (i + 1 - len(self._items))
        self._items[i] = value
        self._cleared.discard(i)
        return self

    def _eager_read(self, i):
        if i >= len(self._items):
            raise OutOfRangeError(f"Tried to read from index {i} but array size is: "
                                  f"{len(self._items)}")
        if self._items[i] is None and i in self._cleared:
            raise InvalidArgumentError(
                f"Could not read index {i} twice because it was cleared after a previous "
                f"read (perhaps try setting clear_after_read = false?)")
        value = self._eager_items([i])[0]
        if self._clear_after_read:
            self._items[i] = None
            self._cleared.add(i)
        return value

    def _eager_items(self, indices):
        """The elements at ``indices``, an unwritten one as zeros of the element shape
        (TensorFlow's ``_maybe_zero``: a ValueError when that shape is not fully known)."""
        out = []
        for i in indices:
            v = self._items[i]
            if v is None:
                if not self._es.is_fully_defined():
                    raise ValueError(f"Cannot convert a partially known TensorShape {self._es} "
                                     f"to a Tensor.")
                v = creation.zeros(tuple(self._es), self._dtype)
            out.append(v)
        return out

    def _eager_stack(self, items, name="packed"):
        """TensorFlow's eager stack: the elements converted to one tensor (Pack's error when
        their shapes differ); no element: [0, *element_shape], or [0] if it is not known."""
        if not items:
            shape = tuple(self._es) if self._es.is_fully_defined() else ()
            return creation.zeros((0,) + shape, self._dtype)
        for k, t in enumerate(items[1:], 1):
            if tuple(t.shape) != tuple(items[0].shape):
                raise InvalidArgumentError(
                    f"Shapes of all inputs must match: values[0].shape = "
                    f"{_dims_text(items[0].shape)} != values[{k}].shape = {_dims_text(t.shape)} "
                    f"[Op:Pack] name: {name}")
        return array.stack(items)

    # -- traced ---------------------------------------------------------------------------
    def _copy(self):
        out = object.__new__(TensorArray)
        out.__dict__.update(self.__dict__)
        return out

    def _grows(self):
        """Whether a write past the end grows it at run time (dynamic size, run-time size)."""
        return self._n is None and self._dynamic_size

    def _dense_fits(self, shape):
        """Whether an element of ``shape`` can be a row of the dense tensor."""
        if None in shape:
            return False
        return self._shape is None or self._shape == shape

    def _check_rank(self, rank):
        have = len(self._buf.shape) - 1
        if rank != have:
            raise ValueError(f"a TensorArray written with elements of rank {have} and {rank} "
                             f"inside a function (at {user_line()}): tapeflow keeps one element "
                             f"rank per TensorArray (TensorFlow's TensorList can hold several)")

    def _as_ragged(self, rank):
        """This TensorArray as the padded list of elements of different shapes (the dense
        rows written so far with their shape: every row, if a tensor index wrote it)."""
        out = self._copy()
        if out._buf is not None:
            out._check_rank(rank)
            out._buf, out._shapes = ragged_list.from_dense(out._buf, out._written)
        else:
            rows = out._start if out._n is None else out._n
            out._buf, out._shapes = ragged_list.empty(rows, rank, out._dtype)
        out._shape, out._written = None, None
        return out

    def _listed(self):
        """This TensorArray with its tensor(s): never written and of an element shape not
        fully known, the padded list (its readers then raise TensorFlow's errors)."""
        if self._buf is not None:
            return self
        return self._as_ragged(self._es.rank or 0)

    def _grow(self, n):
        if self._shapes is not None:
            self._buf, self._shapes = ragged_list.grown(self._buf, self._shapes, n)
        elif self._buf is not None:
            self._buf = array.concat([self._buf, self._zeros(n - self._n)], 0)
        self._n = n

    def _with_size(self, n):
        """A traced TensorArray grown to ``n`` elements (a dynamic one, before a loop)."""
        out = self._copy()
        out._grow(n)
        return out

    def _run_time_sized(self, zero):
        """This dynamic-size TensorArray with its size known only when the program runs: its
        tensor's leading dim None, so a While whose trip count the trace does not know can
        grow it (a write past the end concatenates zero rows, ``_grown``). ``zero``: an int32
        scalar of the trace, 0 when the program runs (see ``_unknown_rows``)."""
        out = self._copy()
        out._n, out._start = None, self._n
        if out._shapes is not None:
            out._buf, out._shapes = ragged_list.relaxed(out._buf, out._shapes, zero, rows=True)
            return out
        if out._buf is None and out._shape is not None:
            out._buf = out._zeros(self._n)
        if out._buf is not None:
            out._buf = _unknown_rows(out._buf, zero)
        return out

    def _with_element_shape(self, shape, zero):
        """A traced TensorArray whose element shape is now known: its zeros buffer made
        (``zero``: see ``_run_time_sized``)."""
        out = self._copy()
        out._shape = tuple(shape)
        out._buf = out._zeros(out._n) if out._n is not None \
            else _unknown_rows(out._zeros(out._start), zero)
        return out

    def _loop_form(self, zero):
        """A padded TensorArray as a loop variable: its element sizes (and its length, when
        run-time sized) known at run time only, so the body may write larger ones and grow
        it (a dense one is unchanged)."""
        if self._shapes is None:
            return self
        out = self._copy()
        out._buf, out._shapes = ragged_list.relaxed(out._buf, out._shapes, zero,
                                                    rows=out._n is None)
        return out

    # -- nest protocol: a loop or branch variable is its tensor(s) ------------------------
    def __tf_flatten__(self):
        if not self._graph:
            return self, []          # eager: the mutable list itself, no tensors
        # which Python indices were written is not carried (None: unknown after a loop)
        meta = (self._dtype, self._n, self._shape, self._dynamic_size, self._clear_after_read,
                self._infer_shape, self._start, self._es_cell, self._shapes is not None)
        parts = [] if self._buf is None else [self._buf]
        return meta, parts + ([] if self._shapes is None else [self._shapes])

    @classmethod
    def __tf_unflatten__(cls, meta, components):
        if isinstance(meta, TensorArray):
            return meta
        out = object.__new__(cls)
        (out._dtype, out._n, out._shape, out._dynamic_size, out._clear_after_read,
         out._infer_shape, out._start, out._es_cell, ragged) = meta
        out._graph = True
        out._buf = components[0] if components else None
        out._shapes = components[1] if ragged else None
        out._written = None
        return out


def _dims_text(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def _unknown_rows(buf, zero):
    """``buf`` with its leading dim None: ``zero`` more rows of zeros appended. ``zero`` is a
    tensor of the trace (not a constant, which would give a static shape again when the
    graph is replayed through dispatch: autodiff, specialisation), 0 when the program runs:
    the initial value of a list that a loop of unknown trip count grows."""
    pad = creation.zeros([zero] + list(buf.shape[1:]), buf.dtype)
    return array.concat([buf, pad], 0)


def _grown(buf, index):
    """``buf`` [None, *e] with zero rows appended up to ``index + 1`` rows if it has fewer (a
    dynamic-size write past the end, as TensorFlow's TensorListSetItem with
    resize_if_index_out_of_bounds)."""
    n = dims.dim(dims.shape_of(buf), 0)
    index = convert_to_tensor(index, dtype=D.int32) if not _symbolic(index) else index
    more = math.maximum(math.subtract(math.add(index, 1), n), 0)
    pad = creation.zeros([more] + list(buf.shape[1:]), buf.dtype)
    return array.concat([buf, pad], 0)


__all__ = ["TensorArray", "tensor_list_set_item"]
