"""Accuracy of the fast float32 functions (codegen/fastmath.py) against NumPy in float64.

Each function runs the way generated programs run it: inlined into a jitted loop compiled
with the programs' ``reassoc`` fast-math flag. Errors are in ulps of the float32 result.
"""
import numpy as np
import pytest
from numba import njit
from scipy import special

from tapeflow.codegen import fastmath as fm
from tapeflow.runtime.registry import KERNELS
import tapeflow  # noqa: F401

R = np.random.default_rng(0)


def _loop(fn):
    @njit(error_model="numpy", fastmath={"reassoc"})
    def run(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = fn(x[i])
        return out
    return run


def _binades(lo, hi, n, sign=1.0):
    return (sign * 2.0 ** R.uniform(lo, hi, n)).astype(np.float32)


def _ulps(got, ref):
    """Error of float32 ``got`` against float64 ``ref``, in ulps of the float32 result."""
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    ulp = np.spacing(np.abs(ref32)).astype(np.float64)
    ulp[ulp == 0] = 2.0 ** -149
    ok = np.isfinite(ref) & np.isfinite(ref32)
    return float(np.max(np.abs(got[ok].astype(np.float64) - ref[ok]) / ulp[ok]))


CASES = {
    # name: (fast function, float64 reference, inputs, ulp bound)
    "exp": (fm.exp_f32, np.exp, lambda: np.concatenate([
        R.uniform(-104, 89, 1_000_000), _binades(-30, 6.5, 200_000, -1), _binades(-30, 6.4, 200_000)]), 1.0),
    "log": (fm.log_f32, np.log, lambda: np.concatenate([
        _binades(-149, 128, 1_000_000), R.uniform(0.5, 2.0, 300_000)]), 1.0),
    "log1p": (fm.log1p_f32, np.log1p, lambda: np.concatenate([
        R.uniform(-1, 1, 600_000), _binades(-60, 127, 300_000), _binades(-60, -1e-4, 300_000, -1)]), 2.0),
    "tanh": (fm.tanh_f32, np.tanh, lambda: np.concatenate([
        R.uniform(-12, 12, 1_000_000), _binades(-60, 3, 200_000), _binades(-60, 3, 200_000, -1)]), 2.5),
    "sigmoid": (fm.sigmoid_f32, special.expit, lambda: np.concatenate([
        R.uniform(-110, 110, 1_000_000), _binades(-60, 3, 200_000), _binades(-60, 3, 200_000, -1)]), 3.0),
}
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 1.0, -1.0,
                    88.72, 88.73, -87.3, -103.9, -200.0, 200.0, 1e38, -1e38], np.float32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_accuracy(name):
    fast, ref, inputs, bound = CASES[name]
    x = inputs().astype(np.float32)
    with np.errstate(all="ignore"):
        err = _ulps(_loop(fast)(x), ref(x.astype(np.float64)))
    assert err <= bound, f"{name}: {err:.3f} ulp"


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_values(name):
    fast, ref, _, _ = CASES[name]
    with np.errstate(all="ignore"):
        want = ref(SPECIAL.astype(np.float64)).astype(np.float32)
    got = _loop(fast)(SPECIAL)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    assert np.all(np.abs(got[finite] - want[finite]) <= 3 * np.spacing(np.abs(want[finite])))
    zeros = want == 0
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])) or name in ("exp", "sigmoid")


def test_softplus_matches_the_float32_kernel():
    x = np.concatenate([R.uniform(-110, 110, 1_000_000), R.uniform(-20, 20, 1_000_000), SPECIAL])
    x = x.astype(np.float32)
    with np.errstate(all="ignore"):
        want = KERNELS["Softplus"](x)
    got = _loop(fm.softplus_f32)(x)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert _ulps(got, want.astype(np.float64)) <= 3.0


def test_float64_helpers_are_exact_libm():
    x = np.concatenate([R.uniform(-50, 50, 10_000), SPECIAL.astype(np.float64)])
    with np.errstate(all="ignore"):
        sig = special.expit(x)
        sp = KERNELS["Softplus"](x)
    assert np.allclose(_loop(fm.sigmoid_f64)(x), sig, rtol=4e-16, atol=0, equal_nan=True)
    assert np.allclose(_loop(fm.softplus_f64)(x), sp, rtol=4e-16, atol=0, equal_nan=True)


def test_log1p_unit_on_its_range():
    """softplus's log1p(exp(-|x|)): x in [0, 1] or nan, the same bound as log1p."""
    x = np.concatenate([R.uniform(0, 1, 600_000), _binades(-60, 0, 300_000),
                        [0.0, 1.0, 2.0 ** -24, 2.0 ** -25, np.nan]]).astype(np.float32)
    got = _loop(fm.log1p_unit_f32)(x)
    with np.errstate(all="ignore"):
        assert _ulps(got, np.log1p(x.astype(np.float64))) <= 2.0
    assert np.isnan(got[-1]) and got[-5] == 0 and not np.signbit(got[-5])
