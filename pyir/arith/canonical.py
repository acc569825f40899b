"""The canonical polynomial form of integer expressions.

A `Poly` is ``sum(coeff * monomial) + const`` over *atoms*: integer expressions that are
not sums, products or constants (variables, ``//`` and ``%`` nodes, min/max, loads, ...).
A monomial is a tuple of atoms sorted by `expr_key`, so ``i * n`` and ``n * i`` merge.
Terms keep the order in which they first appeared, which is how the simplifier keeps
``i * 8 + j`` reading as written. Coefficients wrap to the dtype's width, except in int64,
the index dtype, where they are exact (indices do not overflow: ``x + 2**62 + 2**62 > x``
holds); `Poly.to_expr` raises `Unrepresentable` for an int64 coefficient outside its range.

`Poly.from_expr` reads an expression structurally (no simplification of atoms) and
`Poly.to_expr` writes one back; on canonical expressions the two are inverse.
"""

import math

from ..errors import Error
from ..ir import Binary, IntImm, dtype as dt
from ..ir.node import IdentityNode, Node, node_fields

#: Binary operators whose integer forms the polynomial layer understands.
POLY_OPS = ("add", "sub", "mul")


def wrap(value, dtype):
    """``value`` reduced to the range of the integer ``dtype`` (two's complement)."""
    lo, hi, modulus = _RANGES.get(dtype, _UNBOUNDED)
    if lo <= value <= hi:
        return value
    value %= modulus
    return value - modulus if value > hi else value


def fit(value, dtype):
    """``value`` as a coefficient of a ``dtype`` Poly: exact in int64, else `wrap`ped."""
    return value if dtype == "int64" else wrap(value, dtype)


class Unrepresentable(Error, ArithmeticError):
    """An int64 Poly with a coefficient outside int64 has no expression (the analyses that
    meet one give up on the expression; the arith API raises it to its caller)."""


_INT64_MIN, _INT64_MAX = dt.int_range("int64")


def _range(dtype):
    return (*dt.int_range(dtype), 1 << dt.bits(dtype))


#: dtype -> (smallest value, largest value, 2 ** bits) of the integer (and bool) dtypes.
_RANGES = {d: _range(d) for d in dt.DTYPES if not dt.is_float(d)}
_UNBOUNDED = (float("-inf"), float("inf"), None)


def expr_key(node):
    """A string that orders expressions by structure and variable names only."""
    if isinstance(node, IntImm):
        return f"{node.value}"
    if isinstance(node, IdentityNode):
        return f"{node.name}"
    if isinstance(node, Binary):
        return f"({node.op} {expr_key(node.a)} {expr_key(node.b)})"
    if isinstance(node, tuple):
        return "[" + " ".join(expr_key(x) for x in node) + "]"
    if isinstance(node, Node):
        parts = " ".join(expr_key(v) for _, v in node_fields(node))
        return f"({type(node).__name__} {parts})"
    return repr(node)


def mono_mul(m1, m2):
    """The product of two monomials (sorted tuples of atoms), sorted by `expr_key`."""
    if not m1 or not m2:
        return m1 or m2
    return tuple(sorted(m1 + m2, key=expr_key))


def mono_contains(mono, sub):
    """If the multiset ``sub`` is inside ``mono``, the rest of ``mono``; else None."""
    rest = list(mono)
    for atom in sub:
        if atom not in rest:
            return None
        rest.remove(atom)
    return tuple(rest)


