"""W8's scaling in T for the TensorArray form, with the tf.gather form as the reference.

``python -m benchmarks.w8_scaling_ta [--samples N] [--sizes 100,200,400,800] [--only ta|gather]
[--order rotating|blocks]`` compiles ``tf.function(w8.tf_code_tensor_array(tf),
jit_compile=True)`` and the gather form (``w8.tf_code``) once each, checks both against hand
NumPy BPTT at every T, then times gradient steps: ``rotating`` (the default) takes every form
at every T in one round, the order rotating; ``blocks`` takes each cell's samples one after
another (as ``w8.scaling`` does: a step then follows a step of its own size), cells in
rounds of 10 so that both orders see the same machine state. The ratios come from one run:
T=800 / T=200 per form (the target is <= 5, linear in T) and TensorArray / gather at each T.
Median and min per cell.
"""
import argparse
import time

import numpy as np

from .workloads import w8

FORMS = {"ta": w8.tf_code_tensor_array, "gather": w8.tf_code}


def _compiled(tf, form, args):
    fn = tf.function(FORMS[form](tf), jit_compile=True)
    fn(*args)
    return lambda: fn(*args)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--sizes", default="100,200,400,800")
    ap.add_argument("--only", choices=sorted(FORMS))
    ap.add_argument("--order", choices=("rotating", "blocks"), default="rotating")
    opts = ap.parse_args(argv)
    import tapeflow as tf
    sizes = [int(t) for t in opts.sizes.split(",")]
    forms = [opts.only] if opts.only else list(FORMS)
    base = w8.params(False)
    steps = {}
    for T in sizes:
        inp = w8.inputs(dict(base, T=T))
        want = w8.numpy_grads(inp)
        args = w8.tf_args(tf, inp)
        for form in forms:
            step = steps[form, T] = _compiled(tf, form, args)
            for g, r in zip(step(), want, strict=True):
                np.testing.assert_allclose(np.asarray(g), r, rtol=2e-3, atol=2e-4)
            step()
    times = {key: [] for key in steps}
    keys = list(steps)
    run = 1 if opts.order == "rotating" else 10
    for s in range(0, opts.samples, run):
        r = s // run
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            for _ in range(run):
                t0 = time.perf_counter()
                steps[key]()
                times[key].append(time.perf_counter() - t0)
    med = {k: 1e3 * float(np.median(v)) for k, v in times.items()}
    low = {k: 1e3 * float(np.min(v)) for k, v in times.items()}
    for form in forms:
        cells = "  ".join(f"T={T}: {med[form, T]:7.2f} ({low[form, T]:6.2f})" for T in sizes)
        print(f"{form:7s} median (min) ms  {cells}")
    if 200 in sizes and 800 in sizes:
        for form in forms:
            print(f"{form:7s} T=800 / T=200: median {med[form, 800] / med[form, 200]:.2f}, "
                  f"min {low[form, 800] / low[form, 200]:.2f} (target <= 5)")
    if len(forms) == 2:
        for T in sizes:
            print(f"T={T}: ta / gather: median {med['ta', T] / med['gather', T]:.2f}, "
                  f"min {low['ta', T] / low['gather', T]:.2f}")


if __name__ == "__main__":
    main()
