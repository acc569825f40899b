"""Expressions of the tensor-level (T) dialect: Python ``ast`` -> `pyir.ir` PrimExpr.

A visit in dialect "Texpr" returns an IR expression, a Buffer (a bare buffer name), or a
plain Python value (number, bool, string, tuple) for literals and constants read from the
Python scope. Python values stay Python values until they meet an IR expression, so that
``TS * 2`` folds to a number and ``x + 1`` with a float32 ``x`` makes the literal float32.
"""

import ast
import difflib
import math
import operator

import numpy as np

from pyir.errors import kind_of
from pyir.ffi.extern import ExternKernel, check_extern_call
from pyir.ffi.registry import get_global_func
from pyir.ir import (INTRINSICS, Binary, Buffer, BufferLoad, Call, Cast, FloatImm, IntImm, Not,
                     PrimExpr, Select, StringImm, Var)
from pyir.ir import dtype as dt

from .core import register

HINT_NAMES = ("a parameter, a shape variable (a string in a buffer shape), a loop variable, a "
              "block iterator, a scalar assigned earlier, an allocated buffer, or a plain "
              "constant (number, string, tuple) from the enclosing Python scope")

ARITH = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
          ast.FloorDiv: "floordiv", ast.Mod: "floormod"}
_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
            ast.GtE: "ge"}
_PY_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "div": operator.truediv, "floordiv": operator.floordiv, "floormod": operator.mod,
           "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
           "gt": operator.gt, "ge": operator.ge}
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "floormod": "%",
           "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
           "and": "and", "or": "or"}
_NUMBER = (int, float)


# ---------------------------------------------------------------- conversions
def is_number(value):
    return isinstance(value, _NUMBER)


def to_expr(parser, node, value, dtype=None, what="a value"):
    """``value`` (from visiting ``node``) as a PrimExpr; a Python literal becomes ``dtype``
    (default: bool for bools, int64 for ints, float32 for floats)."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool):
        if dtype not in (None, "bool"):
            parser.error(node, f"a bool literal cannot be used as {dtype}",
                         f"{dt.a(dtype)} value, or T.cast(..., \"{dtype}\")")
        return IntImm(int(value), "bool")
    if isinstance(value, int):
        dtype = dtype or dt.INDEX
        if dtype == "bool":
            if value not in (0, 1):
                parser.error(node, f"{value} is not a bool value", "True, False, 0 or 1")
            return IntImm(value, "bool")
        if not dt.is_float(dtype):
            check_range(parser, node, value, dtype)
            return IntImm(value, dtype)
        try:
            as_float = float(value)
        except OverflowError:
            parser.error(node, f"{value} does not fit in {dtype}")
        check_float_range(parser, node, as_float, dtype)
        return FloatImm(as_float, dtype)
    if isinstance(value, float):
        dtype = dtype or "float32"
        if not dt.is_float(dtype):
            parser.error(node, f"the float literal {value!r} cannot be used as {dtype}",
                         f"an integer literal, or T.cast({value!r}, \"{dtype}\")")
        check_float_range(parser, node, value, dtype)
        return FloatImm(value, dtype)
    if isinstance(value, Buffer):
        parser.error(node, f"buffer {value.name} is used as {what}; index it to read an "
                           "element", f"{value.name}[i, ...]")
    parser.error(node, f"{_kind(value)} cannot be used as {what}",
                 "a number, a variable or a T expression")


def _kind(value):
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, tuple):
        return "a tuple"
    return kind_of(value)


def expr(parser, node, dtype=None, what="a value"):
    """Visit ``node`` and convert the result to a PrimExpr."""
    return to_expr(parser, node, parser.visit(node, "Texpr"), dtype, what)


def index(parser, node, what="an index"):
    """An int64 expression (index, extent, shape entry)."""
    value = expr(parser, node, dt.INDEX, what)
    if value.dtype != dt.INDEX:
        parser.error(node, f"{what} must be int64, but this expression is {value.dtype}",
                     "an int64 expression, e.g. T.cast(x, \"int64\")")
    return value


def check_dtype(parser, node, name):
    if not isinstance(name, str) or name not in dt.DTYPES:
        shown = repr(name) if isinstance(name, str) else _kind(name)
        close = difflib.get_close_matches(str(name), dt.DTYPES, n=1)
        parser.error(node, f"unknown dtype {shown}"
                           + (f"; did you mean {close[0]!r}?" if close else ""),
                     "one of " + ", ".join(dt.DTYPES))
    return name


def dtype_arg(parser, node):
    """A dtype written as a string or as ``T.float32``."""
    name = parser.dialect_of(node)
    if name is not None and name[0] == "T":
        return check_dtype(parser, node, name[1])
    return check_dtype(parser, node, parser.visit(node, "Texpr"))


def unify(parser, node, a, b, a_node, b_node):
    """Both operands as PrimExprs of one dtype; a Python literal takes the other side's."""
    if isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        b = to_expr(parser, b_node, b, a.dtype)
    elif isinstance(b, PrimExpr) and not isinstance(a, PrimExpr):
        a = to_expr(parser, a_node, a, b.dtype)
    else:
        a, b = to_expr(parser, a_node, a), to_expr(parser, b_node, b)
    if a.dtype != b.dtype:
        parser.error(node, f"dtype mismatch: the operands are {a.dtype} and {b.dtype}",
                     f"operands of one dtype; convert one side, e.g. T.cast(x, \"{a.dtype}\")")
    return a, b


