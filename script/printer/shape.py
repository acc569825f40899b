"""Printing int64 shape expressions (``n * 2``, ``m + 1``) as `parser.shape` reads them
back; shared by the graph (R) and tensor (T) printers."""

from pyir.errors import Error
from pyir.ir import Binary, IntImm, Var

from .core import PREC_ADD, PREC_ATOM, PREC_MUL, PREC_UNARY

_SYMBOLS = {"add": ("+", PREC_ADD), "sub": ("-", PREC_ADD), "mul": ("*", PREC_MUL),
            "floordiv": ("//", PREC_MUL), "floormod": ("%", PREC_MUL)}


def shape_expr_text(p, expr, prec=0):
    """Text of int64 expression ``expr`` with variables named by printer ``p``,
    parenthesized if it binds looser than ``prec``."""
    text, own = _text(p, expr)
    return f"({text})" if own < prec else text


def _text(p, expr):
    if isinstance(expr, IntImm):
        return str(expr.value), (PREC_UNARY if expr.value < 0 else PREC_ATOM)
    if isinstance(expr, Var):
        return p.name(expr), PREC_ATOM
    if isinstance(expr, Binary) and expr.op in _SYMBOLS:
        symbol, own = _SYMBOLS[expr.op]
        left = shape_expr_text(p, expr.a, own)
        right = shape_expr_text(p, expr.b, own + 1)
        return f"{left} {symbol} {right}", own
    raise Error(f"cannot print {expr!r} as a shape expression; shapes use integers, shape "
                "variables and + - * // %")
