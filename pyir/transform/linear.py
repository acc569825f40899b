"""How an integer index moves with one variable: the constant coefficient of an
expression that is affine in it (used to find contiguous accesses)."""

from ..arith import vars_of
from ..ir import expr as E
from ..ir.node import walk


def depends_on(expr, var):
    if isinstance(var, E.Var):
        return var in vars_of(expr)  # memoized: coefficient asks again for every subterm
    return any(n is var for n in walk(expr))


def coefficient(expr, var):
    """The integer ``c`` such that ``expr == c * var + (terms without var)``, or None when
    ``expr`` is not affine in ``var`` with a constant coefficient."""
    if not depends_on(expr, var):
        return 0
    if expr is var:
        return 1
    if isinstance(expr, E.Binary) and expr.op in ("add", "sub"):
        a, b = coefficient(expr.a, var), coefficient(expr.b, var)
        if a is None or b is None:
            return None
        return a + b if expr.op == "add" else a - b
    if isinstance(expr, E.Binary) and expr.op == "mul":
        for x, y in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(y, E.IntImm):
                c = coefficient(x, var)
                return None if c is None else c * y.value
    return None
