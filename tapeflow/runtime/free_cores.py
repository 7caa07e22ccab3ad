"""How many cores other processes leave this one, sampled in the background.

A multi-threaded GEMM is as slow as its slowest thread. On a quiet machine two OpenBLAS
threads nearly halve a product; on a busy one a descheduled thread makes the others spin
until a scheduler tick (blas_threads.py). So the thread policy asks how many cores are free
now. Every ``SAMPLE_S`` a daemon thread reads the busy time of the CPUs this process may run
on (``/proc/stat``) and subtracts this process's own CPU time (``os.times``: all its threads,
OpenBLAS's spinning ones included, so our own use never reads as load). What is left is the
other processes' load; the free cores, smoothed over a few samples, are kept in one int64
that compiled GEMMs read by address (codegen/blas.py) and NumPy calls read through ``get``.

Where ``/proc/stat`` does not exist the value stays 0 ("not known") and the static policy
holds: small products on one thread, large ones on the pool.
"""
import ctypes
import os
import threading
import time

SAMPLE_S = 0.2          # seconds between samples (jiffies are 10 ms: 40 per sample on 2 cores)
SMOOTHING = 0.5         # weight of the newest sample in the running estimate of others' load
ROUND_UP = 0.3          # 1.7 free cores count as 2: two threads need others under 0.3 cores
_STAT = "/proc/stat"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

free = ctypes.c_int64(0)      # cores free for this process now; 0: not known
samples = 0                   # how many samples have set it
_started = None               # the pid that started the sampler (a forked child starts its own)
_lock = threading.Lock()


def _our_cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def busy_seconds(stat_text, cpus):
    """CPU-seconds the listed CPUs have spent busy since boot, from ``/proc/stat``'s text
    (user, nice, system, irq, softirq and steal; idle and iowait are not busy, guest time is
    already inside user)."""
    wanted = {f"cpu{c}" for c in cpus}
    jiffies = 0
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] in wanted:
            user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
            jiffies += user + nice + system + irq + softirq + steal
    return jiffies / _TICK


def free_cores(n_cpus, others):
    """Cores left for us when other processes keep ``others`` cores busy (at least 1)."""
    return max(1, min(n_cpus, int(n_cpus - others + ROUND_UP)))


def _own_seconds():
    t = os.times()
    return t.user + t.system


def _sample(cpus):
    with open(_STAT) as f:
        return time.monotonic(), busy_seconds(f.read(), cpus), _own_seconds()


def _run(cpus):
    global samples
    others = None
    last = _sample(cpus)
    while True:
        time.sleep(SAMPLE_S)
        now = _sample(cpus)
        wall = now[0] - last[0]
        if wall > 0:
            used = max(0.0, (now[1] - last[1]) - (now[2] - last[2])) / wall
            others = used if others is None else SMOOTHING * used + (1 - SMOOTHING) * others
            free.value = free_cores(len(cpus), others)
            samples += 1
        last = now


def start():
    """Start sampling (once per process; cheap to call again). No-op without ``/proc/stat``."""
    global _started
    if _started == os.getpid():
        return
    with _lock:
        if _started == os.getpid() or not os.path.exists(_STAT):
            return
        _started = os.getpid()
        cpus = _our_cpus()
        try:
            _sample(cpus)
        except (OSError, ValueError):
            return
        free.value = 1                # until the first sample says otherwise
        threading.Thread(target=_run, args=(cpus,), name="tapeflow-free-cores",
                         daemon=True).start()


def measured(timeout=3 * SAMPLE_S):
    """Start sampling and wait (up to ``timeout`` s) for a first measurement; whether there is one."""
    start()
    end = time.monotonic() + timeout
    while not samples and _started and time.monotonic() < end:
        time.sleep(SAMPLE_S / 4)
    return samples > 0


def address():
    """Where compiled code reads the free-core count."""
    return ctypes.addressof(free)
