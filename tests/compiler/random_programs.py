"""Random programs over what issue 18 found broken: variable assignments read again, Python
``if``/``while`` on tensors (with ``break``), ``tf.cond``, ``tf.while_loop``, a custom
gradient, a Keras ``Dense`` layer, ``stop_gradient``; driven by tapes using
``stop_recording`` and ``reset``.

A program is Python source (a module written to a file and imported, so ``function``
converts its ``if`` and ``while`` statements as it does the user's). ``run`` executes one
variant: ``eager``; ``through`` (the program is a ``function`` under an eager tape);
``inside`` (the tape code is a ``function`` calling the program, itself a ``function``);
at second order also ``mixed`` (the inner tape and first gradient in a function, the outer
tape eager).
Variables are reset before each run, so one module's functions, and their compiled
programs, serve many runs ("compile sharing").
"""
import importlib.util
import itertools
import random

import numpy as np

UNARY = {
    "sin": "tf.sin({0})", "tanh": "tf.tanh({0})", "square": "({0} * {0})",
    "softplus": "tf.nn.softplus({0})", "exp": "tf.exp(tf.clip_by_value({0}, -2.0, 2.0))",
    "affine": "({0} * 0.75 + 0.25)",
}
BINARY = {"add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
          "max": "tf.maximum({0}, {1})"}
KINDS = ["unary", "binary", "read", "assign", "pyif", "cond", "pywhile", "while_tensor",
         "while_loop", "custom", "dense", "stop"]

HEADER = '''import {library} as tf

v = tf.Variable(tf.zeros([3], tf.{dtype}))
layer = tf.keras.layers.Dense(3, activation="tanh", dtype="{dtype}")
layer(tf.zeros([1, 3], tf.{dtype}))


@tf.custom_gradient
def cg(a):
    return tf.sin(a) * 0.5, lambda dy: dy * tf.cos(a) * 0.5


def program(x, k):
'''


def _pick(integers, options):
    """One of ``options``, about uniformly (hypothesis favours small integers and the first
    of ``sampled_from``, which left assigns and loops rare in a short run)."""
    return options[integers(0, 2**20) % len(options)]


def program_for_seed(seed, max_steps=10):
    """The program numbered ``seed``, the same on every machine and under either library:
    ``tf_answers.json.gz`` holds TensorFlow's results for these."""
    rng = random.Random(seed)
    return generate(rng.randint, max_steps)


def generate(integers, max_steps):
    """(source lines of the body, whether d y / d x is the plain derivative (no assign of an
    x-dependent value is read again, no stop_gradient on an x path), driver flags).
    ``integers(lo, hi)`` draws an integer in [lo, hi]."""
    lines = ["t0 = x"]
    dep = [True]                # value depends on x
    v_dep, exact = False, True  # v holds a value depending on x; finite differences apply
    n = integers(1, max_steps)
    for j in range(1, n + 1):
        kind = _pick(integers, KINDS)
        a = integers(0, j - 1)
        b = integers(0, j - 1)
        u1, u2 = _pick(integers, sorted(UNARY)), _pick(integers, sorted(UNARY))
        t, ta, tb = f"t{j}", f"t{a}", f"t{b}"
        d = dep[a]
        if kind == "unary":
            lines.append(f"{t} = {UNARY[u1].format(ta)}")
        elif kind == "binary":
            lines.append(f"{t} = {BINARY[_pick(integers, sorted(BINARY))].format(ta, tb)}")
            d = dep[a] or dep[b]
        elif kind == "read":
            lines.append(f"{t} = {ta} * v")
            d = dep[a] or v_dep
            exact = exact and not v_dep
        elif kind == "assign":
            how = _pick(integers, ["assign", "assign_add", "assign_sub"])
            lines.append(f"v.{how}({ta} * 0.25)")
            lines.append(f"{t} = v * 1.0")
            v_dep = dep[a] or (v_dep and how != "assign")
            d = v_dep
            exact = exact and not v_dep
        elif kind == "pyif":
            lines += [f"if tf.reduce_sum({ta}) > 0.1:", f"    {t} = {UNARY[u1].format(ta)}",
                      "else:", f"    {t} = {UNARY[u2].format(tb)}"]
            d = dep[a] or dep[b]
        elif kind == "cond":
            lines.append(f"{t} = tf.cond(tf.reduce_sum({ta}) > 0.1, lambda: {UNARY[u1].format(ta)}, "
                         f"lambda: {UNARY[u2].format(tb)})")
            d = dep[a] or dep[b]
        elif kind == "pywhile":         # a Python counter: unrolled, the break per path
            limit = integers(1, 4)
            lines += [f"{t} = {ta}", "i = 0", f"while i < {limit}:",
                      f"    {t} = {UNARY[u1].format(t)} * 0.9 + 0.1", "    i += 1",
                      f"    if tf.reduce_max({t}) > 0.6:", "        break"]
        elif kind == "while_tensor":    # a tensor counter bound by k: a While node
            lines += [f"{t} = {ta}", "i = tf.constant(0)", "while i < k:",
                      f"    {t} = {UNARY[u1].format(t)} * 0.9 + 0.1", "    i += 1",
                      f"    if tf.reduce_sum({t}) > 1.5:", "        break"]
        elif kind == "while_loop":
            lines.append(f"{t} = tf.while_loop(lambda i, s: i < k, lambda i, s: "
                         f"(i + 1, {UNARY[u1].format('s')} * 0.8), (0, {ta}))[1]")
        elif kind == "custom":
            lines.append(f"{t} = cg({ta})")
        elif kind == "dense":
            lines.append(f"{t} = tf.reshape(layer(tf.reshape({ta}, [1, 3])), [3])")
        else:
            lines.append(f"{t} = {ta} + tf.stop_gradient({tb})")
            exact = exact and not dep[b]
        dep.append(d)
    last = f"t{n}"
    other = f"t{integers(0, n)}"
    lines.append(f"return tf.reduce_sum({last}) + 0.5 * tf.reduce_sum({other} * {other})")
    flags = {"reset": bool(integers(0, 1)), "stop": bool(integers(0, 1)),
             "order": _pick(integers, [1, 2]), "k": integers(0, 3), "seed": integers(0, 2**16)}
    return lines, exact, flags


