"""The background compile queue: job files in the cache directory, one worker per directory.

A process that wants a program compiled in the background writes a job file (the graph's IR
as JSON) into ``<cache>/queue/`` and makes sure a worker runs. Nothing ever waits on the
worker to take a job, so a process exits in milliseconds whatever it has queued: its jobs stay
queued, and the worker compiles them into the disk cache for the next process.

Files in ``queue/``: ``<id>.job`` waiting, ``<id>.run`` being compiled, ``<id>.out`` the answer
(JSON) for a process still waiting for it. ``<id>`` is ``<time ns>-<pid>-<n>``, so sorting the
names gives the order asked. Job and answer files are written under a temporary name and
renamed, so nobody reads half of one.

**One worker per cache directory.** The worker holds ``flock`` on ``<cache>/worker.lock`` for its
whole life and writes its pid into ``<cache>/worker.pid``; a second worker started at the same
moment finds the lock taken and exits before importing anything. A process that queued a job
starts a worker unless the pid file names a live one. The worker takes jobs oldest first and
ends when the queue is empty (after a short linger): it empties the pid file, releases the lock
and looks at the queue once more, so a job queued while it was ending is never left alone.

It runs at lower priority (``nice`` +10, so interpreted calls of the processes it works for
keep their cores), with umask 077 (whatever it writes is private), and never creates a
directory: a job whose cache directory was removed is dropped with it, and a directory that
Numba recreated under it mid-compile is removed again.
"""
import json
import os
import subprocess
import sys
import time

LOCK, PID, QUEUE = "worker.lock", "worker.pid", "queue"
LINGER = 1.0          # seconds an idle worker waits for another job before it exits
MARKER = "tapeflow-compile-worker"
_counter = 0

# The worker's first lines run before tapeflow is imported: a worker that loses the race for the
# lock costs a Python start-up, not an import of Numba.
_BOOT = f"""# {MARKER}
import fcntl, os, sys
folder = sys.argv[1]
try:
    fd = os.open(os.path.join(folder, {LOCK!r}), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(0)
from tapeflow.codegen.compile_queue import serve
serve(folder, fd)
"""


def queue_dir(folder):
    return os.path.join(folder, QUEUE)


# -- the side that asks ------------------------------------------------------------------

