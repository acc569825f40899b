"""The rewriting simplifier: one bottom-up pass that leaves an expression in canonical form.

Integer ``+ - *`` go through `Poly` (terms merged, constants folded and last);
``//`` and ``%`` by a constant (or a single symbolic factor) split off the divisible part
of the dividend and vanish when the remainder is provably in ``[0, divisor)``;
``x - (x // c) * c`` becomes ``x % c`` (and the like); min/max and comparisons are decided
from bounds when possible; logic is folded. Facts (ranges, substitutions) come from the
`Analyzer` that owns the simplifier. Float arithmetic is only rebuilt, never folded.
"""

import math
import operator

from ..errors import Error
from ..ir import (COMPARE_OPS, LOGIC_OPS, Binary, BufferLoad, Call, Cast, FloatImm, IntImm, Not,
                  PrimExpr, Select, StringImm, Var, dtype as dt)
from ..ir.node import with_fields
from .canonical import POLY_OPS, Poly, Unrepresentable, fit, mono_contains, wrap

#: The integer operators the polynomial layer and floor division/modulo handle.
_INTEGER_OPS = POLY_OPS + ("floordiv", "floormod")
_NEGATE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


def negated_comparison(cond):
    """The comparison that holds where the integer comparison ``cond`` fails (``i < 2``:
    ``i >= 2``), or None for another condition (where ``a and b`` fails, neither need fail
    alone)."""
    if isinstance(cond, Binary) and cond.op in COMPARE_OPS and not dt.is_float(cond.a.dtype):
        return Binary(_NEGATE[cond.op], cond.a, cond.b)
    return None


def _true(v):
    return IntImm(1 if v else 0, "bool")


def _is_index_int(dtype):
    """int64, the index dtype: floor division, bounds and comparisons are decided there as on
    mathematical integers (indices do not overflow). Narrower integers are data, and they
    wrap: ``b - a >= 0`` does not imply ``a <= b`` in int32, nor is ``(x * 4 + 1) // 4``
    ``x`` in int8, so they are only folded when constant."""
    return dtype == "int64"


