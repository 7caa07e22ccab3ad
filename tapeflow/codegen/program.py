"""``compile_graph``: Graph -> Program, a callable returning what ``run_graph`` returns.

Compiling = generate the module source (generate.py), write it to the cache directory and
execute it (cache.py: the file must hold exactly that source, Numba's files their recorded
hashes, checked before they are read), then compile its function(s) for exactly the argument types the graph
declares (arrays as read-only C-contiguous: tapeflow tensors are read-only, and a writable
array passes too): ``dispatcher.compile(signature)`` loads Numba's on-disk cache when it can.
Each dispatcher is then closed to new signatures, so an argument Numba cannot convert to the
declared type (a 0-d array for a scalar, another array dtype, a strided array) raises
TypeError in the generated caller, which converts the inputs once and calls again.
A Python or NumPy scalar for a scalar input is converted by Numba itself: the fast path is
one dispatcher call.

A graph no template can compile (float16 values) becomes a Program that runs the
interpreter and says why in ``Program.fallback``. A graph with unknown dimensions is
compiled once: the program's source reads every size from its arguments (shape_free.py), so
the source generated for each call's shapes is the same text (concretize.py); a size no input
gives (a list a loop grows) is read from the array holding it at run time, and a failed
check on one runs that call on the interpreter (``Program.reruns``). A Numba failure is a bug in a template: it is
raised as ``CodegenError`` naming the IR node whose line failed, never as Numba's raw error.
An op rejecting its data at run time (an index out of range, a singular matrix) raises the
interpreter's ``InvalidArgumentError`` (failures.py).
"""
import logging
import re
import threading
import warnings
from collections import Counter

import numba
import numba.core.errors as nerr
import numpy as np

from ..runtime.interpret import run_graph
from . import cache
from .concretize import concretize
from .emitter import Unsupported, node_texts, value_names
from .failures import failure_handler
from .generate import generate, scalar_converter

log = logging.getLogger("tapeflow.codegen")
_LOCK = threading.RLock()


class CodegenError(RuntimeError):
    """Internal error: generated code failed to compile. ``node`` is the IR node's printed form."""

    def __init__(self, message, node=None):
        super().__init__(message)
        self.node = node


def _numba_types(avals):
    out = []
    for a in avals:
        dt = numba.from_dtype(a.dtype.np)
        # read-only: tapeflow tensors are read-only buffers, and Numba passes writable arrays to a
        # read-only signature too, so neither kind needs a copy
        out.append(numba.types.Array(dt, len(a.shape), "C", readonly=True) if a.shape else dt)
    return tuple(out)


class Program:
    """A compiled graph. ``program(*args)`` -> tuple of NumPy values, one per graph output.

    ``source``: the generated module; ``cache_path``: its file; ``kernels``: the jitted
    function(s); ``fallback``: None, or why this graph runs in the interpreter; ``stats()``:
    Numba's cache hits and misses (a hit is machine code loaded from disk, a miss a compile);
    ``size_classes``: the speed choices generation took on input sizes, which other sizes
    would make another program (``sizeclass.SizeClasses``; None on the interpreter);
    ``reruns``: calls that ran on the interpreter because a size only the run knows failed
    a check the program relies on.
    """

    def __init__(self, graph, name, source=None, cache_path=None, kernels=(), call=None,
                 fallback=None):
        self.graph, self.name = graph, name
        self.source, self.cache_path = source, cache_path
        self.kernels, self.fallback = list(kernels), fallback
        self._call = call
        self._failed = None     # failures.FailureHandler of a compiled program
        self.size_classes = None
        # for callers that pin argument types themselves (tracer/fastcall.py): the single kernel's
        # compiled entry point taking (inputs..., consts...), or None; what each output is
        self.entry, self.consts, self.out_kinds = None, [], None

    def __call__(self, *args):
        return self._call(*args)

    @property
    def reruns(self):
        """Calls a size only the run knows sent to the interpreter (a check it failed:
        failures.py), 0 for a program that is not compiled."""
        return self._failed.reruns if self._failed is not None else 0

    def stats(self):
        """{"cache_hits": n, "cache_misses": n}: how Numba got this program's machine code."""
        hits = sum(sum(k.stats.cache_hits.values()) for k in self.kernels)
        misses = sum(sum(k.stats.cache_misses.values()) for k in self.kernels)
        return {"cache_hits": hits, "cache_misses": misses}

    def __repr__(self):
        how = f"fallback: {self.fallback}" if self.fallback else self.cache_path
        return f"<tapeflow Program {self.name!r} ({how})>"


