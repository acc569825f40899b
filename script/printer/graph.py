"""Printing graph functions as ``@R.function`` definitions that `parser.graph` reads back.

Shape variables are printed as strings where they are declared (parameter and return
annotations, the first R.match_cast that binds them) and as names everywhere else. A
binding carries an annotation only when its variable's struct info differs from what the
value infers to.
"""

import math

from pyir.errors import Error
from pyir.ir import (BindingBlock, CallDPSPacked, CallPacked, CallTIR, DataflowBlock,
                     DataflowVar, Function, GraphVar, MatchCast, ObjectStructInfo, OpCall,
                     PrimStructInfo, PrimValue, ShapeExpr, ShapeStructInfo, StructInfo,
                     TensorStructInfo, Tuple, TupleGetItem, TupleStructInfo, VarBinding,
                     FloatImm, IntImm)
from pyir.ir.graph import symbolic_vars
from pyir.ir.ops import OPS, struct_info_of

from .core import PREC_ATOM, prints, python_string
from .shape import shape_expr_text

LINE_WIDTH = 100


# ---------------------------------------------------------------- long lines
def _emit(p, prefix, call, suffix=""):
    """Write ``prefix + call + suffix``; when too long, break the top-level arguments of
    ``call`` (text ending in ``)``) over lines aligned after its opening parenthesis (or
    indented by two levels when that parenthesis is far to the right)."""
    width = LINE_WIDTH - 4 * p.depth
    if len(prefix + call + suffix) <= width or not call.endswith(")"):
        p.line(prefix + call + suffix)
        return
    open_ = call.index("(") + 1
    args = _split_arguments(call[open_:-1])
    pad = " " * (len(prefix) + open_)
    current = prefix + call[:open_] + args[0]
    if len(pad) > width // 2:  # a hanging indent instead of aligning far to the right
        p.line(prefix + call[:open_])
        pad = " " * 8
        current = pad + args[0]
    for arg in args[1:]:
        if len(f"{current}, {arg}") + 1 + len(suffix) > width:
            p.line(current + ",")
            current = pad + arg
        else:
            current = f"{current}, {arg}"
    p.line(current + ")" + suffix)


def _split_arguments(text):
    """The comma-separated items of ``text`` at bracket depth 0 (outside strings)."""
    items, depth, quote, start = [], 0, None, 0
    for k, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:k].strip())
            start = k + 1
    items.append(text[start:].strip())
    return items


# ---------------------------------------------------------------- struct info
def sinfo_text(p, sinfo, quote=None):
    """``R.Tensor((n, 4), "float32")`` and friends; dimensions for which ``quote(dim)`` is
    true are printed as strings (declarations)."""
    p.dialects.add("R")
    if isinstance(sinfo, TensorStructInfo):
        if sinfo.shape is None:
            ndim = f"ndim={sinfo.ndim}, " if sinfo.ndim != -1 else ""
            return f"R.Tensor({ndim}dtype=\"{sinfo.dtype}\")"
        return f"R.Tensor({_dims_text(p, sinfo.shape, quote, '(', ')')}, \"{sinfo.dtype}\")"
    if isinstance(sinfo, TupleStructInfo):
        return f"R.Tuple({', '.join(sinfo_text(p, f, quote) for f in sinfo.fields)})"
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is None:
            return f"R.Shape(ndim={sinfo.ndim})" if sinfo.ndim != -1 else "R.Shape()"
        return f"R.Shape({_dims_text(p, sinfo.values, quote, '[', ']')})"
    if isinstance(sinfo, PrimStructInfo):
        return f"R.Prim(\"{sinfo.dtype}\")"
    if isinstance(sinfo, ObjectStructInfo):
        return "R.Object"
    raise Error(f"the printer does not know struct info {type(sinfo).__name__}")


def _dims_text(p, dims, quote, open_, close):
    items = []
    for d in dims:
        text = shape_expr_text(p, d)
        items.append(f"\"{text}\"" if quote is not None and quote(d) else text)
    if open_ == "(" and len(items) == 1:
        return f"({items[0]},)"
    return open_ + ", ".join(items) + close


def _quote_symbolic(dim):
    return not isinstance(dim, IntImm)


@prints(StructInfo)
def print_sinfo(p, sinfo):
    return sinfo_text(p, sinfo), PREC_ATOM


# ---------------------------------------------------------------- function
@prints(Function)
def print_function(p, func):
    p.dialects.add("R")
    for param in func.params:
        for v in symbolic_vars(param.struct_info):
            p.name(v)
    params = [f"{p.define(x, x.name)}: {sinfo_text(p, x.struct_info, _quote_symbolic)}"
              for x in func.params]
    start = len(p.lines)
    with p.indent():
        for block in func.body.blocks:
            p.print(block)
        _emit(p, "return ", p.expr(func.body.body))
    body = p.lines[start:]
    del p.lines[start:]
    ret = sinfo_text(p, func.ret_struct_info, _quote_symbolic)
    head = p.function_head("@R.function", func.name)
    one_line = f"{head}{', '.join(params)}) -> {ret}:"
    if len("    " * p.depth + one_line) <= LINE_WIDTH or len(params) < 2:
        _emit(p, f"{head}{', '.join(params)}) -> ", ret, ":")
    else:
        pad = " " * len(head)
        p.line(f"{head}{params[0]},")
        for text in params[1:-1]:
            p.line(f"{pad}{text},")
        _emit(p, f"{pad}{params[-1]}) -> ", ret, ":")
    p.lines.extend(body)