class Simplifier:
    """Simplifies expressions under the facts of one `Analyzer` (memoized per instance)."""

    def __init__(self, analyzer):
        self.ana = analyzer
        self._memo = {}

    def __call__(self, expr):
        if not isinstance(expr, PrimExpr):
            raise Error(f"simplify expects a PrimExpr, got {type(expr).__name__} {expr!r}")
        hit = self._memo.get(id(expr))
        if hit is not None:
            return hit[1]
        result = self._simplify(expr)
        self._memo[id(expr)] = (expr, result)
        return result

    # -- dispatch ---------------------------------------------------------------------
    def _simplify(self, e):
        if isinstance(e, (IntImm, FloatImm, StringImm)):
            return e
        if isinstance(e, Var):
            value = self.ana._subst.get(e)
            return e if value is None else self(value)
        if isinstance(e, Binary):
            try:
                return self._binary(e)
            except Unrepresentable:     # a canonical form with a constant beyond int64
                return _rebuild(e, a=self(e.a), b=self(e.b))
        if isinstance(e, Not):
            return self._not(self(e.a))
        if isinstance(e, Cast):
            return self._cast(e.dtype, self(e.value))
        if isinstance(e, Select):
            return self._select(e)
        if isinstance(e, Call):
            return _rebuild(e, args=tuple(self(a) if isinstance(a, PrimExpr) else a
                                          for a in e.args))
        if isinstance(e, BufferLoad):
            return _rebuild(e, indices=tuple(self(i) for i in e.indices))
        return e

    def _binary(self, e):
        if e.op in _INTEGER_OPS and dt.is_integer(e.dtype):
            return self.poly(e).to_expr()
        if e.op in ("min", "max") and dt.is_integer(e.dtype):
            return self._minmax(e)
        if e.op in COMPARE_OPS:
            return self._compare(e.op, self(e.a), self(e.b))
        if e.op in LOGIC_OPS:
            return self._logic(e.op, self(e.a), self(e.b))
        return _rebuild(e, a=self(e.a), b=self(e.b))

    # -- polynomials, floordiv and floormod --------------------------------------------
    def poly(self, e):
        """The canonical `Poly` of the integer expression ``e``."""
        if isinstance(e, IntImm):
            return Poly(e.dtype, const=e.value)
        if isinstance(e, Binary) and dt.is_integer(e.dtype):
            if e.op in POLY_OPS:
                a, b = self.poly(e.a), self.poly(e.b)
                p = a.add(b) if e.op == "add" else a.sub(b) if e.op == "sub" else a.mul(b)
                return self.fold_divmod(p)
            if e.op in ("floordiv", "floormod"):
                return self.divmod(e.op, self.poly(e.a), self.poly(e.b))
        return Poly.from_expr(self(e))

    def divmod(self, op, a, b, positive=False):
        """``a // b`` or ``a % b`` (op "floordiv"/"floormod") of two canonical Polys;
        ``positive``: the caller knows that ``b >= 1`` (it is a split of a loop that runs).

        ``x // 0`` is 0, so a multiple of a symbolic divisor leaves the dividend of ``//``
        only when the divisor is >= 1 (``x // x`` is 1 for ``x >= 1`` alone); ``x % 0`` is
        0 too, so ``%`` drops the multiple in any case."""
        dtype = a.dtype
        if not _is_index_int(dtype):
            if a.is_const and b.is_const and b.const != 0 and dt.is_int(dtype):
                return Poly(dtype, const=wrap(_fold(op, a.const, b.const), dtype))
            return Poly.atom(Binary(op, a.to_expr(), b.to_expr()))
        if b.is_const:
            if b.const <= 0:
                if b.const < 0 and a.is_const:
                    return Poly(dtype, const=_fold(op, a.const, b.const))
                return Poly.atom(Binary(op, a.to_expr(), b.to_expr()))
            mono, k = (), b.const
        elif b.single_term() is not None and b.single_term()[1] > 0:
            mono, k = b.single_term()
        else:
            return Poly.atom(Binary(op, a.to_expr(), b.to_expr()))
        quot, rem = Poly(dtype), Poly(dtype)
        for m, c in a.terms.items():
            rest = mono_contains(m, mono)
            if rest is not None and c % k == 0:
                quot._add_term(rest, c // k)
            else:
                rem._add_term(m, c)
        if op == "floordiv" and mono and (quot.terms or quot.const) and not positive \
                and not self.ana._prove_nonneg(b.add(Poly(dtype, const=-1))):
            return Poly.atom(Binary(op, a.to_expr(), b.to_expr()))
        if mono:
            rem._add_term((), a.const)
        else:
            q, r = divmod(a.const, k)
            quot._add_term((), q)
            rem._add_term((), r)
        g = math.gcd(k, rem.const, *rem.terms.values())
        if g > 1:
            rem = Poly(dtype, {m: c // g for m, c in rem.terms.items()}, rem.const // g)
            k //= g
        divisor = Poly(dtype, {mono: k}) if mono else Poly(dtype, const=k)
        shift = self._quotient_if_constant(rem, divisor)
        if shift is not None:
            if op == "floordiv":
                return quot.add(Poly(dtype, const=shift))
            return rem.add(divisor, -shift).scale(g)
        result = self._nested_divmod(op, rem, k) if not mono else None
        if result is None:
            result = Poly.atom(Binary(op, rem.to_expr(), divisor.to_expr()))
        return quot.add(result) if op == "floordiv" else result.scale(g)

    def _quotient_if_constant(self, rem, divisor):
        """``q`` if ``rem // divisor`` is provably the constant q (0 for a symbolic one)."""
        if rem.is_const and (divisor.is_const or rem.const == 0):
            return rem.const // divisor.const if divisor.is_const else 0
        if divisor.is_const:
            lo, hi = self.ana._interval(rem)
            k = divisor.const
            if lo != -float("inf") and hi != float("inf") and lo // k == hi // k:
                return lo // k
        if self.ana._prove_nonneg(rem) and self.ana._prove_nonneg(
                divisor.sub(rem).add(Poly(rem.dtype, const=-1))):
            return 0
        return None

    def _nested_divmod(self, op, rem, k):
        """``(x // c) // k -> x // (c * k)`` and ``(x % c) % k -> x % k`` when k | c."""
        single = rem.single_term()
        if single is None or single[1] != 1 or len(single[0]) != 1:
            return None
        inner = single[0][0]
        if not (isinstance(inner, Binary) and isinstance(inner.b, IntImm) and inner.b.value > 0):
            return None
        c = inner.b.value
        if op == "floordiv" and inner.op == "floordiv":
            return self.divmod("floordiv", Poly.from_expr(inner.a), Poly(rem.dtype, const=c * k))
        if op == "floormod" and inner.op == "floormod" and c % k == 0:
            return self.divmod("floormod", Poly.from_expr(inner.a), Poly(rem.dtype, const=k))
        return None

    def fold_divmod(self, p):
        """Merge ``//``/``%`` pairs: ``(x//d)*d + x%d -> x``, ``x - (x//d)*d -> x%d``,
        ``x - x%d -> (x//d)*d``; repeated until none applies."""
        changed = True
        while changed:
            changed = False
            for mono, coeff in p.terms.items():     # p is never changed in place
                for atom in mono:
                    if isinstance(atom, Binary) and atom.op in ("floordiv", "floormod"):
                        new = self._fold_pair(p, mono, coeff, atom)
                        if new is not None:
                            p, changed = new, True
                            break
                if changed:
                    break
        return p

    def _fold_pair(self, p, mono, coeff, atom):
        divisor = Poly.from_expr(atom.b)
        if divisor.is_const and divisor.const > 0:
            dmono, k = (), divisor.const
        elif divisor.single_term() is not None and divisor.single_term()[1] > 0:
            dmono, k = divisor.single_term()
        else:
            return None
        dividend = Poly.from_expr(atom.a)
        if not dividend.terms:
            return None
        dtype = p.dtype
        if atom.op == "floordiv":
            if mono_contains(mono, dmono) != (atom,):
                return None
            mod_mono = (Binary("floormod", atom.a, atom.b),)
            b = p.terms.get(mod_mono)
            if b is not None and coeff == b * k:           # (x//d)*d*b + (x%d)*b -> x*b
                return p.sub(Poly(dtype, {mono: coeff, mod_mono: b})).add(dividend, b)
            if not dmono:
                folded = self._fold_nested(p, mono, coeff, atom, k)
                if folded is not None:
                    return folded
            if coeff % k:
                return None
            m = -coeff // k                                # x*m - (x//d)*d*m -> (x%d)*m
            if not _contains_multiple(p, dividend, m):
                return None
            mod = self.divmod("floormod", dividend, divisor)
            return p.sub(Poly(dtype, {mono: coeff})).add(dividend, -m).add(mod, m)
        if len(mono) != 1 or not _contains_multiple(p, dividend, -coeff):
            return None                                    # x*b - (x%d)*b -> (x//d)*d*b
        quot = self.divmod("floordiv", dividend, divisor)
        return p.sub(Poly(dtype, {mono: coeff})).add(dividend, coeff).add(
            quot.mul_mono(dmono), -coeff * k)

    def _fold_nested(self, p, mono, coeff, atom, d):
        """``(x // (c*k)) * k * b + ((x // c) % k) * b -> (x // c) * b`` (``atom`` is
        ``x // d``, ``d == c * k``): fused loops write a split variable this way."""
        for m2, b in p.terms.items():
            inner = m2[0] if len(m2) == 1 else None
            if not (isinstance(inner, Binary) and inner.op == "floormod"
                    and isinstance(inner.b, IntImm) and isinstance(inner.a, Binary)
                    and inner.a.op == "floordiv" and isinstance(inner.a.b, IntImm)):
                continue
            c, k = inner.a.b.value, inner.b.value
            if c > 0 and k > 0 and c * k == d and coeff == b * k and inner.a.a == atom.a:
                quotient = Poly.atom(inner.a)
                return p.sub(Poly(p.dtype, {mono: coeff, m2: b})).add(quotient, b)
        return None

    # -- min / max -----------------------------------------------------------------------
    def _minmax(self, e):
        a, b = self(e.a), self(e.b)
        if isinstance(a, IntImm) and isinstance(b, IntImm):
            return IntImm((min if e.op == "min" else max)(a.value, b.value), e.dtype)
        if a == b:
            return a
        if _is_index_int(e.dtype):
            diff = self.fold_divmod(Poly.from_expr(a).sub(Poly.from_expr(b)))
            if self.ana._prove_nonneg(diff.scale(-1)):     # a <= b
                return a if e.op == "min" else b
            if self.ana._prove_nonneg(diff):               # a >= b
                return b if e.op == "min" else a
        return _rebuild(e, a=a, b=b)

    # -- comparisons and logic -----------------------------------------------------------
    def _compare(self, op, a, b):
        if isinstance(a, IntImm) and isinstance(b, IntImm):
            return _true(_fold(op, a.value, b.value))
        if not _is_index_int(a.dtype):
            if a == b and not dt.is_float(a.dtype):
                return _true(op in ("eq", "le", "ge"))
            return Binary(op, a, b)
        pa, pb = Poly.from_expr(a), Poly.from_expr(b)
        decided = self._decide(op, self.fold_divmod(pa.sub(pb)))
        if decided is not None:
            return _true(decided)
        sides = pa, pb
        for mono in [m for m in pa.terms if m in pb.terms]:
            ca, cb = pa.terms[mono], pb.terms[mono]
            if (ca > 0) == (cb > 0):
                common = min(ca, cb) if ca > 0 else max(ca, cb)
                pa = pa.sub(Poly(pa.dtype, {mono: common}))
                pb = pb.sub(Poly(pb.dtype, {mono: common}))
        if pa.terms:
            pb, pa = pb.add(Poly(pb.dtype, const=-pa.const)), Poly(pa.dtype, pa.terms)
        elif pb.terms:
            pa, pb = pa.add(Poly(pa.dtype, const=-pb.const)), Poly(pb.dtype, pb.terms)
        taken = sides[0].sub(pa)      # what came off both sides
        if taken.is_const and taken.const == 0:
            return Binary(op, a, b)
        if not all(self._fits_after(side, taken) for side in sides):
            return Binary(op, a, b)
        return Binary(op, pa.to_expr(), pb.to_expr())

    def _fits_after(self, side, taken):
        """Whether ``side - taken`` holds an int64 value wherever ``side`` does: moving
        terms across a comparison must not overflow where the comparison as written does
        not (``8 > (w - 2) * 2**32`` is not ``2**33 + 8 > w * 2**32``: at ``w = 2**31`` the
        right side of the second is past the largest int64)."""
        least, most = dt.int_range(side.dtype)
        bounder = self.ana._bounder
        lo, hi = bounder.poly(side.sub(taken), held=True)
        if least <= lo and hi <= most:
            return True
        lo, hi = bounder.poly(side, held=True)
        t_lo, t_hi = bounder.poly(taken, held=True)
        return least <= max(lo, least) - t_hi and min(hi, most) - t_lo <= most

    def _decide(self, op, diff):
        """True/False if ``diff <op> 0`` is decided by the known bounds, else None."""
        one = Poly(diff.dtype, const=1)
        le0 = lambda p: self.ana._prove_nonneg(p.scale(-1))  # noqa: E731
        ge0 = self.ana._prove_nonneg
        if op == "lt":
            return True if le0(diff.add(one)) else False if ge0(diff) else None
        if op == "le":
            return True if le0(diff) else False if ge0(diff.sub(one)) else None
        if op == "gt":
            return True if ge0(diff.sub(one)) else False if le0(diff) else None
        if op == "ge":
            return True if ge0(diff) else False if le0(diff.add(one)) else None
        if diff.is_const:
            return (diff.const == 0) == (op == "eq")
        if le0(diff.add(one)) or ge0(diff.sub(one)):
            return op == "ne"
        return None

    def _logic(self, op, a, b):
        absorbing = 0 if op == "and" else 1
        for x, y in ((a, b), (b, a)):
            if isinstance(x, IntImm):
                return x if x.value == absorbing else y
        if a == b:
            return a
        if a == self._not(b) or b == self._not(a):
            return _true(op == "or")
        return Binary(op, a, b)

    def _not(self, a):
        if isinstance(a, IntImm):
            return _true(not a.value)
        if isinstance(a, Not):
            return a.a
        return negated_comparison(a) or Not(a)

    # -- casts and selects ----------------------------------------------------------------
    def _cast(self, dtype, value):
        if value.dtype == dtype:
            return value
        if isinstance(value, IntImm) and not dt.is_float(dtype):
            v = value.value
            return IntImm(int(v != 0) if dtype == "bool" else wrap(v, dtype), dtype)
        return Cast(dtype, value)

    def _select(self, e):
        cond = self(e.cond)
        if isinstance(cond, IntImm):
            return self(e.true_value if cond.value else e.false_value)
        t, f = self(e.true_value), self(e.false_value)
        if t == f:
            return t
        return _rebuild(e, cond=cond, true_value=t, false_value=f)


def _contains_multiple(p, q, m):
    """Whether every term of ``q`` appears in ``p`` with exactly ``m`` times its coefficient."""
    return m != 0 and all(p.terms.get(mono) == fit(c * m, p.dtype) for mono, c in q.terms.items())


_FOLD = {"floordiv": operator.floordiv, "floormod": operator.mod, "lt": operator.lt,
         "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
         "ne": operator.ne}


def _fold(op, x, y):
    return _FOLD[op](x, y)


def _rebuild(node, **fields):
    """``node`` with ``fields`` replaced, or ``node`` itself if nothing changed."""
    if all(getattr(node, k) is v for k, v in fields.items()):
        return node
    return with_fields(node, **fields)
