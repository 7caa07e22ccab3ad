"""Run in a fresh process by test_fresh_process.py: load what that test saved and report as JSON.

Usage: python fresh_checks.py BASE_DIR. Reads BASE/plan.json; prints one JSON line:
  roundtrip: {program name: programs.run_program on the loaded module}
  lookup:    the error a custom gradient saved without its graph gives under a tape
  compiled:  output, program kind and Numba cache statistics of a program compiled before
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tapeflow as tf  # noqa: E402
from programs import run_program  # noqa: E402


def main(base):
    plan = json.load(open(os.path.join(base, "plan.json")))
    report = {"roundtrip": {}}
    tf.set_backend("numpy")
    for name in plan["roundtrip"]:
        report["roundtrip"][name] = run_program(tf.saved_model.load(os.path.join(base, name)), name)

    loaded = tf.saved_model.load(os.path.join(base, plan["no_custom_gradients"]))
    v = tf.Variable(2.0)
    try:
        with tf.GradientTape() as t:
            out = loaded.f(v * v)
        report["lookup"] = {"error": None, "gradient": float(t.gradient(out, v))}
    except LookupError as e:
        report["lookup"] = {"error": f"{type(e).__name__}: {e}"}
    report["lookup"]["forward"] = float(loaded.f(tf.constant(3.0)))  # the forward still runs

    tf.set_backend("numba")
    loaded = tf.saved_model.load(os.path.join(base, plan["compiled"]["dir"]))
    x = tf.constant(plan["compiled"]["x"], dtype=tf.float32)
    out = loaded.f(x)
    program = loaded.f.get_concrete_function(x).program
    stats = program.stats() if hasattr(program, "stats") else {}
    with tf.GradientTape() as t:
        t.watch(x)
        y = loaded.f(x)
    report["compiled"] = {"out": out.numpy().tolist(), "kind": type(program).__name__,
                          "fallback": getattr(program, "fallback", "not a Program"),
                          "grad": t.gradient(y, x).numpy().tolist(), **stats}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
