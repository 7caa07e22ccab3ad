"""Load each saved program named on the command line under a memory cap; one JSON line per load.

Run as a subprocess by test_hostile.py: each load may grow the address space by at most
``--cap-mb`` MiB (``RLIMIT_AS``, set afresh before each load from the current size), so a
file that would exhaust memory fails the test with a MemoryError instead of taking the
machine. The peak resident size is reset before each load (``/proc/self/clear_refs``) and
reported with the wall and CPU time and what was raised (the CPU time is what the
tests bound: the machines running them are shared, so wall time varies with their load).
"""
import json
import resource
import sys
import time

import tapeflow as tf
from tapeflow.saved_model import SavedModelError


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) << 10
    return 0


def main(argv):
    cap = int(argv[1]) << 20
    tf.set_backend("numpy")
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    for path in argv[2:]:
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass
        base = _status("VmRSS")
        resource.setrlimit(resource.RLIMIT_AS, (_status("VmSize") + cap, hard))
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            tf.saved_model.load(path)
            kind, msg = "loaded", ""
        except SavedModelError as e:
            kind, msg = "SavedModelError", str(e)
        except BaseException as e:  # noqa: BLE001 - reported, and the test fails on it
            kind, msg = type(e).__name__, str(e)[:300]
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        peak = max(0, _status("VmHWM") - base)
        print(json.dumps({"path": path, "kind": kind, "message": msg[:300], "seconds": seconds, "cpu_seconds": cpu,
                          "peak_mb": peak / (1 << 20)}), flush=True)


if __name__ == "__main__":
    main(sys.argv)