def binary(parser, node, op, a, b, a_node, b_node):
    """``a <op> b`` folding two Python numbers, else an IR Binary with checked dtypes."""
    if is_number(a) and is_number(b) and op in _PY_OPS:
        if op in ("div", "floordiv", "floormod") and b == 0:
            parser.error(node, "division by zero")
        return _PY_OPS[op](a, b)
    a, b = unify(parser, node, a, b, a_node, b_node)
    if op == "div" and not dt.is_float(a.dtype):
        parser.error(node, f"'/' is true division and needs float operands, not {a.dtype}",
                     "// for floor division of integers")
    if op in ("and", "or") and a.dtype != "bool":
        parser.error(node, f"'{op}' needs bool operands, not {a.dtype}",
                     "comparisons or other bool expressions")
    if op in ("add", "sub", "mul", "floordiv", "floormod", "min", "max") and a.dtype == "bool":
        parser.error(node, f"'{SYMBOLS.get(op, op)}' is not defined on bool values",
                     "'and' / 'or' / 'not' for bools, or T.cast to a number type")
    return Binary(op, a, b)


class Handle:
    """What a ``h: T.handle`` parameter's name means: only ``T.match_buffer(h, ...)`` may
    use it."""

    def __init__(self, name):
        self.name = name


# ---------------------------------------------------------------- names and literals
@register("Texpr", ast.Constant)
def _constant(parser, node):
    if node.value is None or node.value is Ellipsis or isinstance(node.value, bytes):
        parser.error(node, f"{node.value!r} is not a valid value in a prim function",
                     "a number, True/False, or a string")
    if isinstance(node.value, float) and math.isinf(node.value):
        overflowing_literal(parser, node)
    return node.value


def overflowing_literal(parser, node, infinity='T.float32("inf")'):
    """Refuse a float literal that Python read as infinity (``1e400``: it has no literal
    for infinity), which would have been stored as one without a word; ``infinity``: how
    the dialect writes it."""
    line = parser.source.line(node.lineno)
    text = line.encode("utf-8")[node.col_offset:node.end_col_offset].decode("utf-8") \
        if line is not None and node.lineno == node.end_lineno else repr(node.value)
    parser.error(node, f"the literal {text} is beyond the largest float (Python reads it as "
                       "infinity)", f"a finite number, or {infinity} for infinity")


@register("Texpr", ast.Name)
def _name(parser, node):
    found, value = parser.scopes.lookup(node.id)
    if isinstance(value, Handle):
        parser.error(node, f"{node.id} is a T.handle; it has no value until it is matched",
                     f"X = T.match_buffer({node.id}, shape, dtype), then use X")
    if found:
        return value
    if node.id in parser.aliases:
        parser.error(node, f"{node.id} is the {parser.aliases[node.id]} namespace, not a value",
                     f"{node.id}.<name>(...)")
    found, value, plain = parser.python.lookup(node.id)
    if found and plain:
        return value
    if found:
        parser.error(node, f"{node.id} is {kind_of(value)} from the Python scope; only "
                           "plain constants (numbers, strings, bools, tuples of them) may be "
                           "read from there", HINT_NAMES)
    parser.error(node, f"undefined variable {node.id!r}", HINT_NAMES)


