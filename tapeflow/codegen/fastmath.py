"""Vectorizable float32 transcendental functions for generated loops.

Why: Numba lowers ``np.exp`` & co. to libm calls, which LLVM cannot vectorize, and the
llvmlite wheels carry no SVML. A loop calling these branch-free functions instead is
inlined and vectorized by LLVM, several times faster than a libm call per element
(figures: benchmarks/README.md, "Evidence behind codegen choices").

How: ``exp`` is Cody-Waite range reduction (x = n ln2 + r, |r| <= ln2/2, ln2 split in a
high part exact in float32 and a low correction), a degree-7 polynomial for e^r (Cephes
``expf`` coefficients) and 2^n built from exponent bits with an LLVM bitcast. 2^n is applied
as two factors 2^(n>>1) * 2^(n-(n>>1)), so results down in the subnormal range are rounded
once and overflow gives inf. ``log`` splits the float into exponent and mantissa with the
same bitcast (Cephes ``logf`` polynomial); tanh, sigmoid, log1p and softplus derive from them.
Special values (nan, +-inf, +-0, subnormals) follow NumPy. Everything is a select, not a
branch, so the loop stays vectorizable.

The range reductions and polynomials are compiled on their own (LLVM inlines them): the
fast-math flags of a caller (``reassoc`` for vectorized reductions) must not reach the
Cody-Waite subtraction. Their own flag is ``contract`` only: multiply-adds become FMAs (one
rounding instead of two, so the reduction gets more exact, not less, and fewer instructions
per element). The thin derived functions are inlined at Numba-IR level (see below).

Accuracy, measured by ``tests/codegen/test_fastmath.py`` over ~3 million float32 inputs
spanning every binade (errors in ulps of the float32 result, against NumPy in float64):

  exp      <= 1 ulp    (0.99 measured; subnormal results within one subnormal step)
  log      <= 1 ulp    (0.81)
  log1p    <= 2 ulp    (1.44; ``log1p_unit_f32``, softplus's version for [0, 1] without the
                        special cases that range never reaches, the same bound)
  tanh     <= 2.5 ulp  (1.97)
  sigmoid  <= 3 ulp    (2.32)
  softplus <= 3 ulp    from NumPy's own float32 kernel (TensorFlow's three-piece formula)

Special values (nan, +-inf, +-0, subnormals, overflow and underflow) give NumPy's results.

float64 programs use only ``sigmoid_f64``/``softplus_f64`` here, which call libm through
NumPy: float64 keeps full double accuracy.
"""
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_F = np.float32
# The NumPy kernel's softplus thresholds, computed the same way (log(eps) + 2 in the dtype).
SOFTPLUS_T32 = np.log(np.finfo(np.float32).eps).astype(np.float32) + np.float32(2)
SOFTPLUS_T64 = float(np.log(np.finfo(np.float64).eps) + 2.0)
_JIT = dict(cache=True, error_model="numpy", nogil=True, fastmath={"contract"})


@intrinsic
def i32_as_f32(typingctx, bits):
    """Reinterpret the low 32 bits of an integer as a float32 (an LLVM bitcast)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        v = args[0]
        if v.type.width > 32:
            v = builder.trunc(v, ir.IntType(32))
        elif v.type.width < 32:
            v = builder.sext(v, ir.IntType(32))
        return builder.bitcast(v, ir.FloatType())
    return types.float32(bits), codegen


@intrinsic
def f32_as_i32(typingctx, x):
    """Reinterpret a float32's bits as an int32 (an LLVM bitcast)."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(x), codegen


@njit(**_JIT)
def exp_f32(x):
    xc = min(max(x, _F(-110.0)), _F(89.0))
    fx = np.floor(xc * _F(1.44269504088896341) + _F(0.5))
    r = xc - fx * _F(0.693359375)
    r = r - fx * _F(-2.12194440e-4)
    z = r * r
    p = _F(1.9875691500e-4) * r + _F(1.3981999507e-3)
    p = p * r + _F(8.3334519073e-3)
    p = p * r + _F(4.1665795894e-2)
    p = p * r + _F(1.6666665459e-1)
    p = p * r + _F(5.0000001201e-1)
    y = p * z + r + _F(1.0)
    n = np.int32(fx)
    n1 = n >> 1
    n2 = n - n1
    y = y * i32_as_f32((n1 + 127) << 23) * i32_as_f32((n2 + 127) << 23)
    return y if x == x else x


