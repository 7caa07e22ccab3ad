"""The workloads, one module each, imported only when run (W6 imports W2 in a fresh process).

A workload module has ``ID``, ``TITLE``, ``STRESSES`` and ``run(opts) -> result dict``
(``harness.run_standard`` does the usual work).
"""
import importlib

MODULES = {"W1": "w1", "W2": "w2", "W3": "w3", "W4a": "w4a", "W4b": "w4b", "W5": "w5", "W6": "w6",
           "W7": "w7", "W8": "w8", "W9": "w9", "W11": "w11", "W12": "w12", "W13": "w13",
           "W10": "w10"}   # not in ORDER: needs the distribute extra and starts a cluster
# W9 is not in ORDER either: minutes of fresh training processes (run it with --workloads W9)
PLANNED = ()
ORDER = ("W1", "W2", "W3", "W4a", "W4b", "W5", "W6", "W7", "W8", "W11", "W12", "W13")


def load(wid):
    return importlib.import_module(f".{MODULES[wid]}", __name__)


def available():
    return [w for w in ORDER if w in MODULES]
