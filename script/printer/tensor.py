"""Printing the tensor level: PrimFunc, statements and scalar expressions as ``T`` script.

The text is what `pyir.script.parser.tensor` reads back to the same IR: non-constant
buffer dimensions of parameters are strings (``"n"``), perfectly nested serial loops from
0 print as one ``T.grid``, block iterators bound to their loops print as ``T.axis.remap``,
and literals carry their dtype unless Python's own literal means the same thing.
"""

import math

from pyir import arith
from pyir.errors import Error
from pyir.ir import (Allocate, Binary, BlockRealize, Buffer, BufferLoad, BufferStore, Call, Cast,
                     Evaluate, FloatImm, For, IfThenElse, IntImm, LetStmt, Not, PrimExpr, PrimFunc,
                     Select, SeqStmt, StringImm, Var)
from pyir.ir import dtype as dt
from pyir.ir.node import walk

from .core import (PREC_ADD, PREC_AND, PREC_ATOM, PREC_CMP, PREC_MUL, PREC_NOT, PREC_OR,
                   PREC_UNARY, prints, python_string)

_SYMBOLS = {"add": ("+", PREC_ADD), "sub": ("-", PREC_ADD), "mul": ("*", PREC_MUL),
            "div": ("/", PREC_MUL), "floordiv": ("//", PREC_MUL), "floormod": ("%", PREC_MUL),
            "eq": ("==", PREC_CMP), "ne": ("!=", PREC_CMP), "lt": ("<", PREC_CMP),
            "le": ("<=", PREC_CMP), "gt": (">", PREC_CMP), "ge": (">=", PREC_CMP),
            "and": ("and", PREC_AND), "or": ("or", PREC_OR)}
_MAX_LINE = 100


