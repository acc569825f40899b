"""Math functions as inline LLVM code that works on scalars and vectors alike.

LLVM's ``llvm.exp`` on a vector becomes one libm call per lane; `exp` here is straight-line
code instead, so a vectorized loop stays vector code: the argument is clamped to where the
result is neither 0 nor infinity, reduced to ``r = x - k*ln2`` (Cody-Waite, two fused
multiply-adds, ``|r| <= ln2/2``), ``e^r`` comes from a Taylor polynomial (degree 7 for
float32, 13 for float64, about one ulp) and is scaled by ``2^k`` in two steps so that
subnormal results and overflow to infinity come out right. NaN passes through.

`tanh` is ``1 - 2 / (e^(2|x|) + 1)`` with the sign of ``x``, except below
`TANH_SERIES_LIMIT` where that subtraction cancels: there the odd Taylor series (enough
terms for the type) is used.

`log` splits ``x = 2^k * m`` from its bits (a subnormal ``x`` scaled into the normal range
first), with ``m`` in ``[sqrt(2)/2, sqrt(2))``; for ``f = m - 1`` and ``s = f / (2 + f)``,
``log(1 + f) = 2 atanh(s) = f - f^2/2 + s * (f^2/2 + R)`` with ``R = sum 2 s^2n / (2n + 1)``
(``|s| < 0.172``: 4 terms for float32, 9 for float64), so that the large part ``f`` is
exact and only small corrections round; ``k * ln2`` is added in two parts as in `exp`.
``log(0)`` is -inf, a negative ``x`` or NaN gives NaN, ``log(inf)`` is inf.
"""

import math
from fractions import Fraction

import llvmlite.ir as ir

from . import types as T

# dtype -> (mantissa bits, exponent bias, integer type, clamp low, clamp high,
#           ln2 high part, ln2 low part, polynomial degree)
_FORMAT = {
    "float32": (23, 127, T.I32, -104.0, 89.0, 0.693359375, -2.12194440e-4, 7),
    "float64": (52, 1023, T.I64, -746.0, 710.0, 6.93147180369123816490e-01,
                1.90821492927058770002e-10, 13),
}

#: Terms of the series ``R`` (see the module docstring) `log` sums.
_LOG_TERMS = {"float32": 4, "float64": 9}

TANH_SERIES_LIMIT = 0.35
_TANH_TERMS = {"float32": 7, "float64": 14}  # series terms below TANH_SERIES_LIMIT


def exp(em, x, dtype):
    """``e**x`` for a float32/float64 scalar or vector ``x``; ``em`` is the expression
    emitter (its builder ``b`` and ``intrinsic``)."""
    mant, bias, int_t, lo, hi, ln2_hi, ln2_lo, degree = _FORMAT[dtype]
    b = em.b
    lanes = T.lanes_of(x)
    const = _constants(dtype, x)

    def fma(a, m, c):
        return em.intrinsic("fma", [a, m, c])

    # NaN and values below `lo` go to `lo` (unordered compare), values above `hi` to `hi`.
    xc = b.select(b.fcmp_unordered("<", x, const(lo)), const(lo), x)
    xc = b.select(b.fcmp_ordered(">", xc, const(hi)), const(hi), xc)
    k = em.intrinsic("rint", [b.fmul(xc, const(1 / math.log(2)))])
    r = fma(b.fneg(k), const(ln2_hi), xc)
    r = fma(b.fneg(k), const(ln2_lo), r)
    p = const(1 / math.factorial(degree))
    for n in range(degree - 1, -1, -1):
        p = fma(p, r, const(1 / math.factorial(n)))
    ki = b.fptosi(k, int_t if lanes == 1 else ir.VectorType(int_t, lanes))
    half = b.ashr(ki, _splat(ki.type, 1))
    for part in (half, b.sub(ki, half)):
        p = b.fmul(p, _pow2(b, part, mant, bias, p.type))
    return b.select(b.fcmp_unordered("uno", x, x), x, p)