class Poly:
    """An integer polynomial: ``terms`` maps monomial -> nonzero coefficient."""

    __slots__ = ("dtype", "terms", "const")

    def __init__(self, dtype, terms=None, const=0):
        self.dtype = dtype
        self.terms = {}
        self.const = fit(const, dtype)
        if terms:
            for mono, coeff in terms.items():
                self._add_term(mono, coeff)

    def copy(self):
        """A new Poly equal to this one (its terms are already wrapped and nonzero)."""
        out = Poly.__new__(Poly)
        out.dtype, out.terms, out.const = self.dtype, dict(self.terms), self.const
        return out

    @staticmethod
    def atom(expr):
        out = Poly.__new__(Poly)
        out.dtype, out.terms, out.const = expr.dtype, {(expr,): 1}, 0
        return out

    def _add_term(self, mono, coeff):
        if not mono:
            self.const = fit(self.const + coeff, self.dtype)
            return
        c = fit(self.terms.get(mono, 0) + coeff, self.dtype)
        if c:
            self.terms[mono] = c
        else:
            self.terms.pop(mono, None)

    @property
    def is_const(self):
        return not self.terms

    def single_term(self):
        """``(monomial, coeff)`` if this is one term with no constant, else None."""
        if len(self.terms) == 1 and self.const == 0:
            return next(iter(self.terms.items()))
        return None

    def add(self, other, scale=1):
        """``self + scale * other`` as a new Poly."""
        out = self.copy()
        for mono, coeff in other.terms.items():
            out._add_term(mono, coeff * scale)
        out.const = fit(out.const + other.const * scale, out.dtype)
        return out

    def sub(self, other):
        return self.add(other, -1)

    def scale(self, k):
        """``k * self`` as a new Poly."""
        out = Poly.__new__(Poly)
        dtype = out.dtype = self.dtype
        out.const = fit(self.const * k, dtype)
        terms = out.terms = {}
        for mono, coeff in self.terms.items():
            c = fit(coeff * k, dtype)
            if c:
                terms[mono] = c
        return out

    def mul(self, other):
        if not other.terms:      # by a constant (most products: i * 8)
            return self.scale(other.const)
        if not self.terms:
            return other.scale(self.const)
        out = Poly(self.dtype, const=self.const * other.const)
        for m1, c1 in list(self.terms.items()) + [((), self.const)]:
            for m2, c2 in list(other.terms.items()) + [((), other.const)]:
                if m1 or m2:
                    out._add_term(mono_mul(m1, m2), c1 * c2)
        return out

    def mul_mono(self, mono):
        return self.mul(Poly(self.dtype, {mono: 1}) if mono else Poly(self.dtype, const=1))

    @staticmethod
    def from_expr(expr):
        """The polynomial of an integer expression, read structurally."""
        if isinstance(expr, IntImm):
            return Poly(expr.dtype, const=expr.value)
        if isinstance(expr, Binary) and expr.op in POLY_OPS:
            a, b = Poly.from_expr(expr.a), Poly.from_expr(expr.b)
            if expr.op == "add":
                return a.add(b)
            if expr.op == "sub":
                return a.sub(b)
            return a.mul(b)
        return Poly.atom(expr)

    def to_expr(self):
        """The expression of this polynomial: terms in order (a positive one first, if
        any), the constant last (first only to read ``c - x``). The smallest value of the
        dtype is added, never subtracted: its negation does not fit."""
        dtype = self.dtype
        terms = list(self.terms.items())
        if dtype == "int64" and not all(_INT64_MIN <= c <= _INT64_MAX
                                        for c in (self.const, *self.terms.values())):
            raise Unrepresentable("an int64 polynomial with a coefficient outside int64")
        if not terms:
            return IntImm(self.const, dtype)
        first_pos = next((k for k, (_, c) in enumerate(terms) if c > 0), None)
        if first_pos:
            terms.insert(0, terms.pop(first_pos))
        lowest = _RANGES.get(dtype, _UNBOUNDED)[0] or None    # None when unsigned
        const = self.const
        mono, coeff = terms[0]
        if coeff > 0:
            expr = _term(mono, coeff, dtype)
        elif const > 0 and coeff != lowest:
            expr, const = IntImm(const, dtype), 0
            expr = Binary("sub", expr, _term(mono, -coeff, dtype))
        else:
            expr = Binary("mul", _mono_expr(mono), IntImm(coeff, dtype))
        for mono, coeff in terms[1:]:
            if coeff > 0 or coeff == lowest:
                expr = Binary("add", expr, _term(mono, coeff, dtype))
            else:
                expr = Binary("sub", expr, _term(mono, -coeff, dtype))
        if const > 0 or const == lowest:
            expr = Binary("add", expr, IntImm(const, dtype))
        elif const < 0:
            expr = Binary("sub", expr, IntImm(-const, dtype))
        return expr

    def __repr__(self):
        return f"Poly({self.to_expr()!r})"


def _mono_expr(mono):
    expr = mono[0]
    for atom in mono[1:]:
        expr = Binary("mul", expr, atom)
    return expr


def _term(mono, coeff, dtype):
    expr = _mono_expr(mono)
    return expr if coeff == 1 else Binary("mul", expr, IntImm(coeff, dtype))


def known_multiple(expr):
    """The largest ``m`` such that the integer ``expr`` is a multiple of ``m`` whatever the
    values of its variables, read from its polynomial (the gcd of the coefficients and the
    constant); 0 when ``expr`` is 0."""
    p = Poly.from_expr(expr)
    return math.gcd(p.const, *p.terms.values())
