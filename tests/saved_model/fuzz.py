"""Mutations of real saved programs, and the harness that loads and runs each mutant.

Every case must either load and run (forward and a gradient under a tape) or raise
``SavedModelError``; anything else is a failure. ``run_cases`` counts the outcomes.
Mutation kinds: JSON field edits (values, deleted and added keys, list edits), raw
byte truncation and bit flips (JSON and .npy), path tricks, symbolic links, FIFOs and
directories in place of files, pickled object arrays, deep nesting (JSON brackets and
nested gradient graphs), huge shapes and sizes, wrong versions, and the size bombs of
issue 14: counts that size an allocation (Unpack ``num``, While ``n_vars``, list lengths),
padding object-path indices, many variables sharing one array file, wide nested If graphs,
attribute arity lies. Each load runs with its address space capped (``RLIMIT_AS``, 1 GiB over
what the process holds), so a bomb fails the test with a MemoryError instead of taking the
machine.
"""
import json
import os
import pickle
import resource
import shutil
import signal
import stat

import numpy as np

import tapeflow as tf
from tapeflow import _nest
from tapeflow.errors import InvalidArgumentError
from tapeflow.saved_model import SavedModelError
from tapeflow.saved_model.loaded import LoadedFunction, LoadedModule

VALUES = [None, True, False, 0, 1, -1, 2, 3, 7, 1 << 31, 1 << 62, 10 ** 30, -(1 << 40), 0.5, -2.5,
          float("nan"), float("inf"), "", "x", "float32", "int32", "float64", "bool", "object", "Sin",
          "Identity", "MatMul", "CustomGradient", "Const", "Sum", "Reshape", "leaf",
          "../saved_program.json", "/etc/passwd", "variables/0.npy", "graphs/0.json",
          "constants/0.npy", "__class__", "__call__", [], [0], [1, 2], [None], [1 << 40, 1 << 40],
          [[0, 1]], {}, {"a": 1}, {"tuple": [1, 2]}, {"list": []}, {"dtype": "float32"},
          {"ellipsis": True}, {"graph": {}}, {"registered_gradient": "x"}, {"out": 0},
          {"arg": 0}, {"variable": 0}, {"constant": 0}, {"python": 1}, {"attr": "w"}]
PATHS = ["../x.npy", "/etc/passwd", "variables/../../x", "./variables/0.npy", "variables//0.npy",
         "variables/0.npy/", "variables", "graphs", ".", "..", "~/x", "variables/0.npy\u0000",
         " variables/0.npy", "a\\b", "C:/x", "saved_program.json", "variables/0.npy" * 100]


# same-signature swaps: mutants that stay valid programs, so running them is exercised too
UNARY = ["Neg", "Square", "Abs", "Sign", "Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Log1p",
         "Expm1", "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "Floor", "Round", "Erf", "Relu", "Relu6",
         "Elu", "Selu", "Softplus", "Softsign", "Identity", "StopGradient"]
BINARY = ["Add", "Sub", "Mul", "FloorDiv", "FloorMod", "Pow", "Maximum", "Minimum", "RealDiv"]


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


# -- mutations ---------------------------------------------------------------------------

def _files(d):
    """Regular files only (an earlier mutation may have left a FIFO or a link)."""
    out = []
    for root, _, names in os.walk(d):
        out += [os.path.join(root, n) for n in names
                if stat.S_ISREG(os.lstat(os.path.join(root, n)).st_mode)]
    return sorted(out)


def _json(f):
    try:
        return json.load(open(f))
    except (ValueError, RecursionError):
        return None