@njit(**_JIT)
def _log_normal_f32(bits, e):
    """log of the positive normal float with ``bits``, its exponent field adjusted by ``e``
    (the Cephes ``logf`` reduction and polynomial; callers handle special values)."""
    e = e + ((bits >> 23) & 0xFF) - 126
    m = i32_as_f32((bits & 0x807FFFFF) | 0x3F000000)   # mantissa in [0.5, 1)
    small = m < _F(0.707106781186547524)
    if small:
        e = e - 1
    m = (m + m - _F(1.0)) if small else (m - _F(1.0))
    fe = _F(e)
    z = m * m
    p = _F(7.0376836292e-2) * m - _F(1.1514610310e-1)
    p = p * m + _F(1.1676998740e-1)
    p = p * m - _F(1.2420140846e-1)
    p = p * m + _F(1.4249322787e-1)
    p = p * m - _F(1.6668057665e-1)
    p = p * m + _F(2.0000714765e-1)
    p = p * m - _F(2.4999993993e-1)
    p = p * m + _F(3.3333331174e-1)
    y = p * m * z
    y = y + fe * _F(-2.12194440e-4)
    y = y - _F(0.5) * z
    r = m + y
    return r + fe * _F(0.693359375)


@njit(**_JIT)
def log_f32(x):
    tiny = x < _F(1.17549435e-38)
    xs = x * _F(8388608.0) if tiny else x
    r = _log_normal_f32(f32_as_i32(xs), -23 if tiny else 0)
    r = r if x < _F(np.inf) else x          # +inf and nan pass through
    r = _F(-np.inf) if x == _F(0.0) else r
    return _F(np.nan) if x < _F(0.0) else r


@njit(**_JIT)
def log1p_unit_f32(x):
    """log1p for x in [0, 1] or nan (softplus's exp(-|x|)): log1p_f32 without the special
    cases that range never reaches (1 + x is a normal float in [1, 2])."""
    u = _F(1.0) + x
    d = u - _F(1.0)
    r = _log_normal_f32(f32_as_i32(u), 0)
    r = r - (d - x) * (_F(1.0) / u)
    r = x if d == _F(0.0) else r
    return r if x == x else x


@njit(**_JIT)
def log1p_f32(x):
    u = _F(1.0) + x
    d = u - _F(1.0)
    r = log_f32(u)
    r = r - (d - x) * (_F(1.0) / u)          # corrects the rounding of 1 + x (1/u: shared with sigmoid)
    r = x if d == _F(0.0) else r             # |x| below half an ulp of 1: log1p(x) = x
    r = _F(-np.inf) if u == _F(0.0) else r
    r = x if x == _F(np.inf) else r
    return r if x == x else x


@njit(**_JIT)
def tanh_small_f32(x):
    """tanh for |x| < 0.625 (Cephes tanhf's odd polynomial)."""
    z = x * x
    p = _F(-5.70498872745e-3) * z + _F(2.06390887954e-2)
    p = p * z - _F(5.37397155531e-2)
    p = p * z + _F(1.33314422036e-1)
    p = p * z - _F(3.33332819422e-1)
    return p * z * x + x


# The derived functions below are inlined into the calling program at Numba-IR level
# (``inline='always'``): they are mostly selects around calls, and LLVM would not inline
# exp + log1p (+ log) nested inside one more function, leaving a scalar call per element.
# Their little arithmetic is safe under the caller's ``reassoc`` flag; the range reductions
# and polynomials stay in the separately compiled functions above.
#
# All three are built on the same e = exp(-|x|), so where a fused loop computes softplus,
# sigmoid and tanh of one value (a loss and its gradient), LLVM's CSE leaves one exp (and one
# log1p) per element.
_INLINE = dict(_JIT, inline="always")


@njit(**_INLINE)
def tanh_f32(x):
    e = exp_f32(-abs(x))
    e2 = e * e                                  # exp(-2|x|) <= 0.29 where this branch is used
    big = (_F(1.0) - e2) / (_F(1.0) + e2)
    big = big if x >= _F(0.0) else -big
    r = tanh_small_f32(x) if abs(x) < _F(0.625) else big
    return x if (x == _F(0.0) or x != x) else r   # keeps -0.0 and nan


@njit(**_INLINE)
def sigmoid_f32(x):
    e = exp_f32(-abs(x))
    s = _F(1.0) / (_F(1.0) + e)
    return s if x >= _F(0.0) else e * s


@njit(**_INLINE)
def softplus_f32(x):
    """TensorFlow's softplus: x above -threshold, exp(x) below threshold, log1p(exp(x)) between
    (as max(x, 0) + log1p(exp(-|x|)), the same value without overflow)."""
    e = exp_f32(-abs(x))
    mid = log1p_unit_f32(e)
    mid = mid + x if x > _F(0.0) else mid
    r = e if x < SOFTPLUS_T32 else mid
    return x if x > -SOFTPLUS_T32 else r


# -- float64 counterparts: libm through NumPy, full double accuracy --------------------------

@njit(**_JIT)
def sigmoid_f64(x):
    e = np.exp(-abs(x))
    s = 1.0 / (1.0 + e)
    return s if x >= 0.0 else e * s


@njit(**_JIT)
def softplus_f64(x):
    threshold = SOFTPLUS_T64
    if x > -threshold:
        return x
    e = np.exp(x)
    return e if x < threshold else np.log1p(e)