@prints(DataflowBlock)
def print_dataflow_block(p, block):
    p.line("with R.dataflow():")
    with p.indent():
        for b in block.bindings:
            p.print(b)
        outs = [p.name(b.var) for b in block.bindings if not isinstance(b.var, DataflowVar)]
        p.line(f"R.output({', '.join(outs)})")


@prints(BindingBlock)
def print_binding_block(p, block):
    for b in block.bindings:
        p.print(b)


@prints(VarBinding)
def print_var_binding(p, b):
    value = p.expr(b.value)
    try:
        inferred = struct_info_of(b.value)
    except Error:  # ill-formed IR still prints, with its annotation
        inferred = None
    name = p.define(b.var, b.var.name)
    if inferred == b.var.struct_info:
        _emit(p, f"{name} = ", value)
    else:
        _emit(p, f"{name}: {sinfo_text(p, b.var.struct_info)} = ", value)


@prints(MatchCast)
def print_match_cast(p, b):
    value = p.expr(b.value)
    new = [v for v in symbolic_vars(b.struct_info) if not p.is_defined(v)]
    for v in new:
        p.define(v, v.name)

    def declares(dim):
        return any(v in new for v in symbolic_vars(dim))
    sinfo = sinfo_text(p, b.struct_info, declares)
    _emit(p, f"{p.define(b.var, b.var.name)} = ", f"R.match_cast({value}, {sinfo})")


# ---------------------------------------------------------------- expressions
@prints(GraphVar)
def print_var(p, var):
    return p.name(var), PREC_ATOM


@prints(Tuple)
def print_tuple(p, t):
    items = [p.expr(f) for f in t.fields]
    return (f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"), PREC_ATOM


@prints(TupleGetItem)
def print_getitem(p, g):
    return f"{p.expr(g.tuple_value, PREC_ATOM)}[{g.index}]", PREC_ATOM


@prints(ShapeExpr)
def print_shape_expr(p, s):
    p.dialects.add("R")
    return f"R.shape([{', '.join(shape_expr_text(p, v) for v in s.values)}])", PREC_ATOM


@prints(PrimValue)
def print_prim_value(p, v):
    p.dialects.add("R")
    value = v.value
    if isinstance(value, IntImm) and value.dtype == "bool":
        return str(bool(value.value)), PREC_ATOM
    if isinstance(value, FloatImm) and not math.isfinite(value.value):
        return f"R.prim_value(float(\"{value.value!r}\"), \"{value.dtype}\")", PREC_ATOM
    if isinstance(value, (IntImm, FloatImm)) and value.dtype in ("int64", "float32"):
        return repr(value.value), PREC_ATOM
    if isinstance(value, (IntImm, FloatImm)):
        return f"R.prim_value({value.value!r}, \"{value.dtype}\")", PREC_ATOM
    return f"R.prim_value({shape_expr_text(p, value)})", PREC_ATOM


def _args_text(p, args):
    items = [p.expr(a) for a in args]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _out_text(p, outs):
    items = [sinfo_text(p, s) for s in outs]
    return items[0] if len(items) == 1 else f"[{', '.join(items)}]"


@prints(CallTIR)
def print_call_tir(p, c):
    p.dialects.add("R")
    callee = p.def_name(c.func.name)
    callee = f"cls.{callee}" if p.module_name else callee
    return (f"R.call_tir({callee}, {_args_text(p, c.args)}, "
            f"out_sinfo={_out_text(p, c.out_sinfo)})"), PREC_ATOM


@prints(CallDPSPacked)
def print_call_dps_packed(p, c):
    p.dialects.add("R")
    return (f"R.call_dps_packed({python_string(c.name)}, {_args_text(p, c.args)}, "
            f"out_sinfo={_out_text(p, c.out_sinfo)})"), PREC_ATOM


@prints(CallPacked)
def print_call_packed(p, c):
    p.dialects.add("R")
    items = [python_string(c.name)] + [p.expr(a) for a in c.args]
    if not isinstance(c.sinfo, ObjectStructInfo):
        items.append(f"sinfo_args={sinfo_text(p, c.sinfo)}")
    return f"R.call_packed({', '.join(items)})", PREC_ATOM


@prints(OpCall)
def print_op_call(p, c):
    p.dialects.add("R")
    defaults = {key: default for key, default, _ in OPS[c.op].attrs}
    items = [p.expr(a) for a in c.args]
    items += [f"{k}={v!r}" for k, v in c.attrs if k not in defaults or defaults[k] != v]
    return f"R.{c.op}({', '.join(items)})", PREC_ATOM