def log(em, x, dtype):
    """``log(x)`` for a float32/float64 scalar or vector ``x`` (see the module docstring)."""
    mant, bias, int_t, _, _, ln2_hi, ln2_lo, _ = _FORMAT[dtype]
    b = em.b
    lanes = T.lanes_of(x)
    const = _constants(dtype, x)
    ints = int_t if lanes == 1 else ir.VectorType(int_t, lanes)
    # A subnormal x: times 2^(mant + 2) it is normal, and k comes out that much larger.
    tiny = b.fcmp_ordered("<", x, const(2.0 ** (1 - bias)))
    scaled = b.select(tiny, b.fmul(x, const(2.0 ** (mant + 2))), x)
    bits = b.bitcast(scaled, ints)
    k = b.sub(b.lshr(bits, _splat(ints, mant)), _splat(ints, bias))
    k = b.sub(k, b.select(tiny, _splat(ints, mant + 2), _splat(ints, 0)))
    mbits = b.or_(b.and_(bits, _splat(ints, (1 << mant) - 1)), _splat(ints, bias << mant))
    m = b.bitcast(mbits, x.type)                                  # in [1, 2)
    big = b.fcmp_ordered(">", m, const(math.sqrt(2)))
    m = b.select(big, b.fmul(m, const(0.5)), m)
    k = b.add(k, b.zext(big, ints))
    f = b.fsub(m, const(1))
    s = b.fdiv(f, b.fadd(f, const(2)))
    z = b.fmul(s, s)
    terms = _LOG_TERMS[dtype]
    r = const(2 / (2 * terms + 1))
    for n in range(terms - 1, 0, -1):
        r = em.intrinsic("fma", [r, z, const(2 / (2 * n + 1))])
    r = b.fmul(r, z)
    hfsq = b.fmul(const(0.5), b.fmul(f, f))
    kf = b.sitofp(k, x.type)
    # k ln2_hi - ((hfsq - (s (hfsq + R) + k ln2_lo)) - f): ln2_hi has trailing zero bits, so
    # k ln2_hi is exact.
    low = em.intrinsic("fma", [s, b.fadd(hfsq, r), b.fmul(kf, const(ln2_lo))])
    y = em.intrinsic("fma", [kf, const(ln2_hi), b.fneg(b.fsub(b.fsub(hfsq, low), f))])
    y = b.select(b.fcmp_ordered("==", x, const(0)), const(-math.inf), y)
    y = b.select(b.fcmp_ordered("==", x, const(math.inf)), x, y)
    return b.select(b.fcmp_unordered("<", x, const(0)), const(math.nan), y)


def _bernoulli(count):
    """B_0 .. B_{count-1} as fractions."""
    b = [Fraction(1)]
    for m in range(1, count):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


def _tanh_series(terms):
    """Coefficients of ``x, x^3, x^5, ...`` in the Taylor series of tanh."""
    b = _bernoulli(2 * terms + 1)
    return [float(4 ** n * (4 ** n - 1) * b[2 * n] / math.factorial(2 * n))
            for n in range(1, terms + 1)]


def tanh(em, x, dtype):
    """``tanh(x)`` for a float32/float64 scalar or vector ``x`` (see the module docstring)."""
    b = em.b
    const = _constants(dtype, x)
    a = em.intrinsic("fabs", [x])
    big = b.fsub(const(1), b.fdiv(const(2), b.fadd(exp(em, b.fadd(a, a), dtype), const(1))))
    big = em.intrinsic("copysign", [big, x])
    coeffs = _tanh_series(_TANH_TERMS[dtype])
    x2 = b.fmul(x, x)
    p = const(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        p = em.intrinsic("fma", [p, x2, const(c)])
    small = b.fmul(p, x)
    return b.select(b.fcmp_ordered("<", a, const(TANH_SERIES_LIMIT)), small, big)


def _constants(dtype, x):
    """A maker of ``dtype`` constants shaped like ``x`` (scalar or vector)."""
    lanes = T.lanes_of(x)
    return lambda v: T.constant(dtype, v, lanes)


def _splat(ty, v):
    return ir.Constant(ty, [v] * ty.count if isinstance(ty, ir.VectorType) else v)


def _pow2(b, k, mant, bias, float_t):
    """``2**k`` for integers ``k`` in the normal exponent range, built from its bits."""
    return b.bitcast(b.shl(b.add(k, _splat(k.type, bias)), _splat(k.type, mant)), float_t)