def _fast_program(prog, call):
    """The Program with ``call`` as its type's __call__: no extra Python frame per call."""
    cls = type("Program", (Program,), {"__call__": staticmethod(call), "__slots__": ()})
    prog.__class__ = cls
    return prog


def compile_graph(graph, name="program", cache_dir=None):
    """Compile ``graph`` to a Program (see module docstring)."""
    if any(None in v.aval.shape for v in graph.inputs):
        return _ShapeSpecialized(graph, name, cache_dir)
    try:
        gen = generate(graph, name)
    except Unsupported as e:
        return _interpreted(graph, name, str(e))
    key = cache.program_key(gen.source)
    with _LOCK:       # threads may compile the same program at once: one writes and imports it
        path = cache.write_source(gen.source, gen.func_name, key, cache_dir)
        try:
            kernels, calls = _compile(gen, path, key, graph)
        except CodegenError:
            # Numba's files may have changed under us (another process deleting a corrupt
            # entry): compile once more from nothing; a second failure is the template's
            cache.forget_module(key)
            cache.purge_compiled(path)
            path = cache.write_source(gen.source, gen.func_name, key, cache_dir)
            kernels, calls = _compile(gen, path, key, graph)
        mod = cache.import_module(path, key, gen.source)
    convert = [scalar_converter(a) for a in gen.out_avals if not a.shape]
    failed = failure_handler(graph, name)
    call = mod.make_call(calls, gen.consts, _normalizer(gen, graph), convert, failed)
    prog = Program(graph, name, gen.source, path, kernels, call)
    prog._failed = failed
    prog.size_classes = gen.size_classes
    if len(kernels) == 1:
        prog.entry = kernels[0].overloads[_numba_types(gen.param_avals)].entry_point
    prog.consts = gen.consts
    prog.out_kinds = [a.dtype.np.type if not a.shape else "copy" if k in gen.shared else "array"
                      for k, a in enumerate(gen.out_avals)]
    return _fast_program(prog, call)


def _interpreted(graph, name, reason):
    log.info("program %r runs in the interpreter: %s", name, reason)

    def call(*args):
        return run_graph(graph, *args)
    return Program(graph, name, call=call, fallback=reason)


def _compile(gen, path, key, graph):
    """Compile each part for exactly its argument types; later parts take earlier results' types.
    Returns (the distinct dispatchers, what the caller calls for each part in order)."""
    types = dict(zip(gen.params, _numba_types(gen.param_avals), strict=True))
    kernels = []
    # a part of one text used with other types (an input, read-only, where another use passes
    # an intermediate) has an overload per use: each use calls its own, never a choice
    # between them at the call (writable arrays fit both: Numba calls that ambiguous)
    calls, shared = [], Counter(p.name for p in gen.parts)
    compiled = False
    try:
        with warnings.catch_warnings(), cache.entry_lock(path):
            warnings.simplefilter("ignore", nerr.NumbaWarning)
            mod = cache.import_module(path, key, gen.source)
            if not _compiled_here(mod, gen.parts, dict(types)):
                cache.verify_compiled(path)     # before Numba unpickles anything
            for part in gen.parts:
                dispatcher = getattr(mod, part.name)
                sig = tuple(types[a] for a in part.args)
                if sig not in dispatcher.overloads:      # else: compiled earlier in this process
                    # a compile or a disk-cache load: tracer/engine.py logs which (stats())
                    misses = sum(dispatcher.stats.cache_misses.values())
                    dispatcher.compile(sig)
                    compiled |= sum(dispatcher.stats.cache_misses.values()) > misses
                if dispatcher not in kernels:   # (parts of equal text share one: generate.py)
                    kernels.append(dispatcher)
                calls.append(dispatcher.overloads[sig].entry_point if shared[part.name] > 1
                             else dispatcher)
                if part.rets:
                    ret = dispatcher.overloads[sig].signature.return_type
                    types.update(zip(part.rets, ret.types, strict=True))
            for dispatcher in kernels:  # every part's types are known: no compile at a call
                dispatcher.disable_compile()
            if compiled:     # Numba wrote new files: record their hashes (still holding the entry)
                cache.record_compiled(path)
    except Exception as e:   # noqa: BLE001 - any failure here is a template bug
        raise _codegen_error(e, gen, path, graph) from None
    return kernels, calls


