"""Regions covered by index expressions, and linear-form detection.

`relax_region` answers "which part of a buffer does this access touch while these
variables run over their ranges" (block read/write regions, bounds checks);
`detect_linear` splits an expression into ``coeff * var + rest``; `non_decreasing` says
whether an expression never decreases as a variable grows.
"""

from ..errors import Error
from ..ir import Binary, IntImm, PrimExpr, Range, Var, convert, dtype as dt
from ..ir.node import walk
from .analyzer import Analyzer
from .canonical import Poly, mono_contains
from .simplify import Simplifier


def relax_region(indices, analyzer, relax_vars, shape=None):
    """One `Range` per index: the smallest ``[start, start + extent)`` the index covers
    while each var of ``relax_vars`` runs over its range bound in ``analyzer``. Other
    variables stay symbolic. A point access has extent 1. An index that cannot be
    bounded covers the whole dimension ``shape[d]`` if ``shape`` is given, else raises."""
    relax = list(relax_vars)
    for v in relax:
        bounds = analyzer._bounds.get(v)
        if not isinstance(v, Var) or bounds is None or None in bounds:
            name = v.name if isinstance(v, Var) else repr(v)
            raise Error(f"relax_region: variable {name} has no range bound in the analyzer")
    ranges = []
    for d, index in enumerate(indices):
        lo, hi = analyzer.symbolic_bound(convert(index), relax)
        if lo is None or hi is None:
            if shape is None:
                raise Error(f"relax_region: cannot bound index {d} ({index!r}) over "
                            f"{', '.join(v.name for v in relax)}")
            ranges.append(Range(IntImm(0, shape[d].dtype), shape[d]))
            continue
        ranges.append(Range(lo, analyzer.simplify(hi - lo + 1)))
    return tuple(ranges)


def detect_linear(expr, var, analyzer=None):
    """``(coeff, rest)`` with ``expr == coeff * var + rest`` and neither part using
    ``var`` (both simplified PrimExprs; coeff may be symbolic), or None if ``expr`` is
    not linear in ``var``."""
    if not isinstance(expr, PrimExpr) or not isinstance(var, Var):
        raise Error(f"detect_linear expects (PrimExpr, Var), got ({type(expr).__name__}, "
                    f"{type(var).__name__})")
    if not dt.is_integer(expr.dtype):
        raise Error(f"detect_linear needs an integer expression, got {expr.dtype}")
    analyzer = analyzer or Analyzer()
    p = Simplifier(analyzer).poly(analyzer.simplify(expr))
    coeff, rest = Poly(p.dtype), Poly(p.dtype, const=p.const)
    for mono, c in p.terms.items():
        others = mono_contains(mono, (var,))
        if others is not None and not any(_uses(a, var) for a in others):
            coeff = coeff.add(Poly(p.dtype, const=c).mul_mono(others))
        elif any(_uses(a, var) for a in mono):
            return None
        else:
            rest = rest.add(Poly(p.dtype, {mono: c}))
    return coeff.to_expr(), rest.to_expr()


def non_decreasing(expr, var, analyzer):
    """Whether ``expr`` never decreases as ``var`` grows, as written: ``var`` and terms free
    of it joined by ``+``, ``-`` a term free of it, ``min`` and ``max``, times a constant at
    least 0, and floor divided by a divisor free of it that ``analyzer`` proves positive
    (the rows ``(f * 4 + 3) // m`` of a fused loop's tiles). False where it cannot tell."""
    if not _uses(expr, var) or expr is var:
        return True
    if not isinstance(expr, Binary):
        return False
    a, b = expr.a, expr.b
    if expr.op in ("add", "min", "max"):
        return non_decreasing(a, var, analyzer) and non_decreasing(b, var, analyzer)
    if expr.op == "sub":
        return non_decreasing(a, var, analyzer) and not _uses(b, var)
    if expr.op == "mul":
        return any(isinstance(c, IntImm) and c.value >= 0 and non_decreasing(x, var, analyzer)
                   for c, x in ((a, b), (b, a)))
    return (expr.op == "floordiv" and not _uses(b, var)
            and analyzer.can_prove(Binary("ge", b, IntImm(1, b.dtype)))
            and non_decreasing(a, var, analyzer))


def _uses(expr, var):
    return any(n is var for n in walk(expr))
