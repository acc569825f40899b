"""Text of the integer expressions in a `FuncInfo` (shapes, entry conditions, checked
indices): for the runtime's error messages, and as Python source in the generated argument
binders (the text of shapes is valid Python with Python's floor semantics for ``//`` and
``%``)."""

from ..ir import dtype as dt
from ..ir import expr as E
from ..ir.node import walk

_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%", "eq": "==",
    "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "and", "or": "or",
}
_PRECEDENCE = {"or": 1, "and": 2, "eq": 4, "ne": 4, "lt": 4, "le": 4, "gt": 4, "ge": 4,
               "add": 5, "sub": 5, "mul": 6, "floordiv": 6, "floormod": 6}


def expr_text(e, names=None, parent=0):
    """Python text of an integer/bool expression, with minimal parentheses; ``names`` maps
    variables to the identifiers to print (default: their names)."""
    def sub(x, prec=0):
        return expr_text(x, names, prec)

    if isinstance(e, E.IntImm):
        return str(bool(e.value)) if e.dtype == "bool" else str(e.value)
    if isinstance(e, E.Var):
        return names[e] if names else e.name
    if isinstance(e, E.Not):
        return f"(not {sub(e.a, 3)})" if parent > 3 else f"not {sub(e.a, 3)}"
    if isinstance(e, E.Select):
        return f"({sub(e.true_value)} if {sub(e.cond)} else {sub(e.false_value)})"
    if isinstance(e, E.Binary):
        if e.op in ("min", "max"):
            return f"{e.op}({sub(e.a)}, {sub(e.b)})"
        prec = _PRECEDENCE[e.op]
        left = prec + 1 if prec == 4 else prec  # comparisons must not chain
        text = f"{sub(e.a, left)} {_SYMBOLS[e.op]} {sub(e.b, prec + 1)}"
        return f"({text})" if prec < parent else text
    if isinstance(e, E.BufferLoad):  # in messages about indices read from memory
        return f"{e.buffer.name}[{', '.join(sub(i) for i in e.indices)}]"
    if isinstance(e, E.Cast):
        return f"{e.dtype}({sub(e.value)})"
    return repr(e)


def vars_in(e):
    """The shape variables ``e`` refers to, in first-use order."""
    return [n for n in walk(e) if isinstance(n, E.Var)]


def divisions(e):
    """The integer ``//`` and ``%`` in ``e`` whose divisor may be 0 (is not a non-zero
    constant), innermost first: the order in which their divisors can be checked."""
    return [n for n in reversed(list(walk(e))) if isinstance(n, E.Binary)
            and n.op in ("floordiv", "floormod") and not dt.is_float(n.dtype)
            and not (isinstance(n.b, E.IntImm) and n.b.value)]
