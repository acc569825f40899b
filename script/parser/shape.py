"""Parsing int64 shape expressions (``n * 2``, ``m + 1``, ``"k // 4"``), shared by the
graph (R) and tensor (T) dialects.

Both entry points take ``resolve(name, node) -> PrimExpr``, which decides what a name means
(an existing shape variable, a new one declared by a string, a Python constant) and raises
a ParseError when it means nothing.
"""

import ast

from pyir.ir import IntImm
from pyir.ir import dtype as dt

from .source import parse_python

_OPS = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__",
        ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__"}

HINT = "an int64 shape expression: integers, shape variables, + - * // %"


def parse_shape_expr(parser, node, resolve):
    """The int64 expression written as the Python expression ``node``."""
    with parser.span(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int) \
                and not isinstance(node.value, bool):
            lo, hi = dt.int_range(dt.INDEX)
            if not lo <= node.value <= hi:
                parser.error(node, f"{node.value} does not fit in {dt.INDEX}", HINT)
            return IntImm(node.value, dt.INDEX)
        if isinstance(node, ast.Name):
            value = resolve(node.id, node)
            if value.dtype != dt.INDEX:
                parser.error(node, f"{node.id} is {value.dtype}; shape expressions are int64",
                             HINT)
            return value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            a = parse_shape_expr(parser, node.left, resolve)
            b = parse_shape_expr(parser, node.right, resolve)
            if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and isinstance(b, IntImm) \
                    and b.value == 0:
                parser.error(node, "this shape expression divides by zero", HINT)
            return getattr(a, _OPS[type(node.op)])(b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = parse_shape_expr(parser, node.operand, resolve)
            if isinstance(operand, IntImm):
                return IntImm(-operand.value, dt.INDEX)
            return -operand
        parser.error(node, "this is not a valid shape expression", HINT)


def parse_shape_string(parser, node, resolve):
    """The int64 expression in string constant ``node`` (``"n"``, ``"n * 2"``); errors
    inside the string point at the whole string."""
    try:
        tree = parse_python(node.value.strip(), mode="eval")
    except SyntaxError:
        parser.error(node, f"{node.value!r} is not a valid shape expression", HINT)
    for sub in ast.walk(tree):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(sub, attr):
                setattr(sub, attr, getattr(node, attr))
    return parse_shape_expr(parser, tree.body, resolve)


def parse_dim(parser, node, resolve, resolve_in_string=None):
    """A dimension: a string is parsed with ``resolve_in_string`` (default ``resolve``),
    anything else as an expression with ``resolve``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return parse_shape_string(parser, node, resolve_in_string or resolve)
    return parse_shape_expr(parser, node, resolve)
