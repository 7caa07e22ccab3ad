"""GradientTape: TensorFlow's tape API over the recorder and the backprop sweep."""
from __future__ import annotations

import contextlib
import enum
import itertools
import types
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import _nest
from ..errors import user_line
from ..ops import array
from ..ir.opdef import AVal
from ..ops.creation import zeros_like
from ..ops.dims import shape_of
from ..ops.indexed_slices import IndexedSlices, dense
from ..runtime.recorder import STATE, Entry, Recorder, current_trace
from ..runtime.tensor import Tensor, Variable, convert_to_tensor, wrap
from ..runtime.traceback_filter import drop_internal_frames
from . import explain as _explain
from .backprop import Plan, flat_ids, zeros

CREATED = itertools.count()   # serial numbers of GradientTapes, in creation order



def _no_vectorized(*args):
    raise RuntimeError("vectorized jacobians need tapeflow.tracer, which installs them on import")


# The tape's vectorized jacobians and compiled gradients are graph programs built by the tracer,
# the passes and codegen, all above this layer: tracer/jacobian.py installs them here.
VECTORIZED = types.SimpleNamespace(jacobian=_no_vectorized, batch_jacobian=_no_vectorized,
                                   loop_jacobian=_no_vectorized, loop_batch_jacobian=_no_vectorized,
                                   compiled_gradient=lambda *args: None)