def _attr_value(p, value):
    """Python text of an annotation value: a plain constant, an expression, or a tuple of
    them. IR literals carry their dtype so that they do not read back as Python numbers."""
    if isinstance(value, str):
        return python_string(value)
    if isinstance(value, tuple):
        items = ", ".join(_attr_value(p, v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, (IntImm, FloatImm)):
        return f"T.{value.dtype}({value.value!r})" if value.dtype != "bool" \
            else f"T.bool({bool(value.value)})"
    if isinstance(value, PrimExpr):
        return p.expr(value)
    raise Error(f"cannot print annotation value {value!r}; annotations hold plain constants "
                "and expressions")


def _dict(p, pairs):
    return "{" + ", ".join(f"{python_string(k)}: {_attr_value(p, v)}" for k, v in pairs) + "}"


def _loops(p):
    return p.state.setdefault("tensor_loops", {})


# ---------------------------------------------------------------- functions
@prints(PrimFunc)
def print_prim_func(p, func):
    p.dialects.add("T")
    with p.scope():
        shape_vars = []
        for buf in func.buffer_params:
            for n in walk(buf):
                if isinstance(n, Var) and n not in shape_vars:
                    shape_vars.append(n)
        for v in shape_vars:
            p.define(v, v.name)
        params = [_param(p, prm, shape_vars) for prm in func.params]
        head = p.function_head("@T.prim_func", func.name)
        one_line = head + ", ".join(params) + "):"
        if len("    " * p.depth + one_line) <= _MAX_LINE or len(params) < 2:
            p.line(one_line)
        else:
            p.line(head + params[0] + ",")
            pad = " " * len(head)
            for k, text in enumerate(params[1:], 1):
                p.line(pad + text + ("):" if k == len(params) - 1 else ","))
        with p.indent():
            # A shape variable only the declared shapes of a flattened function still hold
            # ((0, n) flattens to (0,)) is declared as such.
            declared = [n for shape in func.attr("param_shapes") or () for d in shape
                        for n in walk(d) if isinstance(n, Var)]
            for v in dict.fromkeys(declared):
                if v not in shape_vars and v not in func.params:
                    p.line(f"{p.define(v, v.name)} = T.int64()")
            if func.attrs:
                p.line(f"T.func_attr({_dict(p, func.attrs)})")
            p.print(func.body)


def _param(p, prm, shape_vars):
    if isinstance(prm, Buffer):
        dims = [str(d.value) if isinstance(d, IntImm) else python_string(p.expr(d))
                for d in prm.shape]
        scope = "" if prm.scope == "global" else f", scope={python_string(prm.scope)}"
        dtype = python_string(prm.dtype)
        return f"{p.define(prm, prm.name)}: T.Buffer({_tuple(dims)}, {dtype}{scope})"
    name = p.names[id(prm)] if prm in shape_vars else p.define(prm, prm.name)
    return f"{name}: T.{prm.dtype}"


def _tuple(items):
    return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"


# ---------------------------------------------------------------- statements
@prints(SeqStmt)
def _seq(p, s):
    if not s.stmts:
        p.line("pass")
        return None
    for item in s.stmts[:-1]:
        if isinstance(item, (LetStmt, Allocate)):
            _scoped(p, item)  # statements after it are outside its scope
        else:
            p.print(item)
    return s.stmts[-1]


def _scoped(p, s):
    """``with T.let(value) as x:`` / ``with T.alloc_buffer(...) as X:``: a let or
    allocation whose scope ends before the statements that follow it."""
    with p.scope():
        if isinstance(s, LetStmt):
            value = p.expr(s.value)
            p.line(f"with T.let({value}) as {p.define(s.var, s.var.name)}:")
        else:
            name = p.define(s.buffer, s.buffer.name)
            p.line(f"with {_alloc_call(p, s.buffer)} as {name}:")
        with p.indent():
            p.print(s.body)


def _simple_loop(loop):
    return (isinstance(loop, For) and loop.kind == "serial" and not loop.annotations
            and isinstance(loop.start, IntImm) and loop.start.value == 0)


@prints(For)
def _for(p, loop):
    chain = [loop]
    while _simple_loop(chain[-1]) and _simple_loop(chain[-1].body) and not any(
            n is c.loop_var for c in chain for n in walk(chain[-1].body.extent)):
        chain.append(chain[-1].body)
    if len(chain) > 1:
        header = f"T.grid({', '.join(p.expr(c.extent) for c in chain)})"
    else:
        header = _loop_call(p, loop)
    with p.scope():
        names = ", ".join(p.define(c.loop_var, c.loop_var.name) for c in chain)
        p.line(f"for {names} in {header}:")
        loops = _loops(p)
        for c in chain:
            loops[id(c.loop_var)] = c
        with p.indent():
            p.print(chain[-1].body)


def _loop_call(p, loop):
    func = "range" if loop.kind == "serial" and not loop.annotations else f"T.{loop.kind}"
    if isinstance(loop.start, IntImm) and loop.start.value == 0:
        args = [p.expr(loop.extent)]
    else:
        args = [p.expr(loop.start), p.expr(arith.simplify(loop.start + loop.extent))]
    if loop.annotations:
        args.append(f"annotations={_dict(p, loop.annotations)}")
    return f"{func}({', '.join(args)})"


@prints(BlockRealize)
def _block_realize(p, realize):
    block = realize.block
    p.line(f"with T.block({python_string(block.name)}):")
    outer_depth = p.state.get("tensor_block_depth")
    with p.indent(), p.scope():
        p.state["tensor_block_depth"] = p.depth
        _iterators(p, realize)
        if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
            p.line(f"T.where({p.expr(realize.predicate)})")
        p.line(f"T.reads({', '.join(_region(p, r) for r in block.reads)})")
        p.line(f"T.writes({', '.join(_region(p, r) for r in block.writes)})")
        if block.annotations:
            p.line(f"T.block_attr({_dict(p, block.annotations)})")
        for buf in block.alloc_buffers:
            p.line(_alloc_text(p, buf))
        if block.init is not None:
            p.line("with T.init():")
            with p.indent(), p.scope():
                p.print(block.init)
        p.print(block.body)
    p.state["tensor_block_depth"] = outer_depth


def _iterators(p, realize):
    ivs = realize.block.iter_vars
    loops = _loops(p)
    remap = bool(ivs) and all(
        isinstance(v, Var) and id(v) in loops and _simple_start(loops[id(v)])
        and loops[id(v)].extent == iv.extent for iv, v in zip(ivs, realize.iter_values))
    if remap:
        bound = ", ".join(p.expr(v) for v in realize.iter_values)
        names = ", ".join(p.define(iv.var, iv.var.name) for iv in ivs)
        kinds = "".join(iv.kind for iv in ivs)
        p.line(f"{names} = T.axis.remap({python_string(kinds)}, [{bound}])")
        return
    for iv, value in zip(ivs, realize.iter_values):
        kind = "spatial" if iv.kind == "S" else "reduce"
        args = f"{p.expr(iv.extent)}, {p.expr(value)}"
        p.line(f"{p.define(iv.var, iv.var.name)} = T.axis.{kind}({args})")


def _simple_start(loop):
    return isinstance(loop.start, IntImm) and loop.start.value == 0


def _region(p, region):
    parts = []
    for r in region.region:
        if isinstance(r.extent, IntImm) and r.extent.value == 1:
            parts.append(p.expr(r.start))
        else:
            parts.append(f"{p.expr(r.start)}:{p.expr(arith.simplify(r.start + r.extent))}")
    return f"{p.name(region.buffer)}[{', '.join(parts) if parts else '()'}]"


def _alloc_call(p, buf):
    dims = _tuple([p.expr(d) for d in buf.shape]) if buf.shape else "()"
    scope = "" if buf.scope == "global" else f", scope={python_string(buf.scope)}"
    return f"T.alloc_buffer({dims}, {python_string(buf.dtype)}{scope})"


def _alloc_text(p, buf):
    call = _alloc_call(p, buf)
    return f"{p.define(buf, buf.name)} = {call}"


@prints(Allocate)
def _allocate(p, s):
    if p.state.get("tensor_block_depth") == p.depth:
        _scoped(p, s)  # X = T.alloc_buffer(...) here would allocate for the whole block
        return
    p.line(_alloc_text(p, s.buffer))
    return s.body


@prints(BufferStore)
def _store(p, s):
    p.line(f"{_load_text(p, s.buffer, s.indices)} = {p.expr(s.value)}")


@prints(IfThenElse)
def _if(p, s, keyword="if"):
    p.line(f"{keyword} {p.expr(s.condition)}:")
    with p.indent(), p.scope():
        p.print(s.then_case)
    if s.else_case is None:
        return
    if isinstance(s.else_case, IfThenElse):
        _if(p, s.else_case, "elif")
        return
    p.line("else:")
    with p.indent(), p.scope():
        p.print(s.else_case)


@prints(LetStmt)
def _let(p, s):
    value = p.expr(s.value)
    p.line(f"{p.define(s.var, s.var.name)} = {value}")
    return s.body


@prints(Evaluate)
def _evaluate(p, s):
    if isinstance(s.value, Call) and s.value.op == "call_extern":
        p.line(p.expr(s.value))
    else:
        p.line(f"T.evaluate({p.expr(s.value)})")


# ---------------------------------------------------------------- expressions
@prints(Var, Buffer)
def _var(p, v):
    return p.name(v), PREC_ATOM


@prints(IntImm, FloatImm)
def _imm(p, e):
    return _literal(e, "normal")


def _literal(e, mode):
    """Text of a literal. ``mode`` "normal": bare for bools and int64, else
    ``T.<dtype>(value)``; "bare": a Python number (the context gives the dtype); "typed":
    always ``T.<dtype>(value)``."""
    if e.dtype == "bool":
        text = "True" if e.value else "False"
        return (f"T.bool({text})" if mode == "typed" else text), PREC_ATOM
    if isinstance(e, FloatImm) and not math.isfinite(e.value):
        return f"T.{e.dtype}({python_string(repr(e.value))})", PREC_ATOM
    if mode == "typed" or (mode == "normal" and e.dtype != dt.INDEX):
        return f"T.{e.dtype}({e.value!r})", PREC_ATOM
    return repr(e.value), (PREC_UNARY if str(e.value)[0] == "-" else PREC_ATOM)


def _is_literal(e):
    return isinstance(e, (IntImm, FloatImm))


@prints(StringImm)
def _string(p, e):
    return python_string(e.value), PREC_ATOM


@prints(Binary)
def _binary(p, e):
    if e.op in ("min", "max"):
        return f"T.{e.op}({p.expr(e.a)}, {p.expr(e.b)})", PREC_ATOM
    symbol, own = _SYMBOLS[e.op]
    left_prec = own + 1 if own == PREC_CMP else own
    left = _operand(p, e.a, e.b, left_prec, first=True)
    right = _operand(p, e.b, e.a, own + 1, first=False)
    return f"{left} {symbol} {right}", own


def _operand(p, x, other, prec, first):
    """An operand of a binary operator. A literal next to a non-literal takes its dtype
    from it when parsed, so it prints bare; of two literals the first is explicit (two
    Python numbers, or bools, would be folded)."""
    if _is_literal(x):
        text, own = _literal(x, "typed" if first and _is_literal(other) else "bare")
        return f"({text})" if own < prec else text
    return p.expr(x, prec)


@prints(Not)
def _not(p, e):
    return f"not {p.expr(e.a, PREC_NOT)}", PREC_NOT


@prints(Cast)
def _cast(p, e):
    return f"T.cast({p.expr(e.value)}, {python_string(e.dtype)})", PREC_ATOM


@prints(Select)
def _select(p, e):
    args = ", ".join(p.expr(x) for x in (e.cond, e.true_value, e.false_value))
    return f"T.if_then_else({args})", PREC_ATOM


@prints(Call)
def _call(p, e):
    args = [p.expr(a) for a in e.args]
    if e.op == "call_extern" and e.dtype != "int32":
        args.append(f"dtype={python_string(e.dtype)}")
    return f"T.{e.op}({', '.join(args)})", PREC_ATOM


@prints(BufferLoad)
def _load(p, e):
    return _load_text(p, e.buffer, e.indices), PREC_ATOM


def _load_text(p, buf, indices):
    inside = ", ".join(p.expr(i) for i in indices) if indices else "()"
    return f"{p.name(buf)}[{inside}]"
