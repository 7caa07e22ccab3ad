"""Cache-corruption fuzz, one batch per process: flip, truncate, delete or edit every kind of
cache file (the generated source, Numba's index and data pickles, the hash list), then compile
and run the program again. Every mutant must give the pristine result, bit for bit, either
loaded or recompiled; a signal kills this process, which the test sees.

usage: cache_fuzz.py CACHE_DIR SEED COUNT -> one JSON line of counts (progress on stderr)
"""
import collections
import json
import os
import random
import re
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tapeflow.codegen import cache, compile_graph  # noqa: E402
from tapeflow.codegen import generate as gen_module  # noqa: E402
from tapeflow.ir import dtypes as D  # noqa: E402
from tapeflow.ir.graph import Graph, Value  # noqa: E402
from tapeflow.ir.opdef import AVal  # noqa: E402

from codegen.samples import add_node  # noqa: E402

KINDS = ("source", "index", "data", "hashes")
MUTATIONS = ("flip", "flip_many", "truncate", "empty", "delete", "append", "literal", "swap")


def program():
    """Two parts (two index and two data files), an inlined literal, a fused loop and a matmul."""
    g = Graph()
    x, w = Value(AVal((4, 5), D.float32)), Value(AVal((5, 3), D.float32))
    g.inputs = [x, w]
    t = add_node(g, "Tanh", [add_node(g, "Mul", [x, g.const(np.float32(0.5))])])
    g.outputs = [add_node(g, "Sum", [t], axis=None, keepdims=False), add_node(g, "MatMul", [t, w])]
    return g


ARGS = (np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5),
        np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))


def entry_files(path):
    files = {"source": [path], "hashes": [path[:-3] + cache.HASHES]}
    compiled = sorted(cache._compiled_files(path).values())
    files["index"] = [p for p in compiled if p.endswith(".nbi")]
    files["data"] = [p for p in compiled if p.endswith(".nbc")]
    return files


def snapshot(path):
    out = {}
    for paths in entry_files(path).values():
        for p in paths:
            with open(p, "rb") as f:
                out[p] = (f.read(), os.stat(p).st_mtime_ns)
    return out


def restore(path, pristine):
    for paths in entry_files(path).values():
        for p in paths:
            if p not in pristine:
                os.unlink(p)
    for p, (data, mtime) in pristine.items():
        with open(p, "wb") as f:
            f.write(data)
        os.utime(p, ns=(mtime, mtime))    # Numba's index checks the source's stamp


def mutate(rng, path, kind, how, pristine):
    p = rng.choice(entry_files(path)[kind])
    data = bytearray(pristine[p][0])
    if how == "delete":
        os.unlink(p)
        return
    if how in ("flip", "flip_many") and data:
        for _ in range(1 if how == "flip" else rng.randint(2, 30)):
            k = rng.randrange(len(data))
            data[k] ^= rng.randint(1, 255)
    elif how == "truncate":
        data = data[:rng.randrange(max(1, len(data)))]
    elif how == "empty":
        data = bytearray()
    elif how == "append":
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    elif how == "literal":       # a valid edit: another digit in a number of the code
        text = data.decode("utf-8", "replace")
        spots = [m.start() for m in re.finditer(r"(?<![\w.])\d", text)]
        spots = [s for s in spots if "#" not in text[text.rfind("\n", 0, s) + 1:s]]
        if spots:
            s = rng.choice(spots)
            text = text[:s] + str((int(text[s]) + rng.randint(1, 9)) % 10) + text[s + 1:]
        data = bytearray(text.encode())
    elif how == "swap":          # another file of the entry in its place
        others = [q for q in pristine if q != p]
        data = bytearray(pristine[rng.choice(others)][0])
    with open(p, "wb") as f:
        f.write(data)


def main(folder, seed, count):
    gen_module.MAX_LINES = 5              # two parts: two index files, two data files
    g = program()
    prog = compile_graph(g, "fuzzed", cache_dir=folder)
    path = prog.cache_path
    want = [np.asarray(r).copy() for r in prog(*ARGS)]
    key = os.path.basename(path)[:-3].rsplit("_", 1)[1]
    pristine = snapshot(path)
    assert len(entry_files(path)["data"]) >= 2, entry_files(path)
    rng = random.Random(seed)
    counts = collections.Counter()
    for i in range(count):
        kind, how = rng.choice(KINDS), rng.choice(MUTATIONS)
        restore(path, pristine)
        mutate(rng, path, kind, how, pristine)
        print(i, kind, how, file=sys.stderr, flush=True)
        cache.forget_module(key)
        cache._warned.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                p = compile_graph(g, "fuzzed", cache_dir=folder)
                got = p(*ARGS)
            except Exception as e:  # noqa: BLE001 - counted, and the test fails on it
                counts[f"error {type(e).__name__}: {str(e)[:120]}"] += 1
                continue
        ok = all(np.array_equal(np.asarray(a), b) for a, b in zip(got, want, strict=True))
        warned = sum(issubclass(w.category, cache.CacheWarning) for w in caught)
        recompiled = p.stats()["cache_misses"] > 0
        counts["correct" if ok else "WRONG"] += 1
        counts["recompiled" if recompiled else "loaded"] += 1
        counts[f"warnings={min(warned, 2)}"] += 1
    print(json.dumps(dict(counts)))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
