"""Tiered execution: the interpreter answers while Numba compiles in the background.

``Tiered`` has a Program's calling convention and runs ``current``: the optimized graph on
the NumPy interpreter until the compiled program is ready, then that program. Owners that
keep a per-call fast path (ConcreteFunction) do not call through it: they register with
``on_ready`` and swap their own program object when it fires, so a compiled call pays for
no check that the compile has finished.

Compiles run one at a time, in the order asked, on one daemon thread ("tapeflow-compiler").
How that thread gets the machine code is ``MECHANISM``:

- ``"process"`` (the default): the job (the graph's IR as JSON) is queued as a file in the
  disk cache's directory for its compile worker (codegen/compile_queue.py: one worker per
  directory, at lower priority, ending when its queue is empty), which decodes the graph,
  generates the same source and compiles it into the shared disk cache (codegen/cache.py:
  keyed by the source's hash); the thread then loads the program from that cache. Numba's
  compiler is Python code holding the GIL for most of a compile: in a thread it stalls the
  caller's interpreter calls for the whole compile; in another process it stalls them only
  for the cache load. Both caches write under temporary names and rename, so a killed worker
  leaves no broken entry. At exit, the jobs not yet handed over are queued as files (a few
  milliseconds, whatever is queued) and the worker finishes them for the next process.
- ``"thread"``: the compiler thread compiles in this process (a graph the JSON codec cannot
  encode takes this path too).

A compile that fails leaves the program on the interpreter and warns once, naming the
program and the error.
"""
import atexit
import json
import os
import threading
import time
import warnings
import queue

from ..codegen import compile_queue
from ..ir import codec
from . import compile_log

MECHANISM = "process"

_jobs = queue.Queue()
_thread = None
_unsent = set()     # Tiered jobs asked for and not yet handed to the worker (see _stop_worker)
_exiting = False    # set at exit: jobs left are queued for the worker, none waits for one
_send_lock = threading.Lock()
_start_lock = threading.Lock()


class TierWarning(RuntimeWarning):
    """A background compile failed: the function keeps running on the interpreter."""


class Tiered:
    """A graph's program: ``current`` (the interpreter, then the compiled Program)."""

    def __init__(self, graph, name, interpreted, compile_here):
        self.graph, self.name = graph, name
        self.interpreted = self.current = interpreted
        self.error = None            # why the compile failed, if it did
        self.seconds = None
        self.ready = threading.Event()  # set when the compile finished (either way) and the
        self._done = False              # listeners ran; _done: the outcome is known
        self._compile_here = compile_here   # (graph, name) -> Program, in this process
        self._listeners = []
        self._lock = threading.Lock()
        self._started = time.perf_counter()

    def __call__(self, *args):
        return self.current(*args)

    @property
    def tier(self):
        return "interpreter" if self.current is self.interpreted else "numba"

    def on_ready(self, listener):
        """Call ``listener(program)`` once the compiled program exists (now, if it does)."""
        with self._lock:
            if not self._done:
                self._listeners.append(listener)
                return
        if self.error is None:
            listener(self.current)

    def wait(self, timeout=None):
        """The compiled program (or the interpreter, if the compile failed)."""
        self.ready.wait(timeout)
        return self.current

    def _finish(self, program, error):
        with self._lock:
            self.seconds = time.perf_counter() - self._started
            if error is None:
                self.current = program
            else:
                self.error = error
            listeners, self._listeners = self._listeners, []
            self._done = True
        if error is None:
            for listener in listeners:
                listener(program)
        else:
            warnings.warn(f"tapeflow: the background compile of {self.name!r} failed, so it "
                          f"keeps running on the NumPy interpreter: {error}", TierWarning,
                          stacklevel=2)
            compile_log.record("failed", self.name, [v.aval for v in self.graph.inputs],
                               self.seconds, tier="interpreter", note=error)
        self.ready.set()


def start(graph, name, interpreted, compile_here):
    """A ``Tiered`` running ``interpreted`` now, compiled in the background (see module doc)."""
    t = Tiered(graph, name, interpreted, compile_here)
    with _start_lock:
        _unsent.add(t)
    _ensure_thread()
    _jobs.put(t)
    return t


def _ensure_thread():
    global _thread
    with _start_lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="tapeflow-compiler", daemon=True)
            _thread.start()