def _compiled_here(mod, parts, types):
    """Whether every part of ``mod`` is compiled in this process for its argument types (a
    later part's include what the earlier parts return, known from their overloads)."""
    for part in parts:
        sig = tuple(types.get(a) for a in part.args)
        overload = getattr(mod, part.name).overloads.get(sig)
        if overload is None:
            return False
        if part.rets:
            types.update(zip(part.rets, overload.signature.return_type.types, strict=True))
    return True


def _codegen_error(exc, gen, path, graph):
    """CodegenError naming the IR node whose generated line Numba (or Python) rejected."""
    node = _failing_node(exc, gen, path)
    printed = _printed(graph, node) if node is not None else None
    what = f"node `{printed}`" if printed else "it"
    first = next((ln.strip() for ln in str(exc).strip().split("\n") if ln.strip()), "")[:300]
    msg = (f"tapeflow could not compile program {gen.func_name!r}: Numba rejected {what} "
           f"({type(exc).__name__}: {first}). This is a bug in tapeflow's code generator; "
           f"the generated source is {path}")
    return CodegenError(msg, printed)


def _failing_node(exc, gen, path):
    """The node of the line the error points at; else of the one line naming what it quotes."""
    text = str(exc)
    lines = [int(m) for m in re.findall(re.escape(path) + r'", line (\d+)', text)]
    if isinstance(exc, SyntaxError) and exc.lineno:
        lines.append(exc.lineno)
    for ln in lines:
        if ln in gen.line_nodes:
            return gen.line_nodes[ln]
    source = gen.source.split("\n")
    for token in re.findall(r"'([A-Za-z_][\w.]*)'", text):
        owners = {id(n): n for ln, n in gen.line_nodes.items()
                  if re.search(r"\b" + re.escape(token) + r"\b", source[ln - 1].split("  # ")[0])}
        if len(owners) == 1:
            return next(iter(owners.values()))
    return None


def _printed(graph, node):
    return node_texts(graph, value_names(graph)).get(id(node), node.op)


def _normalizer(gen, graph):
    """Convert arguments the kernel's types refused: dtype, 0-d arrays, layout, read-only."""
    avals = gen.param_avals[:len(graph.inputs)]

    def normalize(*args):
        fixed = []
        for k, (a, aval) in enumerate(zip(args, avals, strict=True)):
            arr = np.asarray(a)
            if arr.shape != tuple(aval.shape):
                raise ValueError(f"{gen.func_name}: input #{k} must have shape "
                                 f"{list(aval.shape)}, got {list(arr.shape)}")
            if aval.shape:
                arr = np.ascontiguousarray(arr, dtype=aval.dtype.np)
                fixed.append(arr if arr.flags.writeable else arr.copy())
            else:
                fixed.append(aval.dtype.np.type(arr.astype(aval.dtype.np)[()]))
        return fixed
    return normalize


class _ShapeSpecialized(Program):
    """A graph with unknown dimensions. Each new combination of input shapes has its graph
    made concrete and its source generated (concretize.py); the sources read sizes from the
    arrays, so they are one text and share one Numba compile (one per rank and dtype)."""

    def __init__(self, graph, name, cache_dir):
        super().__init__(graph, name)
        self._cache_dir = cache_dir
        self._by_shape = {}
        self._call = self._dispatch

    def _dispatch(self, *args):
        key = tuple(np.shape(a) for a in args)
        prog = self._by_shape.get(key)
        if prog is None:
            # sizes no input gives (a TensorArray grown in a loop, a loop variable whose
            # shape_invariants let it change size) stay unknown: the source reads them from
            # the arrays holding them (shape_free.py)
            prog = compile_graph(concretize(self.graph, key), self.name, self._cache_dir)
            self._by_shape[key] = prog
            self.source, self.cache_path = prog.source, prog.cache_path
            self.kernels, self.fallback = prog.kernels, prog.fallback
            self.size_classes = prog.size_classes
        return prog(*args)

    @property
    def reruns(self):
        return sum(p.reruns for p in self._by_shape.values())
