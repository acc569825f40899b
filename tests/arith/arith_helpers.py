"""Helpers for the arith tests: a reference evaluator and a compact formatter."""

from pyir.ir import Binary, Cast, IntImm, Not, Select, Var
from pyir.ir.node import walk

_FOLD = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "floormod": lambda a, b: a % b,
    "min": min, "max": max, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b, "and": lambda a, b: a and b, "or": lambda a, b: a or b,
}


def evaluate(e, env, wrap=False):
    """Value of an integer/bool expression with Python (floor) semantics; ``wrap``: each
    int64 result wraps around to an int64, as generated code computes it."""
    if isinstance(e, IntImm):
        return bool(e.value) if e.dtype == "bool" else e.value
    if isinstance(e, Var):
        return env[e]
    if isinstance(e, Binary):
        value = _FOLD[e.op](evaluate(e.a, env, wrap), evaluate(e.b, env, wrap))
        return _int64(value) if wrap and e.dtype == "int64" else value
    if isinstance(e, Not):
        return not evaluate(e.a, env, wrap)
    if isinstance(e, Select):
        return evaluate(e.true_value if evaluate(e.cond, env, wrap) else e.false_value, env,
                        wrap)
    if isinstance(e, Cast):
        return evaluate(e.value, env, wrap)
    raise TypeError(f"cannot evaluate {e!r}")


def _int64(value):
    return (value + 2**63) % 2**64 - 2**63


def overflows(e, env):
    """Whether some int64 part of ``e`` is, exactly, beyond int64 at ``env``."""
    return any(isinstance(s, Binary) and s.dtype == "int64"
               and not -2**63 <= evaluate(s, env) < 2**63 for s in walk(e))


_SYM = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%", "lt": "<",
        "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "and": "and", "or": "or"}


def fmt(e):
    """Fully parenthesized text of an expression (tuples and None pass through)."""
    if e is None:
        return None
    if isinstance(e, tuple):
        return tuple(fmt(x) for x in e)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, IntImm):
        return str(bool(e.value)) if e.dtype == "bool" else str(e.value)
    if isinstance(e, Binary):
        if e.op in _SYM:
            return f"({fmt(e.a)} {_SYM[e.op]} {fmt(e.b)})"
        return f"{e.op}({fmt(e.a)}, {fmt(e.b)})"
    if isinstance(e, Not):
        return f"not {fmt(e.a)}"
    if isinstance(e, Select):
        return f"select({fmt(e.cond)}, {fmt(e.true_value)}, {fmt(e.false_value)})"
    if hasattr(e, "start") and hasattr(e, "extent"):
        return f"[{fmt(e.start)}, +{fmt(e.extent)})"
    return repr(e)