@register("Texpr", ast.Tuple, ast.List)
def _tuple(parser, node):
    return tuple(parser.visit(e, "Texpr") for e in node.elts)


@register("Texpr", ast.Attribute)
def _attribute(parser, node):
    name = parser.dialect_of(node)
    if name is not None and name[0] == "T":
        if name[1] in dt.DTYPES:
            parser.error(node, f"T.{name[1]} is a type; call it to make a value",
                         f"T.{name[1]}(0) for a literal, T.{name[1]}(x) for a cast")
        unknown_name(parser, node, name[1])
    parser.error(node, "attribute access is not supported in prim functions",
                 "buffer loads A[i], variables, constants and T.* calls")


def unknown_name(parser, node, name):
    """Raise the error for ``T.<name>`` that the parser does not know."""
    from .tensor_builtins import KNOWN_NAMES
    if name in KNOWN_NAMES:
        parser.error(node, f"T.{name} cannot be used here", KNOWN_NAMES[name])
    close = difflib.get_close_matches(name, list(KNOWN_NAMES) + list(dt.DTYPES), n=1)
    parser.error(node, f"unknown name T.{name}" + (f"; did you mean T.{close[0]}?" if close
                                                   else ""),
                 "a T.* builtin such as T.grid, T.block, T.axis.remap, T.max, T.float32")


# ---------------------------------------------------------------- operators
@register("Texpr", ast.BinOp)
def _binop(parser, node):
    op = ARITH.get(type(node.op))
    if op is None:
        parser.error(node, f"operator {type(node.op).__name__} is not supported",
                     "+ - * / // % (and T.max, T.min, T.pow)")
    a = parser.visit(node.left, "Texpr")
    b = parser.visit(node.right, "Texpr")
    return binary(parser, node, op, a, b, node.left, node.right)


@register("Texpr", ast.UnaryOp)
def _unaryop(parser, node):
    value = parser.visit(node.operand, "Texpr")
    if isinstance(node.op, ast.Not):
        value = to_expr(parser, node.operand, value, "bool")
        if value.dtype != "bool":
            parser.error(node, f"'not' needs a bool operand, not {value.dtype}",
                         "a comparison or another bool expression")
        return Not(value)
    if isinstance(node.op, ast.USub):
        if is_number(value) and not isinstance(value, bool):
            return -value
        value = to_expr(parser, node.operand, value)
        if value.dtype == "bool":
            parser.error(node, "unary '-' is not defined on bool values")
        # -0.0 - x is -x for every float x; 0.0 - x would be +0.0 for x = 0.0, not -0.0
        zero = -0.0 if dt.is_float(value.dtype) else 0
        return binary(parser, node, "sub", zero, value, node, node.operand)
    if isinstance(node.op, ast.UAdd):
        return value
    parser.error(node, "operator '~' is not supported")


@register("Texpr", ast.BoolOp)
def _boolop(parser, node):
    op = "and" if isinstance(node.op, ast.And) else "or"
    result = to_expr(parser, node.values[0], parser.visit(node.values[0], "Texpr"), "bool")
    for sub in node.values[1:]:
        value = parser.visit(sub, "Texpr")
        result = binary(parser, node, op, result, value, node.values[0], sub)
    return result


@register("Texpr", ast.Compare)
def _compare(parser, node):
    left_node, left = node.left, parser.visit(node.left, "Texpr")
    result = None
    for op, right_node in zip(node.ops, node.comparators):
        name = _COMPARE.get(type(op))
        if name is None:
            parser.error(node, f"comparison {type(op).__name__} is not supported",
                         "== != < <= > >=")
        right = parser.visit(right_node, "Texpr")
        term = binary(parser, node, name, left, right, left_node, right_node)
        result = term if result is None else binary(parser, node, "and", result, term,
                                                     node, node)
        left_node, left = right_node, right
    return result


@register("Texpr", ast.IfExp)
def _ifexp(parser, node):
    return select(parser, node, node.test, node.body, node.orelse)


def select(parser, node, cond_node, a_node, b_node):
    cond = to_expr(parser, cond_node, parser.visit(cond_node, "Texpr"), "bool")
    if cond.dtype != "bool":
        parser.error(cond_node, f"the condition must be bool, not {cond.dtype}",
                     "a comparison or another bool expression")
    a, b = unify(parser, node, parser.visit(a_node, "Texpr"), parser.visit(b_node, "Texpr"),
                 a_node, b_node)
    return Select(cond, a, b)