_NON_PERSISTENT = ("A non-persistent GradientTape can only be used to compute one set of "
                   "gradients (or jacobians)")


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on.

    >>> x, y = tf.constant(1.0), tf.constant(2.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     z = y * 3.0
    >>> tape.gradient(z, x) is None
    True
    >>> tape = tf.GradientTape()
    >>> with tape:
    ...     tape.watch(x)
    ...     z = y * 3.0
    >>> tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    NONE = "none"
    ZERO = "zero"


class GradientTape:
    """Records operations on watched tensors so their gradients can be computed.

    Trainable variables read inside the context are watched automatically (unless
    ``watch_accessed_variables=False``); tensors are watched with ``watch``. A
    non-persistent tape frees what it kept after one ``gradient``/``jacobian`` call.

    Args:
      persistent: allow several ``gradient``/``jacobian`` calls on one record.
      watch_accessed_variables: watch trainable variables read while recording.

    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> tape.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=6.0>

    A variable is watched when it is read:

    >>> w = tf.Variable(2.0)
    >>> with tf.GradientTape() as tape:
    ...     loss = w * w * w
    >>> tape.gradient(loss, w)
    <tf.Tensor: shape=(), dtype=float32, numpy=12.0>
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._serial = next(CREATED)   # creation order (tracer/pyif.py: tapes older than an `if`)
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._rec = None
        self._recording = False
        self._watched_variables = ()
        self._freed_rec = None

    def __repr__(self):
        rec = self._rec if self._rec is not None else self._freed_rec
        ops = 0 if rec is None else len(rec.entries)
        watched = 0 if rec is None else sum(1 for i in rec.tensor_op.values() if i == -1)
        variables = 0 if rec is None else len(rec.variables)
        state = ("recording" if self._recording else
                 "used up" if self._freed_rec is not None and self._rec is None else "not recording")
        return (f"<GradientTape persistent={self._persistent}, {state}: {ops} ops recorded, "
                f"{watched - variables} tensors and {variables} variables watched>")

    # -- context -------------------------------------------------------------------
    def __enter__(self):
        self._push()
        return self

    def __exit__(self, typ, value, traceback):
        if self._recording:
            self._pop()

    def _push(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an "
                             "already-active tape.")
        if self._rec is None:
            self._rec = Recorder(self._persistent, self._watch_accessed_variables)
        STATE.tapes.append(self._rec)
        self._recording = True

    def _pop(self):
        if not self._recording:
            raise ValueError("Tape is not recording.")
        tapes = STATE.tapes
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is self._rec:
                del tapes[i]
                break
        self._recording = False

    @contextlib.contextmanager
    def _ensure_recording(self):
        if not self._recording:
            self._push()
            try:
                yield
            finally:
                self._pop()
        else:
            yield

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stop recording operations on this tape (a context manager).

        Raises:
          RuntimeError: the tape is not recording (outside its ``with`` block).

        >>> x = tf.constant(3.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        ...     with tape.stop_recording():
        ...         z = y * x          # not recorded: contributes no gradient
        ...     out = y + z
        >>> tape.gradient(out, x)
        <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
        """
        if self._rec is None:
            raise RuntimeError("GradientTape.stop_recording() can only be used in a context where "
                               "the tape is recording.")
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Clear everything recorded (and watched) so far; keep recording.

        >>> x = tf.constant(3.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        ...     tape.reset()
        ...     tape.watch(x)
        ...     y = x + x
        >>> tape.gradient(y, x)
        <tf.Tensor: shape=(), dtype=float32, numpy=2.0>
        """
        self._pop()
        self._rec = None
        self._push()

    # -- watching ------------------------------------------------------------------
    def watch(self, tensor) -> None:
        """Watch a tensor, a variable, or a nested structure of them.

        Args:
          tensor: a floating-point tensor or variable, or a list/tuple/dict of them.

        Raises:
          ValueError: a value that is not a tensor or variable.

        >>> x = tf.constant([1.0, 2.0])
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = tf.reduce_sum(tf.sin(x))
        >>> tape.gradient(y, x)
        <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 0.5403023, -0.4161468], dtype=float32)>
        """
        if self._rec is None:
            self._rec = Recorder(self._persistent, self._watch_accessed_variables)
        for t in _nest.flatten(tensor):
            if isinstance(t, Variable):
                self._rec.watch_variable(t)
            elif isinstance(t, Tensor) or hasattr(t, "aval"):
                if not t.dtype.is_floating:
                    warnings.warn(f"The dtype of the watched tensor must be floating (e.g. "
                                  f"tf.float32), got {t.dtype!r}", stacklevel=2)
                self._rec.watch(t._id)
            else:
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not tf.Tensor "
                                 f"or tf.Variable.")

    def watched_variables(self) -> tuple[Variable, ...]:
        """Variables watched by this tape, in the order they were created (TensorFlow's).

        >>> a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
        >>> with tf.GradientTape() as tape:
        ...     y = b * a
        >>> [v.name for v in tape.watched_variables()]
        ['a:0', 'b:0']
        """
        if self._rec is not None:
            self._watched_variables = _by_creation(self._rec.variables.values())
        return self._watched_variables

    def saved_bytes(self, detail: bool = False) -> int | list[tuple[str, int]]:
        """Bytes of tensor data this tape keeps for its backward pass (beyond TensorFlow).

        Each recorded op keeps only what its gradient reads. A loop inside a compiled
        function keeps its per-iteration values: plain stacks (one row per iteration),
        returned by the call's forward program and saved with its other tensors, while they
        fit the loop memory budget (``TAPEFLOW_LOOP_MEMORY_MB``, or ``tf.config.loop_memory``
        around the first call under a tape); else checkpoints (the loop state every k
        iterations, and k rows), which the loop's gradient allocates when it runs. Loop
        gradients run one after another, each freeing its checkpoints, so the total counts
        the largest of them.

        Args:
          detail: return the parts instead of the total: (what, bytes) for the tensors
            saved (a loop's stacks among them), then for each loop its mode ("stacks" or
            "checkpoints every k iterations"), trip count and the bytes its gradient adds.

        Returns:
          The total in bytes, or with ``detail`` a list of (description, bytes).

        >>> @tf.function
        ... def f(x):
        ...     return tf.while_loop(lambda i, s: i < 100, lambda i, s: (i + 1, tf.sin(s)), (0, x))[1]
        >>> x = tf.constant([0.5, -0.2, 0.1])
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = f(x)
        >>> for what, nbytes in tape.saved_bytes(detail=True):
        ...     print(nbytes, what)
        1220 tensors saved by the recorded ops
        0 loop at ...:3 in f, 100 iterations: stacks: 100 rows x 12 bytes, returned by the forward program (among the tensors saved)
        >>> tape.saved_bytes()
        1220
        >>> with tf.config.loop_memory(0):            # checkpoint every loop
        ...     with tf.GradientTape() as tape:
        ...         tape.watch(x)
        ...         y = tf.function(f.python_function)(x)
        >>> what, nbytes = tape.saved_bytes(detail=True)[1]
        >>> print(nbytes, what)
        288 loop at ...:3 in f, 100 iterations: checkpoints every 12 iterations: 9 states x 16 bytes + 12 rows x 12 bytes
        """
        if self._rec is None:
            return [] if detail else 0
        return self._rec.saved_bytes(detail)

    # -- gradients -----------------------------------------------------------------
    def _begin(self):
        """The recorder for a gradient computation; a non-persistent tape stops recording."""
        if self._rec is None:
            raise RuntimeError(_NON_PERSISTENT)
        if self._recording:
            if not self._persistent:
                self._pop()
            else:
                warnings.warn("Calling GradientTape.gradient on a persistent tape inside its context "
                              "is significantly less efficient than calling it outside the context.",
                              stacklevel=3)
        return self._rec

    def _end(self):
        if not self._persistent:
            if STATE.on_free is not None:    # tracing both branches of an `if` (tracer/pyif.py)
                STATE.on_free(self)
            self._watched_variables = _by_creation(self._rec.variables.values())
            self._free()

    def _free(self):
        """Drop every saved tensor; keep the op skeleton so explain() still works."""
        rec = self._rec
        rec.entries = [Entry(e.op, e.attrs, e.rule, e.input_ids, e.output_ids, (None,) * len(e.inputs),
                             (None,) * len(e.outputs), e.in_avals, e.out_avals) for e in rec.entries]
        self._freed_rec, self._rec = rec, None

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE) -> Any:
        """Gradient of ``target`` (summed if not scalar; a structure is summed too) w.r.t. ``sources``.

        Args:
          target: a tensor (or a structure of tensors) computed while recording.
          sources: a tensor or variable, or any nest (list, tuple, dict) of them.
          output_gradients: the upstream gradient per target (ones by default).
          unconnected_gradients: ``UnconnectedGradients.NONE`` (None for a source the target
            does not depend on) or ``ZERO`` (zeros).

        Returns:
          The structure of ``sources`` with a Tensor per source, or None (zeros with
          ``UnconnectedGradients.ZERO``) where the target does not depend on it.

        Raises:
          RuntimeError: a non-persistent tape asked a second time.

        >>> x = tf.constant(2.0)
        >>> w = tf.Variable(3.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = w * x * x
        >>> grads = tape.gradient(y, {"x": x, "w": w})
        >>> float(grads["x"]), float(grads["w"])
        (12.0, 4.0)
        """
        unconnected = unconnected_option(unconnected_gradients)
        rec = self._begin()
        try:
            flat_targets = _nest.flatten(target)
            target_ids = flat_ids(flat_targets, "target")
            flat_sources = _nest.flatten(sources)
            source_ids = flat_ids(flat_sources, "sources")
            seeds = self._seeds(output_gradients, flat_targets)
            source_targets = {s._id: _aval(s) for s in flat_sources if s._id in set(target_ids)}
            grads = None
            if self._persistent:   # repeated calls on one structure run compiled (tracer/jacobian.py)
                grads = VECTORIZED.compiled_gradient(rec, target_ids, flat_targets, source_ids,
                                                     flat_sources, seeds)
            if grads is None:
                grads = Plan(rec, target_ids).run(source_ids, seeds, source_targets,
                                                 keep_slices=True)
            flat = [grads[s] for s in source_ids]
            if _explain.enabled() and None in flat:
                _explain.warn_none(rec, target_ids, flat_sources, flat)
            flat = _fill_unconnected(flat, flat_sources, unconnected)
        except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
            drop_internal_frames(e)
            raise
        finally:
            self._end()
        return _nest.pack_sequence_as(sources, flat)

    @staticmethod
    def _seeds(output_gradients, flat_targets):
        if output_gradients is None:
            return [None] * len(flat_targets)
        seeds = _nest.flatten(output_gradients)
        if len(seeds) != len(flat_targets):
            raise ValueError(f"output_gradients has {len(seeds)} tensors but target has "
                             f"{len(flat_targets)}")
        return [None if g is None else convert_to_tensor(g, dtype_hint=t.dtype)
                for g, t in zip(seeds, flat_targets)]

    def explain(self, target, source) -> str:
        """Why ``gradient(target, source)`` is None (or that it is not): a sentence for humans."""
        rec = self._rec if self._rec is not None else self._freed_rec
        target_ids = flat_ids(_nest.flatten(target), "target")
        if rec is not None and self._rec is not None:
            g = Plan(rec, target_ids).run([source._id], [None] * len(target_ids), {})[source._id]
            if g is not None:
                return f"{_explain.describe(source)} is connected to the target: its gradient is not None."
        return _explain.explain(rec, target_ids, source)

    def jacobian(self, target, sources,
                 unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor: bool = True) -> Any:
        """d target[i...] / d source[j...] with shape ``target.shape + source.shape`` per source.

        Computed as one vectorized program (``experimental_use_pfor=True``, the default).
        Inside a function traced with ``None`` dims the number of rows is known only at run
        time: then it is a loop over them either way (static shape with ``None`` where unknown).

        Args:
          target: a tensor computed while recording.
          sources: a tensor or variable, or a nest of them.
          unconnected_gradients: ``UnconnectedGradients.NONE`` or ``ZERO``.
          parallel_iterations: accepted for TensorFlow's signature.
          experimental_use_pfor: False computes it row by row, as TensorFlow's loop.

        Returns:
          The structure of ``sources``, each a tensor of shape ``target.shape + source.shape``.

        >>> x = tf.constant([1.0, 2.0])
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.jacobian(y, x)
        <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
        array([[2., 0.],
               [0., 4.]], dtype=float32)>
        """
        try:
            unconnected = unconnected_option(unconnected_gradients, experimental_use_pfor and "jacobian")
            if self._rec is None:
                raise RuntimeError(_NON_PERSISTENT)
            _check_loop_jacobian(self, experimental_use_pfor, "jacobian")
            flat_sources = _nest.flatten(sources)
            source_ids = flat_ids(flat_sources, "sources")
            target = _target_tensor(target, "jacobian", self)
            known = _known_sizes([target] + flat_sources)
            if experimental_use_pfor or not known:
                # sizes known only at run time (a function traced with None dims): one loop over
                # run-time seeds, pfor or not
                build = VECTORIZED.jacobian if known else VECTORIZED.loop_jacobian
                rec = self._begin()
                try:
                    out = build(rec, target, flat_sources, source_ids,
                                unconnected is UnconnectedGradients.ZERO)
                finally:
                    self._end()
                return _nest.pack_sequence_as(sources, out)
            with self._ensure_recording():
                flat_target = array.reshape(target, [-1])
            rec = self._begin()
            try:
                rows = _seeded_rows(rec, flat_target, source_ids, flat_sources, unconnected,
                                    lambda n, i: _one_hot(n, i, flat_target.dtype), flat_target.shape[0])
                out = []
                for src, col in zip(flat_sources, rows):
                    if col is None:
                        out.append(None)
                        continue
                    shape = tuple(target.shape) + tuple(src.shape)
                    out.append(array.reshape(array.stack(col), shape) if col else
                               wrap(np.zeros(shape, flat_target.dtype.np)))
            finally:
                self._end()
            return _nest.pack_sequence_as(sources, out)
        except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
            drop_internal_frames(e)
            raise

    def batch_jacobian(
            self, target, source,
            unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
            parallel_iterations=None, experimental_use_pfor: bool = True) -> Tensor | None:
        """Per-example jacobian: shape ``target.shape + source.shape[1:]``; assumes rows independent.

        As in TensorFlow, an unconnected source gives zeros whatever ``unconnected_gradients`` says.

        Args:
          target: a tensor of shape ``[batch, ...]`` computed while recording.
          source: a tensor of shape ``[batch, ...]``.

        Returns:
          A tensor of shape ``target.shape + source.shape[1:]``.

        >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = tf.reduce_sum(x * x, axis=1, keepdims=True)
        >>> tape.batch_jacobian(y, x)
        <tf.Tensor: shape=(2, 1, 2), dtype=float32, numpy=
        array([[[2., 4.]],
        <BLANKLINE>
               [[6., 8.]]], dtype=float32)>
        """
        unconnected_option(unconnected_gradients, experimental_use_pfor and "batch_jacobian")
        if self._rec is None:
            raise RuntimeError(_NON_PERSISTENT)
        _check_loop_jacobian(self, experimental_use_pfor, "batch_jacobian")
        target = _target_tensor(target, "batch_jacobian", self)
        if not isinstance(source, (Tensor, Variable)) and not hasattr(source, "aval"):
            raise TypeError(f"batch_jacobian: source must be a Tensor or Variable, got "
                            f"{type(source).__name__} [at {user_line()}]")
        tshape, sshape = target.shape, source.shape
        tshape.with_rank_at_least(2)
        sshape.with_rank_at_least(2)
        if None not in (tshape[0], sshape[0]) and tshape[0] != sshape[0]:
            raise ValueError(f"Need first dimension of target shape ({tshape}) and source shape "
                             f"({sshape}) to match.")
        batch = tshape[0]
        if not _known_sizes([target, source]):   # a function traced with None dims
            rec = self._begin()
            try:
                return VECTORIZED.loop_batch_jacobian(rec, target, source)
            except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
                drop_internal_frames(e)
                raise
            finally:
                self._end()
        if experimental_use_pfor:
            rec = self._begin()
            try:
                return VECTORIZED.batch_jacobian(rec, target, source)
            except Exception as e:   # the user reads their frames (runtime/traceback_filter.py)
                drop_internal_frames(e)
                raise
            finally:
                self._end()
        with self._ensure_recording():
            target2 = array.reshape(target, [batch, int(np.prod(tuple(tshape[1:])))])  # batch 0 too
        rec = self._begin()
        try:
            width = target2.shape[1]
            (col,) = _seeded_rows(rec, target2, [source._id], [source], UnconnectedGradients.NONE,
                                  lambda n, j: _one_hot_column(batch, n, j, target2.dtype), width)
            shape = tuple(tshape) + tuple(sshape[1:])
            if col is None or not col:
                return wrap(np.zeros(shape, target.dtype.np))
            stacked = array.stack(col)                        # [width, batch, *source[1:]]
            stacked = array.reshape(stacked, [width, batch, int(np.prod(tuple(sshape[1:])))])
            stacked = array.transpose(stacked, [1, 0, 2])
            return array.reshape(stacked, shape)
        except Exception as e:
            drop_internal_frames(e)
            raise
        finally:
            self._end()


def unconnected_option(value, vectorized=None):
    """``value`` as an ``UnconnectedGradients``; a bad one raises TensorFlow's ValueError (inside
    a vectorized jacobian, ``vectorized`` names it: TensorFlow's pfor wraps the error)."""
    try:
        return UnconnectedGradients(value)
    except ValueError:
        if vectorized:
            raise ValueError(f"Encountered an exception while vectorizing the {vectorized} "
                             f"computation. Vectorization can be disabled by setting "
                             f"experimental_use_pfor to False.") from None
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}") from None


def _by_creation(variables):
    """Variables in creation order (ids count up as tensors and variables are made)."""
    return tuple(sorted(variables, key=lambda v: v._id))


def _target_tensor(target, what, tape=None):
    """The target as a tensor; a list or other structure is an error naming the user's line
    (TensorFlow fails on ``target.shape``: one target per call). An IndexedSlices is densified
    on the recording ``tape``, as TensorFlow's reshape of it is."""
    if isinstance(target, IndexedSlices) and tape is not None:
        with tape._ensure_recording():
            return dense(target)
    if isinstance(target, Tensor) or hasattr(target, "aval"):
        return target
    if isinstance(target, (np.ndarray, np.generic, int, float, Variable)):
        return convert_to_tensor(target)
    raise TypeError(f"{what}: target must be a single Tensor, got {type(target).__name__} "
                    f"[at {user_line()}]")


def _one_hot(n, i, dtype):
    a = np.zeros((n,), dtype.np)
    a[i] = 1
    return wrap(a)


def _one_hot_column(batch, n, j, dtype):
    a = np.zeros((batch, n), dtype.np)
    a[:, j] = 1
    return wrap(a)


def _check_loop_jacobian(tape, use_pfor, what):
    """TensorFlow's check: a jacobian by a loop of gradients (no pfor) on a non-persistent tape
    works only inside a function, which traces the loop's one gradient (the tape is then used
    up, as by ``gradient``); eagerly it would need the record once per row."""
    if not use_pfor and not tape._persistent and current_trace() is None:
        raise RuntimeError(f"GradientTape must be created with persistent=True to compute the "
                           f"{what} with eager execution enabled and with experimental_use_pfor "
                           f"set to False.")


def _seeded_rows(rec, target, source_ids, flat_sources, unconnected, seed_fn, n):
    """Per source, the list of gradients for seeds 0..n-1 (None if the source is unconnected)."""
    plan = Plan(rec, [target._id])
    source_targets = {s._id: s.aval for s in flat_sources if s._id == target._id}
    if n == 0:
        probe = plan.run(source_ids, [wrap(np.zeros(tuple(target.shape), target.dtype.np))], source_targets)
        return [None if probe[s] is None and unconnected is UnconnectedGradients.NONE else []
                for s in source_ids]
    cols = [[] for _ in source_ids]
    for i in range(n):
        g = plan.run(source_ids, [seed_fn(n, i)], source_targets)
        for k, s in enumerate(source_ids):
            cols[k].append(g[s])
    out = []
    for src, col in zip(flat_sources, cols):
        if all(g is None for g in col):
            out.append(None if unconnected is UnconnectedGradients.NONE
                       else [zeros(src.aval)] * n)
        else:
            out.append([zeros(src.aval) if g is None else g for g in col])
    return out


def _aval(t):
    """``t``'s aval; unknown dims (a trace) with their run-time sizes, for its ones."""
    return t.aval if None not in tuple(t.shape) else AVal(shape_of(t), t.dtype)


def _known_sizes(tensors):
    """Whether every size is known while tracing. If not (a function traced with None dims),
    the number of seeds is a run-time tensor and the jacobian is a loop over them
    (tracer/dynamic_jacobian.py), whichever ``experimental_use_pfor`` says."""
    return all(None not in tuple(t.shape) for t in tensors)


def _fill_unconnected(flat, sources, unconnected):
    if unconnected is UnconnectedGradients.NONE:
        return flat
    return [zeros_like(s) if g is None else g for g, s in zip(flat, sources)]  # None dims too