def submit(folder, payload, name, reply=True):
    """Queue ``payload`` (the JSON text of a job) for the worker of ``folder``; its job id.

    ``reply``: whether this process waits for the answer (``wait``); jobs handed over at exit
    get none."""
    global _counter
    _counter += 1
    qdir = queue_dir(folder)
    os.makedirs(qdir, mode=0o700, exist_ok=True)
    job = f"{time.time_ns():020d}-{os.getpid()}-{_counter}"
    meta = json.dumps({"name": name, "pid": os.getpid(), "reply": reply})
    tmp = os.path.join(qdir, f".{job}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(meta + "\n" + payload)
    os.replace(tmp, os.path.join(qdir, job + ".job"))
    return job


def worker_pid(folder):
    """The pid of the worker serving ``folder``, or None if none is running."""
    try:
        with open(os.path.join(folder, PID), encoding="ascii") as f:
            pid = int(f.read().strip() or 0)
    except (OSError, ValueError):
        return None
    return pid if pid and _is_worker(pid) else None


def _pid_state(pid):
    """"gone", "foreign" (alive, but not ours to signal) or "alive"."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        return "foreign"
    return "alive"


def _is_worker(pid):
    state = _pid_state(pid)
    if state != "alive":
        return state == "foreign"
    try:     # a recycled pid is some other program
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return MARKER.encode() in f.read()
    except OSError:
        return True   # no /proc: trust the live pid


_spawned = []     # workers this process started: polled (reaped), never waited for


def ensure_worker(folder):
    """Start a worker for ``folder`` unless one runs (or one we started is still starting);
    the Popen started, or None. Never waits."""
    _spawned[:] = [p for p in _spawned if p.poll() is None]
    if worker_pid(folder) is not None or any(p.args[-1] == folder for p in _spawned):
        return None
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    p = subprocess.Popen(
        [sys.executable, "-c", _BOOT, folder], env=env, cwd="/", close_fds=True,
        # nothing of ours: a worker outliving us must not hold a pipe whoever ran us reads
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    _spawned.append(p)
    return p


def detach():
    """At exit: the workers we started run on by themselves (not leaks for Popen to report)."""
    for p in _spawned:
        if p.poll() is None:
            p.returncode = 0
    _spawned.clear()


def wait(folder, job, timeout=None):
    """The worker's answer to ``job`` (a dict), restarting a dead worker while it is queued.

    Raises ``LookupError`` if the job vanished unanswered (its directory removed)."""
    qdir = queue_dir(folder)
    base = os.path.join(qdir, job)
    deadline = None if timeout is None else time.monotonic() + timeout
    pause, checked, started = 0.005, time.monotonic(), 0
    while True:
        answer = _take(base + ".out")
        if answer is not None:
            return answer
        if not (os.path.exists(base + ".job") or os.path.exists(base + ".run")):
            answer = _take(base + ".out")      # answered between the two looks
            if answer is not None:
                return answer
            raise LookupError(f"compile job {job} vanished from {qdir}")
        if time.monotonic() - checked > 0.5:
            checked = time.monotonic()
            if ensure_worker(folder) is not None:  # it died (or ended as we queued): the next answers
                started += 1
                if started > 5 and os.path.exists(base + ".job"):
                    _unlink(base + ".job")    # workers that die before taking a job: no storm
                    raise LookupError(f"no compile worker could start for {folder}")
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"compile job {job} not answered in {timeout} s")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.1)


def _take(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    _unlink(path)
    return json.loads(text)


def status(folder):
    """What ``tapeflow cache info`` shows: the worker's pid, the programs running and queued."""
    out = {"worker": worker_pid(folder), "running": [], "queued": []}
    try:
        names = sorted(os.listdir(queue_dir(folder)))
    except OSError:
        return out
    for n in names:
        kind = {".job": "queued", ".run": "running"}.get(os.path.splitext(n)[1])
        if kind:
            meta = _meta(os.path.join(queue_dir(folder), n))
            out[kind].append(meta.get("name", "?") if meta else "?")
    return out


def _meta(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.loads(f.readline())
    except (OSError, ValueError):
        return None


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


# -- the worker --------------------------------------------------------------------------

def serve(folder, lock_fd):
    """The worker's life (``_BOOT`` took the lock): compile queued jobs until none is left."""
    import fcntl   # noqa: PLC0415 - POSIX only, and only the worker locks
    os.umask(0o077)
    try:
        os.nice(10)
    except OSError:
        pass
    qdir = queue_dir(folder)
    _write_pid(folder, os.getpid())
    _recover(qdir)
    while True:
        if not _still_ours(folder, lock_fd):
            return       # the directory was removed (and perhaps made anew): not ours to serve
        job = _next_job(qdir, LINGER)
        if job is not None:
            _run(folder, qdir, job)
            continue
        # idle: let go, then look once more (a job queued while we were ending finds no live
        # pid, so its process started a worker; or it finds us here and we take it)
        _write_pid(folder, None)
        fcntl.flock(lock_fd, fcntl.LOCK_UN)
        if not os.path.isdir(folder) or _next_job(qdir, 0) is None:
            return
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return         # the worker that process started has it
        _write_pid(folder, os.getpid())


def _still_ours(folder, lock_fd):
    try:
        here, held = os.stat(os.path.join(folder, LOCK)), os.fstat(lock_fd)
    except OSError:
        return False
    return (here.st_dev, here.st_ino, here.st_ctime_ns) == (held.st_dev, held.st_ino, held.st_ctime_ns)


def _write_pid(folder, pid):
    try:
        fd = os.open(os.path.join(folder, PID), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return
    with os.fdopen(fd, "w") as f:
        f.write("" if pid is None else str(pid))


def _recover(qdir):
    """Jobs a killed worker was compiling: answered as failures (never retried: one may kill
    every worker that takes it)."""
    for n in _listdir(qdir):
        if n.endswith(".run"):
            path = os.path.join(qdir, n)
            meta = _meta(path) or {}
            if meta.get("reply") and _alive(meta.get("pid")):
                _answer(path[:-4] + ".out", {
                    "ok": False, "error": "the compile worker process died while compiling it"})
            _unlink(path)
        elif n.endswith(".out") and not _alive(_pid_of(n)):
            _unlink(os.path.join(qdir, n))     # for a process that is gone


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _pid_of(name):
    try:
        return int(name.split("-")[1])
    except (IndexError, ValueError):
        return None


def _alive(pid):
    return bool(pid) and _pid_state(pid) != "gone"


def _next_job(qdir, linger):
    """The oldest queued job's id, waiting up to ``linger`` seconds for one; or None."""
    deadline = time.monotonic() + linger
    while True:
        jobs = [n[:-4] for n in _listdir(qdir) if n.endswith(".job")]
        if jobs:
            return jobs[0]
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def _run(folder, qdir, job):
    base = os.path.join(qdir, job)
    try:
        os.replace(base + ".job", base + ".run")
        with open(base + ".run", encoding="utf-8") as f:
            meta = json.loads(f.readline())
            payload = f.read()
    except (OSError, ValueError):
        _unlink(base + ".run")
        return
    answer = compile_job(folder, payload)
    if not answer["ok"]:
        _log(folder, f"{meta.get('name')}: {answer['error']}")
    if meta.get("reply") and _alive(meta.get("pid")):
        _answer(base + ".out", answer)
    _unlink(base + ".run")


def compile_job(folder, payload):
    """Compile one job's graph into ``folder``'s cache: the answer (JSON-able)."""
    # the compiler is imported in the worker only (Numba's import cost)
    from ..codegen.program import compile_graph   # noqa: PLC0415
    from ..ir import codec    # noqa: PLC0415 - with it
    t0 = time.perf_counter()
    try:
        before = os.stat(folder)
    except OSError:
        return {"ok": False, "error": f"the cache directory {folder} was removed"}
    try:
        job = json.loads(payload)
        graph = codec.decode(job["graph"])
        prog = compile_graph(graph, job["name"], folder)
        want = job.get("key")
        if want and prog.fallback is None and not str(prog.cache_path).endswith(f"_{want}.py"):
            # a bug (the source depends on something the graph's IR does not carry): the asking
            # process must not compile it again itself, so it is told, and stays interpreted
            raise RuntimeError(f"the worker generated another source ({prog.cache_path}) than "
                               f"the process that asked (key {want})")
        answer = {"ok": True, "seconds": time.perf_counter() - t0, "stats": prog.stats()}
    except Exception as e:   # noqa: BLE001 - sent back to the asking process as the reason
        answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    _unmake_if_recreated(folder, before)
    return answer


def _unmake_if_recreated(folder, before):
    """Remove ``folder`` if it was deleted and recreated (by Numba's cache) while we compiled."""
    try:
        now = os.stat(folder)
    except OSError:
        return
    if (now.st_dev, now.st_ino, now.st_ctime_ns) == (before.st_dev, before.st_ino, before.st_ctime_ns):
        return      # untouched (an inode number alone may be reused by a recreated directory)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    # a cache another process made there since holds sources, a queue or a lock: leave it
    if any(n.endswith(".py") or n in (QUEUE, LOCK, PID) for n in names):
        return
    import shutil   # noqa: PLC0415 - this rare path only
    shutil.rmtree(folder, ignore_errors=True)


def _log(folder, line):
    """Failures go to ``<cache>/worker.log`` (a job handed over at exit has nobody to tell)."""
    path = os.path.join(folder, "worker.log")
    try:
        if os.path.getsize(path) > 1 << 16:
            os.replace(path, path + ".1")
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        return
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()} {line}\n")


def _answer(path, answer):
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(answer, f)
        os.replace(tmp, path)
    except OSError:
        _unlink(tmp)