@register("Texpr", ast.Subscript)
def _subscript(parser, node):
    buf = parser.visit(node.value, "Texpr")
    if not isinstance(buf, Buffer):
        parser.error(node.value, f"only buffers can be indexed, and this is "
                                 f"{_describe(buf)}", "A[i, j] where A is a buffer")
    return BufferLoad(buf, buffer_indices(parser, node, buf))


def _describe(value):
    if isinstance(value, Var):
        return f"the scalar {value.name} ({value.dtype})"
    if isinstance(value, PrimExpr):
        return f"{dt.a(value.dtype)} expression"
    return _kind(value)


def index_nodes(node):
    """The index expressions of ``A[...]`` as ast nodes (``A[()]`` has none)."""
    sl = node.slice
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


def buffer_indices(parser, node, buf):
    """The int64 indices of ``buf[...]`` (rank checked; no slices)."""
    nodes = index_nodes(node)
    check_rank(parser, node, buf, len(nodes))
    out = []
    for k, n in enumerate(nodes):
        if isinstance(n, ast.Slice):
            parser.error(n, f"a slice cannot be used to access {buf.name} here; slices "
                            "belong in T.reads / T.writes", f"an index for dimension {k}")
        out.append(index(parser, n, f"index {k} of {buf.name}"))
    return tuple(out)


def check_rank(parser, node, buf, count):
    rank = len(buf.shape)
    if count != rank:
        parser.error(node, f"buffer {buf.name} has {rank} dimension(s) but is indexed with "
                           f"{count}", f"{rank} index(es): {buf.name}[" +
                     ", ".join(f"i{k}" for k in range(rank)) + "]")


# ---------------------------------------------------------------- calls
@register("Texpr", ast.Call)
def _call(parser, node):
    from .tensor_builtins import EXPRESSIONS
    name = parser.dialect_of(node.func)
    if name is None or name[0] != "T":
        parser.error(node.func, "only T.* builtins can be called in a prim function; nothing "
                                "else is ever run", "T.max(a, b), T.exp(x), T.cast(x, "
                                "\"float32\"), T.float32(0), ...")
    if name[1] in dt.DTYPES:
        return dtype_call(parser, node, name[1])
    fn = EXPRESSIONS.get(name[1])
    if fn is None:
        unknown_name(parser, node.func, name[1])
    return fn(parser, node)


def dtype_call(parser, node, dtype):
    """``T.float32(0.5)`` literal, ``T.float32("inf")``, or ``T.float32(x)`` cast."""
    if node.keywords or len(node.args) != 1:
        parser.error(node, f"T.{dtype}(...) takes one argument: a literal or a value to cast",
                     f"T.{dtype}(0); n = T.int64() declares a shape variable")
    arg = parser.visit(node.args[0], "Texpr")
    if isinstance(arg, str):
        if not dt.is_float(dtype) or arg not in ("inf", "-inf", "nan"):
            parser.error(node.args[0], f"T.{dtype}({arg!r}) is not a literal",
                         "\"inf\", \"-inf\" or \"nan\" with a float type")
        return FloatImm(float(arg), dtype)
    if isinstance(arg, bool):
        return IntImm(int(arg), dtype) if not dt.is_float(dtype) else FloatImm(float(arg), dtype)
    if isinstance(arg, float) and not dt.is_float(dtype):
        if not arg.is_integer():
            parser.error(node.args[0], f"{arg!r} is not an integer, so it cannot be {dt.a(dtype)} "
                                       "literal", f"T.cast(T.float32({arg!r}), \"{dtype}\")")
        arg = int(arg)
    if is_number(arg):
        if math.isfinite(arg) and not dt.is_float(dtype) and dtype != "bool":
            check_range(parser, node, int(arg), dtype)
        return to_expr(parser, node.args[0], arg, dtype)
    return Cast(dtype, to_expr(parser, node.args[0], arg))


def check_range(parser, node, value, dtype):
    """Refuse the integer ``value`` written at ``node`` unless the integer (or bool)
    ``dtype`` holds it."""
    lo, hi = dt.int_range(dtype)
    if not lo <= value <= hi:
        parser.error(node, f"{value} does not fit in {dtype} ([{lo}, {hi}])")