def _serve():
    while True:
        t = _jobs.get()
        try:
            try:
                answer = _in_worker(t) if MECHANISM == "process" else None
            except _Exiting:
                return
            with _start_lock:
                _unsent.discard(t)
            if answer is None:
                program = t._compile_here(t.graph, t.name)
            else:       # the worker compiled it into the disk cache: load it from there
                t0 = time.perf_counter()
                program = t._compile_here(t.graph, t.name, log=False)
                stats = answer["stats"]
                again = getattr(program, "stats", lambda: {})().get("cache_misses")
                compile_log.record(
                    "compile", t.name, [v.aval for v in t.graph.inputs], answer["seconds"],
                    "miss" if stats["cache_misses"] else "hit",
                    "interpreter" if program.fallback else "numba",
                    f"background process; loaded here in {time.perf_counter() - t0:.2f} s"
                    + ("; COMPILED AGAIN here: the cache entry was gone" if again else ""))
            error = None
        except Exception as e:   # noqa: BLE001 - reported as the warning, the function goes on
            program, error = None, f"{type(e).__name__}: {e}"
        try:
            t._finish(program, error)
        except Exception:   # noqa: BLE001 - a listener's bug must not stop later compiles
            t.ready.set()
            compile_log.LOGGER.exception("tier switch of %r failed", t.name)


# -- the worker process ----------------------------------------------------------------------

class WorkerError(RuntimeError):
    """The compile worker process failed to compile a graph, or died."""


class _Exiting(Exception):
    """The process is exiting: its job went to the worker's queue with the others."""


def _in_worker(t):
    """Compile ``t.graph`` in the worker process (into the disk cache): the worker's answer
    (seconds, Numba's cache stats), or None if the graph could not be sent there or is in the
    disk cache already (then the caller compiles, or loads, it in this process)."""
    key = _source_key(t.graph, t.name)
    if key is None or _on_disk(t.graph, t.name, key):
        return None
    try:
        payload = _payload(t, key)
    except Exception:   # noqa: BLE001 - not encodable: compile in this process instead
        return None
    folder = _folder()
    with _send_lock:
        if _exiting:
            raise _Exiting
        job = compile_queue.submit(folder, payload, t.name)
        _unsent.discard(t)
    compile_queue.ensure_worker(folder)
    try:
        answer = compile_queue.wait(folder, job)
    except LookupError as e:
        raise WorkerError(f"the compile worker lost the job ({e})") from None
    if not answer["ok"]:
        raise WorkerError(answer["error"])
    return answer


def _folder():
    """The checked cache directory, where the queue and the worker live."""
    from ..codegen import cache   # noqa: PLC0415 - codegen's import cost stays off the tracer's
    return cache.cache_dir(_cache_dir())


def _source_key(graph, name):
    """``(stem, key)`` of the program's source in the disk cache, or None if it is not
    generated (an interpreter fallback: cheap to make here)."""
    # Numba's import cost: the compiler thread pays it, never the caller
    from ..codegen import cache, generate
    try:
        gen = generate.generate(graph, name)
    except Exception:   # noqa: BLE001 - not generated (interpreter fallback): cheap here
        return None
    return gen.func_name, cache.program_key(gen.source)


def _on_disk(graph, name, key=None):
    """Whether Numba's disk cache holds this graph's program: then loading it here (a few
    tenths of a second) beats starting a worker that would load it too."""
    from ..codegen import cache   # noqa: PLC0415 - with _source_key's imports
    key = key or _source_key(graph, name)
    if key is None:
        return True
    stem = "_".join(key)
    folder = cache.cache_dir(_cache_dir())
    try:
        index = os.listdir(cache.numba_folder(folder))
    except OSError:
        return False
    return os.path.exists(os.path.join(folder, stem + ".py")) and any(
        f.startswith(stem + ".") and f.endswith(".nbi") for f in index)


def _payload(t, key=None):
    """The job: the graph with its custom gradients' graphs (they show in the source's header:
    without them the worker would generate, and cache, another source), and the key of the
    source this process generated, which the worker's must equal."""
    try:
        graph = codec.encode(t.graph, custom_gradients=True)
    except Exception:   # noqa: BLE001 - a gradient graph the codec cannot carry
        graph = codec.encode(t.graph, custom_gradients=False)
    return json.dumps({"graph": graph, "name": t.name, "key": None if key is None else key[1]})


def _cache_dir():
    # the worker must write where this process will read, even if the variable changed
    return os.environ.get("TAPEFLOW_CACHE_DIR") or None


def worker_pid():
    """The pid of the compile worker serving this process's cache directory, or None."""
    return compile_queue.worker_pid(_folder())


@atexit.register
def _stop_worker():
    """At exit, compiles not yet handed over are queued as files for the worker, which
    finishes them into the disk cache and ends when its queue is empty: a short script still
    warms the cache for the next process. Nothing waits for the worker, or for a pipe."""
    global _exiting
    if MECHANISM != "process":
        return
    with _send_lock:
        _exiting = True
        with _start_lock:
            left = sorted(_unsent, key=lambda t: t._started)
            _unsent.clear()
    if not left:
        compile_queue.detach()
        return
    try:
        folder = _folder()
        for t in left:
            compile_queue.submit(folder, _payload(t), t.name, reply=False)
        compile_queue.ensure_worker(folder)
    except Exception:   # noqa: BLE001, S110 - best effort at exit: the next process compiles
        pass
    compile_queue.detach()
