"""The environment variables tapeflow reads, in one table, each value checked where it is read.

An unknown value is an error naming the variable, the value and what it accepts: a typo in
``TAPEFLOW_BACKEND`` must not silently run another engine.
"""
import os
from typing import Callable, NamedTuple

import platformdirs


class Setting(NamedTuple):
    default: str
    accepts: str                          # for the error message and the README's table
    parse: Callable[[str], object]        # raises ValueError on a bad value
    meaning: str


def _choice(*options):
    def parse(text):
        if text not in options:
            raise ValueError
        return text
    return parse


def _flag(text):
    if text not in ("0", "1"):
        raise ValueError
    return text == "1"


def _count(text):
    value = int(text)
    if value < 0:
        raise ValueError
    return value


def _megabytes(text):
    value = float(text)
    if not value > 0:
        raise ValueError
    return value


def _megabytes_or_off(text):
    value = float(text)
    if not value >= 0:
        raise ValueError
    return value or None


USER_CACHE = "<user cache dir>/tapeflow"


def _path(text):
    if not text:
        raise ValueError
    if text == USER_CACHE:    # the default: platformdirs' (XDG_CACHE_HOME on Linux)
        return os.path.join(platformdirs.user_cache_dir(), "tapeflow")
    return os.path.expanduser(text)


SETTINGS = {
    "TAPEFLOW_BACKEND": Setting(
        "numba", "numba or numpy", _choice("numba", "numpy"),
        "what runs traced graphs: Numba-compiled programs or the NumPy interpreter"),
    "TAPEFLOW_CACHE_DIR": Setting(
        USER_CACHE, "a directory", _path,
        "where compiled programs are cached on disk (private to the user: 0700; one writable by "
        "others or not owned by the user is refused with a warning)"),
    "TAPEFLOW_CACHE_MAX_MB": Setting(
        "1024", "a number of MiB > 0", _megabytes,
        "size of the compile cache; past it the least recently used programs are deleted"),
    "TAPEFLOW_COMPILE_TAPE_AFTER": Setting(
        "3", "a whole number >= 0", _count,
        "compile an eager tape's jacobian/gradient from this many calls on one structure (0: never)"),
    "TAPEFLOW_TIERED": Setting(
        "1", "1 or 0", _flag,
        "1: a function's first calls run on the interpreter while Numba compiles in the "
        "background; 0: calls wait for the compiled program (the tests use 0)"),
    "TAPEFLOW_LOG_COMPILES": Setting(
        "0", "1 or 0", _flag,
        "1: print one line per trace, compile and tier switch (tapeflow.config.set_log_compiles)"),
    "TAPEFLOW_JACOBIAN_MODE": Setting(
        "auto", "auto, forward or reverse", _choice("auto", "forward", "reverse"),
        "jacobian mode: the one needing fewer seeds (auto), or forced where it is exact"),
    "TAPEFLOW_LOAD_BUDGET_MB": Setting(
        "1024", "a number of MiB > 0", _megabytes,
        "memory one tf.saved_model.load may take (arrays, graphs, parsed JSON), checked before allocating"),
    "TAPEFLOW_LOOP_MEMORY_MB": Setting(
        "1024", "a number of MiB > 0", _megabytes,
        "memory one loop's gradient may stack (its per-iteration values); past it the loop "
        "checkpoints every k-th state and recomputes segments (tapeflow.config.loop_memory)"),
    "TAPEFLOW_MEMORY_MB": Setting(
        "0", "a number of MiB >= 0 (0: no budget)", _megabytes_or_off,
        "residuals a function called under a tape may keep for its backward; past it the "
        "backward recomputes activations (convolutions, matmuls, pools) instead"),
    "TAPEFLOW_JACOBIAN_BUDGET_MB": Setting(
        "256", "a number of MiB > 0", _megabytes,
        "memory one chunk of a vectorized jacobian's seeds may take"),
}


def get(name):
    """The parsed value of setting ``name`` from the environment (or its default)."""
    setting = SETTINGS[name]
    text = os.environ.get(name)
    if text is None:
        return setting.parse(setting.default)
    try:
        return setting.parse(text.strip())
    except ValueError:
        raise ValueError(f"{name}={text!r} is not valid: expected {setting.accepts} "
                         f"(default {setting.default})") from None
