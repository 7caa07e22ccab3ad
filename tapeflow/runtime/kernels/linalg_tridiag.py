"""Tridiagonal solves, written once for NumPy and for Numba (codegen/linalg_rt.py jits them).

TensorFlow's CPU algorithms (tridiagonal_solve_op.cc): Gaussian elimination with partial
pivoting as LAPACK's gtsv, or Thomas' algorithm without. A zero pivot makes the solution
NaN (no error), unless ``perturb_singular`` replaces it by eps times the largest entry.
Only array indexing and arithmetic, so the same function runs under ``numba.njit``.
"""
import numpy as np


def tridiagonal_solve_one(diags, rhs, x, partial_pivoting, perturb_singular, eps):
    """Solves one system: ``diags`` [3, n] (super, main, sub), ``rhs`` and ``x`` [n, k]."""
    n, k = rhs.shape
    if n == 0:
        return
    sup, main, sub = diags[0], diags[1], diags[2]
    tiny = 0.0
    if perturb_singular:
        for r in range(3):
            for i in range(n):
                tiny = max(tiny, abs(diags[r, i]))
        tiny = tiny * eps
    singular = False
    if not partial_pivoting:
        w = np.empty(n, dtype=rhs.dtype)
        denom = main[0]
        if denom == 0:
            if perturb_singular:
                denom = tiny
            else:
                singular = True
        if not singular:
            w[0] = sup[0] / denom
            for c in range(k):
                x[0, c] = rhs[0, c] / denom
            for i in range(1, n):
                denom = main[i] - sub[i] * w[i - 1]
                if denom == 0:
                    if perturb_singular:
                        denom = tiny
                    else:
                        singular = True
                        break
                w[i] = sup[i] / denom
                for c in range(k):
                    x[i, c] = (rhs[i, c] - sub[i] * x[i - 1, c]) / denom
            if not singular:
                for i in range(n - 2, -1, -1):
                    for c in range(k):
                        x[i, c] -= w[i] * x[i + 1, c]
    else:
        u = np.zeros((n, 3), dtype=rhs.dtype)
        u[0, 0] = main[0]
        if n > 1:
            u[0, 1] = sup[0]
        for c in range(k):
            x[0, c] = rhs[0, c]
        for i in range(n - 1):
            if abs(u[i, 0]) >= abs(sub[i + 1]):
                if u[i, 0] == 0:
                    if perturb_singular:
                        u[i, 0] = tiny
                    else:
                        singular = True
                        break
                factor = sub[i + 1] / u[i, 0]
                u[i + 1, 0] = main[i + 1] - factor * u[i, 1]
                for c in range(k):
                    x[i + 1, c] = rhs[i + 1, c] - factor * x[i, c]
                if i != n - 2:
                    u[i + 1, 1] = sup[i + 1]
                    u[i, 2] = 0
            else:
                factor = u[i, 0] / sub[i + 1]
                u[i, 0] = sub[i + 1]
                u[i + 1, 0] = u[i, 1] - factor * main[i + 1]
                u[i, 1] = main[i + 1]
                for c in range(k):
                    t = x[i, c]
                    x[i + 1, c] = t - factor * rhs[i + 1, c]
                    x[i, c] = rhs[i + 1, c]
                if i != n - 2:
                    u[i, 2] = sup[i + 1]
                    u[i + 1, 1] = -factor * sup[i + 1]
        if not singular and u[n - 1, 0] == 0:
            if perturb_singular:
                u[n - 1, 0] = tiny
            else:
                singular = True
        if not singular:
            for c in range(k):
                x[n - 1, c] /= u[n - 1, 0]
            if n > 1:
                for c in range(k):
                    x[n - 2, c] = (x[n - 2, c] - u[n - 2, 1] * x[n - 1, c]) / u[n - 2, 0]
            for i in range(n - 3, -1, -1):
                for c in range(k):
                    x[i, c] = (x[i, c] - u[i, 1] * x[i + 1, c] - u[i, 2] * x[i + 2, c]) / u[i, 0]
    if singular:
        for i in range(n):
            for c in range(k):
                x[i, c] = np.nan


def tridiagonal_solve_batch(diags, rhs, out, partial_pivoting, perturb_singular, eps):
    """``tridiagonal_solve_one`` over a flattened batch: diags [B, 3, n], rhs/out [B, n, k]."""
    for b in range(diags.shape[0]):
        tridiagonal_solve_one(diags[b], rhs[b], out[b], partial_pivoting, perturb_singular, eps)