_counter = itertools.count()


def load(lines, flags, dtype, directory, library="tapeflow"):
    """The program's module, written to ``directory`` and imported; ``library`` is what it
    imports as ``tf`` (``tensorflow`` for ``tf_answers_gen.py``)."""
    src = HEADER.format(dtype=dtype, library=library) + "".join("    " + ln + "\n" for ln in lines)
    path = directory / f"random_program_{next(_counter)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.source, mod.flags = src, flags
    tf = mod.tf
    mod.through = tf.function(mod.program)
    mod.inside = tf.function(lambda x, k: tape_code(mod.through, mod, x, k, mod.flags))
    mod.mixed = tf.function(lambda x, k: first_order(mod.through, mod, x, k, mod.flags))
    return mod


def reset(mod, dtype, seed):
    rng = np.random.default_rng(seed)
    mod.v.assign(rng.uniform(-0.8, 0.8, 3).astype(dtype))
    mod.layer.kernel.assign(rng.uniform(-0.8, 0.8, (3, 3)).astype(dtype))
    mod.layer.bias.assign(rng.uniform(-0.3, 0.3, 3).astype(dtype))


def tape_code(fn, mod, x, k, flags):
    """y and its gradients w.r.t. x, v and the layer's variables (the code under test's
    tape); at second order also the gradient of the sum of d y / d x w.r.t. x."""
    if flags["order"] == 1:
        return first_order(fn, mod, x, k, flags)
    tf = mod.tf
    first = mod.mixed if flags.get("mixed") else (lambda x, k: first_order(fn, mod, x, k, flags))
    with tf.GradientTape() as outer:
        outer.watch(x)
        out = first(x, k)
        s = tf.reduce_sum(out[1]) if out[1] is not None else None
    return list(out) + [None if s is None else outer.gradient(s, x)]


def first_order(fn, mod, x, k, flags):
    tf = mod.tf
    with tf.GradientTape() as tape:
        tape.watch(x)
        if flags["reset"]:
            junk = tf.reduce_sum(tf.exp(x))
            tape.reset()
            tape.watch(x)
        y = fn(x, k)
        if flags["stop"]:
            with tape.stop_recording():
                z = tf.reduce_sum(x * x)         # not recorded: a constant to the tape
            y = y + z
    grads = tape.gradient(y, [x, mod.v, mod.layer.kernel, mod.layer.bias])
    return [y] + grads


def run(mod, variant, x, k, dtype):
    reset(mod, dtype, mod.flags["seed"])
    tf = mod.tf
    x, k = tf.constant(x), tf.constant(k)
    if variant == "eager":
        out = tape_code(mod.program, mod, x, k, mod.flags)
    elif variant == "through":
        out = tape_code(mod.through, mod, x, k, mod.flags)
    elif variant == "mixed":        # second order: the inner tape in a function, the outer eager
        out = tape_code(mod.through, mod, x, k, dict(mod.flags, mixed=True))
    else:
        out = mod.inside(x, k)
    state = [mod.v.numpy(), mod.layer.kernel.numpy(), mod.layer.bias.numpy()]
    return [None if o is None else np.asarray(o.numpy()) for o in out], state


def inputs(seed, dtype, n):
    """``n`` inputs x for a program whose flags hold ``seed``."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.2, 1.2, 3).astype(dtype) for _ in range(n)]


def seed_dtype(seed):
    """The dtype of the program numbered ``seed``."""
    return "float64" if seed % 2 else "float32"


def variants(flags):
    return ("eager", "through", "inside") + (("mixed",) if flags["order"] == 2 else ())


def value(mod, x, k, dtype):
    """The program's output eagerly, for finite differences."""
    reset(mod, dtype, mod.flags["seed"])
    return float(mod.program(mod.tf.constant(x), mod.tf.constant(k)).numpy())