def _slots(obj, path=()):
    """Every (container path) inside a JSON value: dicts and lists, depth first."""
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _slots(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _slots(v, path + (i,))


def _get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


def _edit_json(rng, data):
    """One random edit somewhere in a JSON value (in place; may replace the root)."""
    slots = list(_slots(data))
    path, target = slots[rng.integers(len(slots))]
    kind = rng.integers(6)
    if not path or kind == 0:  # replace this value
        if not path:
            return VALUES[rng.integers(len(VALUES))]
        parent = _get(data, path[:-1])
        parent[path[-1]] = json.loads(json.dumps(VALUES[rng.integers(len(VALUES))]))
    elif kind == 1 and isinstance(target, dict) and target:
        del target[list(target)[rng.integers(len(target))]]
    elif kind == 2 and isinstance(target, dict):
        target[["extra", "id", "op", "shape", "attrs", "file"][rng.integers(6)]] = VALUES[rng.integers(len(VALUES))]
    elif kind == 3 and isinstance(target, list) and target:
        i = rng.integers(len(target))
        if rng.integers(2):
            target.insert(i, json.loads(json.dumps(target[i])))
        else:
            del target[i]
    elif kind == 4 and isinstance(target, list) and len(target) > 1:
        i, j = rng.choice(len(target), 2, replace=False)
        target[i], target[j] = target[j], target[i]
    elif isinstance(target, (int, float)) and not isinstance(target, bool):
        parent = _get(data, path[:-1])
        parent[path[-1]] = [target + 1, target - 1, -target, target * 1000, 0][rng.integers(5)]
    else:
        parent = _get(data, path[:-1])
        parent[path[-1]] = json.loads(json.dumps(VALUES[rng.integers(len(VALUES))]))
    return data


def mutate(rng, d):
    """Apply one random mutation to the saved program in directory ``d``; returns its name."""
    files = _files(d)
    jsons = [f for f in files if f.endswith(".json") and _json(f) is not None]
    if not files:
        return "nothing left"
    npys = [f for f in files if f.endswith(".npy")]
    kind = ["json", "json", "json", "json", "truncate", "bitflip", "bitflip_npy", "path", "symlink",
            "special", "pickle", "nesting", "huge", "version", "swap_op", "swap_op", "npy_data",
            "npy_data", "count_bomb", "padding", "shared_array", "wide_if", "arity"][rng.integers(23)]
    manifest = os.path.join(d, "saved_program.json")
    if kind in ("json", "nesting", "huge", "swap_op", "count_bomb", "wide_if", "arity") and not jsons or \
            kind in ("path", "version", "padding", "shared_array") and manifest not in jsons:
        kind = "bitflip"
    if kind == "json":
        f = jsons[rng.integers(len(jsons))]
        data = json.load(open(f))
        for _ in range(1 + rng.integers(3)):
            data = _edit_json(rng, data)
        json.dump(data, open(f, "w"))
    elif kind == "swap_op":
        f = jsons[rng.integers(len(jsons))]
        data = json.load(open(f))
        nodes = [v for _, v in _slots(data) if isinstance(v, dict) and v.get("op") in UNARY + BINARY]
        if nodes:
            node = nodes[rng.integers(len(nodes))]
            pool = UNARY if node["op"] in UNARY else BINARY
            node["op"] = pool[rng.integers(len(pool))]
        json.dump(data, open(f, "w"))
    elif kind == "npy_data":
        pool = npys or files
        f = pool[rng.integers(len(pool))]
        raw = bytearray(open(f, "rb").read())
        start = raw.find(b"\n") + 1 if f.endswith(".npy") else 0
        for _ in range(1 + rng.integers(4)):
            if len(raw) > start:
                i = start + rng.integers(len(raw) - start)
                raw[i] ^= 1 << rng.integers(8)
        open(f, "wb").write(bytes(raw))
    elif kind == "truncate":
        f = files[rng.integers(len(files))]
        raw = open(f, "rb").read()
        open(f, "wb").write(raw[:rng.integers(len(raw) + 1)])
    elif kind in ("bitflip", "bitflip_npy"):
        pool = npys if kind == "bitflip_npy" and npys else files
        f = pool[rng.integers(len(pool))]
        raw = bytearray(open(f, "rb").read())
        for _ in range(1 + rng.integers(4)):
            if raw:
                i = rng.integers(len(raw))
                raw[i] ^= 1 << rng.integers(8)
        open(f, "wb").write(bytes(raw))
    elif kind == "path":
        f = manifest
        m = json.load(open(f))
        refs = [(p, v) for p, v in _slots(m) if p and p[-1] in ("file", "graph")]
        if refs:
            p, _ = refs[rng.integers(len(refs))]
            _get(m, p[:-1])[p[-1]] = PATHS[rng.integers(len(PATHS))]
        json.dump(m, open(f, "w"))
    elif kind == "symlink":
        f = files[rng.integers(len(files))]
        outside = os.path.join(os.path.dirname(d), "outside_" + os.path.basename(f))
        shutil.copy(f, outside)
        os.remove(f)
        os.symlink(outside if rng.integers(2) else os.path.basename(outside), f)
    elif kind == "special":
        f = files[rng.integers(len(files))]
        os.remove(f)
        if rng.integers(2):
            os.mkfifo(f)
        else:
            os.mkdir(f)
    elif kind == "pickle":
        if npys:
            f = npys[rng.integers(len(npys))]
            try:
                shape = np.load(f, allow_pickle=False).shape
            except Exception:  # noqa: BLE001 (already broken by an earlier mutation)
                shape = (2,)
            obj = np.empty(shape, dtype=object)
            for i in range(obj.size):
                obj.flat[i] = [1, 2]
            if rng.integers(2):
                np.save(f, obj, allow_pickle=True)
            else:
                open(f, "wb").write(pickle.dumps(obj))
    elif kind == "nesting":
        f = jsons[rng.integers(len(jsons))]
        depth = int(rng.choice([300, 5000, 200_000]))
        if rng.integers(2):
            open(f, "w").write("[" * depth + "]" * depth)
        else:
            data = json.load(open(f))
            slots = [p for p, v in _slots(data) if p]
            p = slots[rng.integers(len(slots))]
            v = json.loads("[" * depth + "0" + "]" * depth) if depth < 900 else [0]
            _get(data, p[:-1])[p[-1]] = v
            json.dump(data, open(f, "w"))
    elif kind == "huge":
        f = jsons[rng.integers(len(jsons))]
        data = json.load(open(f))
        shapes = [p for p, v in _slots(data) if p and p[-1] == "shape"]
        if shapes:
            p = shapes[rng.integers(len(shapes))]
            _get(data, p[:-1])["shape"] = [[1 << 40, 1 << 40], [10 ** 12], [1 << 30, 8], [-1],
                                           [1 << 62, 0], [2] * 40][rng.integers(6)]
        json.dump(data, open(f, "w"))
    elif kind in ("count_bomb", "arity"):
        f = jsons[rng.integers(len(jsons))]
        data = json.load(open(f))
        nodes = [v for _, v in _slots(data) if isinstance(v, dict) and "op" in v and "attrs" in v]
        ints = [(n, k) for n in nodes for k, a in n["attrs"].items() if type(a) is int and k != "axis"]
        if ints:
            node, k = ints[rng.integers(len(ints))]
            if kind == "count_bomb":
                node["attrs"][k] = int(rng.choice([1 << 40, 3 * 10 ** 7, 10 ** 6]))
            else:               # a lie by a little: one more or one less than the truth
                node["attrs"][k] += int(rng.choice([-1, 1, 2]))
        elif nodes:             # an op taking a count: Unpack of a [None] value into 2**40
            node = nodes[rng.integers(len(nodes))]
            node.update(op="Unpack", attrs={"num": 1 << 40, "axis": 0})
        json.dump(data, open(f, "w"))
    elif kind == "padding":
        m = json.load(open(manifest))
        n = int(rng.choice([2, 50, 2000]))
        m["objects"] = list(m.get("objects") or []) + [
            {"path": [{"attr": f"pad{i}"}, {"index": int(rng.choice([99_999, 50_000, 7]))}], "variable": 0}
            for i in range(n)]
        json.dump(m, open(manifest, "w"))
    elif kind == "shared_array":
        m = json.load(open(manifest))
        if m.get("variables"):
            m["variables"] = m["variables"] * int(rng.choice([2, 300, 3000]))
        json.dump(m, open(manifest, "w"))
    elif kind == "wide_if":
        f = jsons[rng.integers(len(jsons))]
        if f == manifest:
            open(f, "w").write("[" + "{}," * int(rng.choice([10, 10 ** 6, 3 * 10 ** 6])) + "{}]")
        else:
            depth = int(rng.choice([3, 12, 16]))
            ins = '[{"shape":[],"dtype":"bool","id":0},{"shape":[null],"dtype":"float32","id":1}]'
            inner = '{"version":1,"inputs":' + ins + ',"nodes":[],"outputs":[1]}'
            for _ in range(depth - 1):
                inner = ('{"version":1,"inputs":' + ins + ',"nodes":[{"op":"If","inputs":[0,0,1],'
                         '"outputs":[{"shape":[null],"dtype":"float32","id":2}],"attrs":{"then_graph":'
                         '{"graph":' + inner + '},"else_graph":{"graph":' + inner + '}}}],"outputs":[2]}')
            node = ('{"op":"If","inputs":[0,0,1],"outputs":[{"shape":[null],"dtype":"float32",'
                    '"id":1073741824}],"attrs":{"then_graph":{"graph":' + inner + '},"else_graph":'
                    '{"graph":' + inner + '}}}')
            text = open(f).read()     # spliced as text: json.dump of 2**16 graphs is slow
            k = text.find('"nodes": [')
            if k >= 0:
                k += len('"nodes": [')
                rest = text[k:].lstrip()
                open(f, "w").write(text[:k] + node + ("" if rest.startswith("]") else ",") + rest)
    elif kind == "version":
        f = manifest
        m = json.load(open(f))
        m[["format_version", "format"][rng.integers(2)]] = VALUES[rng.integers(len(VALUES))]
        json.dump(m, open(f, "w"))
    return kind


# -- running a loaded program --------------------------------------------------------------

def _arg(leaf):
    if leaf.kind == "python":
        return leaf.value
    shape = [2 if d is None else d for d in leaf.shape]
    value = np.full(shape, 0.5 if leaf.dtype.is_floating else 1, leaf.dtype.np)
    return tf.Variable(value) if leaf.kind == "variable" else tf.constant(value)


def _functions(obj):
    if isinstance(obj, LoadedFunction):
        return [obj]
    fns = [v for v in vars(obj).values() if isinstance(v, LoadedFunction)]
    fns += list(obj.signatures.values())
    for sub in obj.submodules:
        if isinstance(sub, LoadedModule):
            fns += [v for v in vars(sub).values() if isinstance(v, LoadedFunction)]
    return fns


def exercise(loaded):
    """Call every saved concrete function of ``loaded`` and differentiate it once."""
    variables = list(loaded.trainable_variables) if isinstance(loaded, LoadedModule) else []
    for fn in _functions(loaded):
        for sc in fn.concretes:
            flat = [_arg(leaf) for leaf in sc.leaves]
            it = iter(flat)  # the leaves of each parameter, in order
            args = [_nest.from_structure(s, it) for s in sc.structure]
            kw = {p.name: a for p, a in zip(fn.params, args) if p.keyword_only}
            pos = [a for p, a in zip(fn.params, args) if not p.keyword_only]
            sources = [x for x in flat if isinstance(x, tf.Tensor) and x.dtype.is_floating]
            out = fn(*pos, **kw)
            try:
                with tf.GradientTape() as tape:
                    tape.watch(sources)
                    out = fn(*pos, **kw)
                    floats = [o for o in _nest.flatten(out)
                              if isinstance(o, tf.Tensor) and o.dtype.is_floating]
                    total = tf.add_n([tf.reduce_sum(o) for o in floats]) if floats else None
                if total is not None:
                    tape.gradient(total, sources + variables)
            except LookupError as e:
                # a custom gradient saved without its graph, unknown to this process: TF's error
                if not str(e).startswith("No gradient defined for operation"):
                    raise


def _mutate_once(rng, d):
    try:
        return mutate(rng, d)
    except Exception as e:  # noqa: BLE001 (an earlier mutation left nothing this one can edit)
        return f"skipped ({type(e).__name__})"


def _vm_size():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize"):
                return int(line.split()[1]) << 10
    return 0


def run_cases(pristine_dirs, n, seed, workdir):
    """Mutate copies of ``pristine_dirs`` ``n`` times; returns the outcome counts and failures."""
    rng = np.random.default_rng(seed)
    counts = {"cases": 0, "saved_model_error": 0, "loaded_and_ran": 0, "ran_into_op_error": 0,
              "other": 0}
    failures = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for case in range(n):
            src = pristine_dirs[case % len(pristine_dirs)]
            d = os.path.join(workdir, f"case{case}", "p")
            shutil.copytree(src, d)
            kinds = [_mutate_once(rng, d) for _ in range(1 + int(rng.integers(2)))]
            counts["cases"] += 1
            signal.alarm(20)
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (_vm_size() + (1 << 30), hard))
            try:
                exercise(tf.saved_model.load(d))
                counts["loaded_and_ran"] += 1
            except SavedModelError:
                counts["saved_model_error"] += 1
            except BaseException as e:  # noqa: BLE001 (anything else is what the fuzz looks for)
                if isinstance(e, KeyboardInterrupt):
                    raise
                if isinstance(e, (IndexError, InvalidArgumentError)) and "is not in [" in str(e):
                    # a valid mutant (e.g. FloorMod swapped for Add before a gather) whose run an
                    # op rejects for its data, as the same program written by hand would be
                    counts["ran_into_op_error"] += 1
                    continue
                counts["other"] += 1
                failures.append((case, kinds, f"{type(e).__name__}: {str(e)[:300]}"))
            finally:
                resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
                signal.alarm(0)
                shutil.rmtree(os.path.join(workdir, f"case{case}"), ignore_errors=True)
    finally:
        signal.signal(signal.SIGALRM, old)
    return counts, failures