def check_float_range(parser, node, value, dtype):
    """Refuse the finite float ``value`` written at ``node`` if it rounds to infinity in the
    float ``dtype`` (``T.float32(1e300)`` was a silent inf)."""
    with np.errstate(over="ignore"):
        rounded = np.dtype(dtype).type(value)
    if math.isfinite(value) and not np.isfinite(rounded):
        largest = float(np.finfo(dtype).max)
        parser.error(node, f"{value!r} does not fit in {dtype} (largest magnitude {largest!r})",
                     f"a value of {dtype}, T.{dtype}(\"inf\") for infinity, or a wider dtype")


def call_args(parser, node, count, name):
    if node.keywords:
        parser.error(node, f"T.{name} takes {count} positional argument(s) and no keywords",
                     f"T.{name}({', '.join(['x', 'y', 'z'][:count])})")
    if len(node.args) != count:
        parser.error(node, f"T.{name} takes {count} argument(s), got {len(node.args)}")
    return [parser.visit(a, "Texpr") for a in node.args]


def intrinsic(parser, node, name):
    """``T.exp(x)`` style math: Call(dtype, name, args); floats only except ``abs``;
    ``T.checked_index(index, extent, status)`` of int64 values with a constant status."""
    values = call_args(parser, node, INTRINSICS[name], name)
    if name == "checked_index":
        args = [to_expr(parser, n, v, "int64") for n, v in zip(node.args, values)]
        for n, a in zip(node.args, args):
            if a.dtype != "int64":
                parser.error(n, f"T.checked_index takes int64 values, not {a.dtype}",
                             'T.cast(x, "int64")')
        if not isinstance(args[2], IntImm) or args[2].value <= 0:
            parser.error(node.args[2], "the status of T.checked_index must be a positive "
                                       "integer constant", "T.checked_index(i, n, 1)")
        return Call("int64", name, tuple(args))
    first = next((v for v in values if isinstance(v, PrimExpr)), None)
    if first is not None:
        dtype = first.dtype
    else:
        dtype = "int64" if name == "abs" and all(isinstance(v, int) for v in values) \
            else "float32"
    args = [to_expr(parser, n, v, dtype) for n, v in zip(node.args, values)]
    for n, a in zip(node.args, args):
        if a.dtype != dtype:
            parser.error(n, f"T.{name} arguments must have one dtype; got {dtype} and {a.dtype}",
                         "T.cast one of them")
    if name != "abs" and not dt.is_float(dtype):
        parser.error(node, f"T.{name} needs a float argument, not {dtype}",
                     f"T.{name}(T.cast(x, \"float32\"))")
    if name == "abs" and dtype == "bool":
        parser.error(node, "T.abs needs a number, not bool")
    return Call(dtype, name, tuple(args))


def call_extern(parser, node):
    """``T.call_extern("name", *args, dtype="int32")``; a bare buffer passes its data;
    ``dtype="void"`` calls a kernel that returns nothing (an int32 result is a status).
    Without ``dtype``, a kernel declared with `pyir.ffi.extern` (which returns nothing) is
    called as void, any other name for an int32. The call is checked as the build checks it
    (`pyir.ffi.extern.check_extern_call`) when its name is a kernel, a Python function or a
    C function of the process; another name may be a kernel declared later, and is left to
    the build."""
    if not node.args:
        parser.error(node, "T.call_extern needs the kernel name first",
                     "T.call_extern(\"name\", A, B, n)")
    name = parser.visit(node.args[0], "Texpr")
    if not isinstance(name, str):
        parser.error(node.args[0], "the first argument of T.call_extern must be the kernel "
                                   "name, a string", "T.call_extern(\"name\", A, B, n)")
    dtype = "void" if isinstance(get_global_func(name, allow_missing=True), ExternKernel) \
        else "int32"
    for kw in node.keywords:
        if kw.arg != "dtype":
            parser.error(kw.value, f"T.call_extern has no argument {kw.arg!r}", "dtype=...")
        void = isinstance(kw.value, ast.Constant) and kw.value.value == "void"
        dtype = "void" if void else dtype_arg(parser, kw.value)
    args = [StringImm(name)]
    for a in node.args[1:]:
        value = parser.visit(a, "Texpr")
        args.append(value if isinstance(value, Buffer) else to_expr(parser, a, value))
    call = Call(dtype, "call_extern", tuple(args))
    check_extern_call(parser.state["prim"].name, call,
                      parser.state.setdefault("process_functions", set()), unknown_ok=True)
    return call
