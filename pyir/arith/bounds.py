"""Constant integer bounds: interval arithmetic over expressions and polynomials.

Internally an interval is ``(lo, hi)`` with ``-inf`` / ``inf`` (floats) for an open
side and Python ints otherwise; `IntBound` is the public form with None for open sides.
Variables get their intervals from a lookup function (the Analyzer's knowledge). Integers
narrower than int64 wrap: an interval that leaves the dtype becomes the whole dtype.
"""

import math
from typing import NamedTuple, Optional

from ..ir import (COMPARE_OPS, LOGIC_OPS, Binary, BufferLoad, Cast, IntImm, Not, Select, Var,
                  dtype as dt)

INF = math.inf
EVERYTHING = (-INF, INF)
_INT64_MAX = dt.int_range("int64")[1]


class IntBound(NamedTuple):
    """Inclusive integer bounds; None means unbounded on that side."""

    min: Optional[int]
    max: Optional[int]

    @staticmethod
    def from_interval(iv):
        lo, hi = iv
        return IntBound(None if lo == -INF else lo, None if hi == INF else hi)


def dtype_interval(dtype):
    """The values a ``dtype`` can hold; int64 is treated as unbounded."""
    hit = _DTYPE_INTERVALS.get(dtype)
    return hit if hit is not None else _dtype_interval(dtype)


def _dtype_interval(dtype):
    if dtype == "bool":
        return (0, 1)
    if dt.is_uint(dtype):
        return (0, INF if dt.bits(dtype) == 64 else (1 << dt.bits(dtype)) - 1)
    if dt.is_int(dtype) and dt.bits(dtype) < 64:
        half = 1 << (dt.bits(dtype) - 1)
        return (-half, half - 1)
    return EVERYTHING


_DTYPE_INTERVALS = {d: _dtype_interval(d) for d in dt.DTYPES}


def in_dtype(iv, dtype):
    """``iv`` if ``dtype`` holds all of it, else every value of ``dtype`` (a narrower
    integer wraps: ``x + 1`` of the largest int32 is the smallest; int64 is unbounded)."""
    values = dtype_interval(dtype)
    if values is EVERYTHING or (values[0] <= iv[0] and iv[1] <= values[1]):
        return iv
    return values


def union(a, b):
    return (min(a[0], b[0]), max(a[1], b[1]))


def add(a, b):
    return (_sum(a[0], b[0], -INF), _sum(a[1], b[1], INF))


def _sum(x, y, open_side):
    return open_side if open_side in (x, y) else x + y


def _mul(x, y):
    return 0 if x == 0 or y == 0 else x * y


def mul(a, b):
    corners = [_mul(x, y) for x in a for y in b]
    return (min(corners), max(corners))


def scale(a, k):
    """``a * k`` for a constant ``k`` (what `mul` by ``(k, k)`` gives, without its corners)."""
    if k > 0:
        return (a[0] * k, a[1] * k) if a[0] <= a[1] else (a[1] * k, a[0] * k)
    if k < 0:
        return (a[1] * k, a[0] * k) if a[0] <= a[1] else (a[0] * k, a[1] * k)
    return (0, 0)


def _fdiv(x, d):
    """floor(x / d) for d > 0, either possibly infinite."""
    if x in (INF, -INF):
        return x
    if d == INF:
        return 0 if x >= 0 else -1
    return x // d


def floordiv(a, b):
    if b[0] > b[1]:     # no divisor at all (in a loop of no iterations): any bound holds
        return EVERYTHING
    if b[0] >= 1:
        lo = min(_fdiv(a[0], b[0]), _fdiv(a[0], b[1]))
        hi = max(_fdiv(a[1], b[0]), _fdiv(a[1], b[1]))
        return (lo, hi)
    if b[1] <= -1:
        return floordiv((-a[1], -a[0]), (-b[1], -b[0]))
    return EVERYTHING


def floormod(a, b):
    if b[0] == b[1] and b[0] not in (INF, -INF) and b[0] > 0 and -INF < a[0] and a[1] < INF:
        c = b[0]
        if a[0] // c == a[1] // c:
            q = a[0] // c
            return (a[0] - q * c, a[1] - q * c)
    if b[0] >= 1:
        hi = b[1] - 1
        if a[0] >= 0:
            hi = min(hi, a[1])
        return (0, hi)
    if b[1] <= -1:
        lo = b[0] + 1
        if a[1] <= 0:
            lo = max(lo, a[0])
        return (lo, 0)
    return EVERYTHING


class ConstBounder:
    """Interval of an expression given ``var_interval(var) -> interval``."""

    def __init__(self, var_interval):
        self.var_interval = var_interval

    def expr(self, e):
        return in_dtype(self._expr(e), e.dtype)

    def _expr(self, e):
        if isinstance(e, IntImm):
            return (e.value, e.value)
        if isinstance(e, Var):
            return self.var_interval(e)
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, Not):
            return (0, 1)
        if isinstance(e, Select):
            cond = self.expr(e.cond)
            if cond == (1, 1):
                return self.expr(e.true_value)
            if cond == (0, 0):
                return self.expr(e.false_value)
            return union(self.expr(e.true_value), self.expr(e.false_value))
        if isinstance(e, Cast) and not dt.is_float(e.value.dtype):
            iv = self.expr(e.value)
            # int64 is unbounded for indices, but a uint64 value past its largest wraps
            return EVERYTHING if e.dtype == "int64" and iv[1] > _INT64_MAX else iv
        if isinstance(e, BufferLoad):
            return dtype_interval(e.dtype)
        return EVERYTHING

    def _binary(self, e):
        op = e.op
        if op in COMPARE_OPS or op in LOGIC_OPS:
            return (0, 1)
        if dt.is_float(e.dtype):
            return EVERYTHING
        a, b = self.expr(e.a), self.expr(e.b)
        if op == "add":
            return add(a, b)
        if op == "sub":
            return add(a, scale(b, -1))
        if op == "mul":
            return mul(a, b)
        if op == "floordiv":
            return floordiv(a, b)
        if op == "floormod":
            return floormod(a, b)
        if op == "min":
            return (min(a[0], b[0]), min(a[1], b[1]))
        if op == "max":
            return (max(a[0], b[0]), max(a[1], b[1]))
        return EVERYTHING

    def poly(self, p, held=False):
        """Interval of a `Poly` (each monomial bounded as a product of its atoms). ``held``:
        each atom holds a value of its dtype, as it does once evaluated (an int64 variable
        is at most the largest int64), which bounds the exact value of the sum."""
        interval = self._held if held else self.expr
        total = (p.const, p.const)
        for mono, coeff in p.terms.items():
            iv = interval(mono[0])
            for atom in mono[1:]:
                iv = mul(iv, interval(atom))
            total = add(total, scale(iv, coeff))
        return in_dtype(total, p.dtype)

    def _held(self, atom):
        """The interval of ``atom`` within the values its dtype holds."""
        lo, hi = self.expr(atom)
        least, most = dt.int_range(atom.dtype)
        return (max(lo, least), min(hi, most))
