"""Parsing graph functions (``@R.function``): parameters with struct info, dataflow blocks,
bindings, calls of prim functions and packed functions, high-level operators, return.

Statement handlers (dialect ``"R"``) return a binding or a DataflowBlock; expression
handlers (``"Rexpr"``) return a graph expression whose struct info is inferred on the spot
(`pyir.ir.ops.struct_info_of`), so shape mistakes are reported at the line that makes them.
Names live in ``parser.scopes``: graph variables and int64 shape variables share one
namespace per function.

A call of a prim function (``R.call_tir``, or ``R.call_dps_packed`` of a kernel declared with
``pyir.ffi.extern``) is matched with the callee's parameters by `check_calls` once the module
is complete (the callee may be defined below the caller), with the build's own rule
(`pyir.codegen.abi.match_params`); a mismatch is reported at the call.
"""

import ast
import math

from pyir.codegen.abi import match_params, param_infos, with_dims
from pyir.ffi import ExternKernel, get_global_func
from pyir.ir import (BindingBlock, CallDPSPacked, CallPacked, CallTIR, DataflowBlock,
                     DataflowVar, Function, GraphVar, IntImm, MatchCast, ObjectStructInfo,
                     PrimStructInfo, PrimValue, SeqExpr, ShapeExpr, ShapeStructInfo,
                     TensorStructInfo, Tuple, TupleGetItem, TupleStructInfo, Var, VarBinding,
                     const, convert, walk)
from pyir.ir import dtype as dt
from pyir.ir.ops import OPS, check_castable, check_compatible, make_op_call, struct_info_of

from .core import register
from .shape import parse_dim, parse_shape_expr
from .tensor_expr import check_float_range, check_range, overflowing_literal

SINFO_HINT = "R.Tensor(shape, dtype), R.Tensor(ndim=..., dtype=...), R.Tuple(...), " \
             "R.Shape([...]), R.Prim(dtype) or R.Object"


class _FunctionState:
    """What the parser knows about the graph function being parsed."""

    def __init__(self, frame):
        self.frame = frame      # the function's scope frame (shape vars live here)
        self.dataflow = None    # the open dataflow block: {"outputs", "bound"}
        self.retired = {}       # name -> line of the dataflow block that kept it local


def _state(parser):
    return parser.state["graph"]


# ---------------------------------------------------------------- function
def parse_function(parser, node, name=None):
    """A `pyir.ir.Function` from an ``@R.function`` definition, named ``name`` (default: as
    the ``def``)."""
    name = name or node.name
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        parser.error(node, f"graph function {name!r} may only have plain parameters",
                     "def f(x: R.Tensor(...), ...)")
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        parser.error(body[-1] if body else node,
                     f"graph function {name!r} must end with a return of its result",
                     "return x  or  return (a, b)")
    seen = set()
    for a in args.args:
        if a.arg in seen:
            parser.error(a, f"parameter {a.arg!r} is defined twice")
        seen.add(a.arg)
    with parser.scopes.frame() as frame:
        parser.state["graph"] = _FunctionState(frame)
        params = [_param(parser, a) for a in args.args]
        blocks, pending = [], []
        for stmt in body[:-1]:
            result = parser.visit(stmt, "R")
            if isinstance(result, DataflowBlock):
                blocks += [BindingBlock(tuple(pending))] if pending else []
                blocks.append(result)
                pending = []
            else:
                pending.append(result)
        blocks += [BindingBlock(tuple(pending))] if pending else []
        result = parser.visit(body[-1].value, "Rexpr")
        with parser.span(body[-1].value):
            inferred = struct_info_of(result)
        ret = inferred
        if node.returns is not None:
            ret = parse_sinfo(parser, node.returns, _resolve_existing)
            with parser.span(node.returns):
                check_compatible(ret, inferred)
    return Function(name, tuple(params), SeqExpr(tuple(blocks), result), ret)


def _param(parser, arg):
    if arg.annotation is None:
        parser.error(arg, f"parameter {arg.arg!r} needs a struct info annotation", SINFO_HINT)
    sinfo = parse_sinfo(parser, arg.annotation, _resolve_declare)
    _check_free(parser, arg, arg.arg)
    var = GraphVar(arg.arg, sinfo)
    parser.scopes.define(arg.arg, var)
    return var


# ---------------------------------------------------------------- shape variables
def _resolve_existing(parser, name, node):
    """A name in a shape: an existing shape variable or a plain Python integer."""
    found, value = parser.scopes.lookup(name)
    if found and isinstance(value, Var):
        return value
    if found:
        parser.error(node, f"{name} is a graph variable, not a shape variable")
    found, value, plain = parser.python.lookup(name)
    if found and plain and isinstance(value, int) and not isinstance(value, bool):
        return const(value, dt.INDEX)
    parser.error(node, f"undefined shape variable {name!r}",
                 "a shape variable declared by a string in a parameter annotation (\"n\") or "
                 "in R.match_cast")


def _resolve_declare(parser, name, node):
    """A name in a string of a parameter or match_cast annotation: the shape variable of
    that name, declared for the whole function on first sight."""
    found, value = parser.scopes.lookup(name)
    if found:
        return _resolve_existing(parser, name, node)
    var = Var(name, dt.INDEX)
    _state(parser).frame[name] = var
    return var


def _dims(parser, node, resolve):
    if not isinstance(node, (ast.Tuple, ast.List)):
        parser.error(node, "a shape must be a tuple of dimensions", "(n, 4) or (\"n\", 4)")

    def in_code(name, n):
        return _resolve_existing(parser, name, n)

    def in_string(name, n):
        return resolve(parser, name, n)
    dims = tuple(parse_dim(parser, d, in_code, in_string) for d in node.elts)
    for d, value in zip(node.elts, dims):
        if isinstance(value, IntImm) and value.value < 0:
            parser.error(d, f"a dimension cannot be negative ({value.value})")
    return dims


# ---------------------------------------------------------------- struct info
def parse_sinfo(parser, node, resolve):
    """Struct info from an annotation; ``resolve`` decides what names in strings mean."""
    target = node.func if isinstance(node, ast.Call) else node
    name = parser.dialect_of(target)
    if name == ("R", "Object"):
        if isinstance(node, ast.Call):
            parser.error(node, "R.Object takes no arguments", "R.Object")
        return ObjectStructInfo()
    if not isinstance(node, ast.Call) or name not in _SINFO:
        parser.error(node, "expected a struct info annotation", SINFO_HINT)
    with parser.span(node):
        return _SINFO[name](parser, node, resolve)


def _tensor_sinfo(parser, node, resolve):
    args = _call_args(parser, node, "R.Tensor", ("shape", "dtype", "ndim"))
    shape = args.get("shape")
    if isinstance(shape, ast.Constant) and isinstance(shape.value, str) and "dtype" not in args:
        args["dtype"], shape = shape, None  # R.Tensor("float32", ndim=2)
    if "dtype" not in args:
        parser.error(node, "R.Tensor needs a dtype", "R.Tensor((n, 4), \"float32\")")
    dtype = _dtype(parser, args["dtype"])
    ndim = _ndim(parser, args)
    if shape is None or (isinstance(shape, ast.Constant) and shape.value is None):
        return TensorStructInfo(None, dtype, ndim)
    dims = _dims(parser, shape, resolve)
    _same_ndim(parser, node, ndim, dims)
    return TensorStructInfo(dims, dtype)


def _ndim(parser, args):
    """The ``ndim=`` of an R.Tensor or R.Shape annotation, -1 when absent."""
    ndim = _plain(parser, args["ndim"], "ndim") if "ndim" in args else -1
    if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < -1:
        parser.error(args["ndim"], f"ndim must be a non-negative integer, not {ndim!r}")
    return ndim


def _same_ndim(parser, node, ndim, dims):
    if ndim not in (-1, len(dims)):
        parser.error(node, f"ndim={ndim} but the shape has {len(dims)} dimension(s)")


def _tuple_sinfo(parser, node, resolve):
    if node.keywords:
        parser.error(node.keywords[0], "R.Tuple takes only struct infos",
                     "R.Tuple(R.Tensor(...), ...)")
    return TupleStructInfo(tuple(parse_sinfo(parser, a, resolve) for a in node.args))


def _shape_sinfo(parser, node, resolve):
    args = _call_args(parser, node, "R.Shape", ("values", "ndim"))
    ndim = _ndim(parser, args)
    values = args.get("values")
    if values is None or (isinstance(values, ast.Constant) and values.value is None):
        return ShapeStructInfo(None, ndim)
    dims = _dims(parser, values, resolve)
    _same_ndim(parser, node, ndim, dims)
    return ShapeStructInfo(dims)


def _prim_sinfo(parser, node, resolve):
    args = _call_args(parser, node, "R.Prim", ("dtype",))
    if "dtype" not in args:
        parser.error(node, "R.Prim needs a dtype", "R.Prim(\"float32\")")
    return PrimStructInfo(_dtype(parser, args["dtype"]))


_SINFO = {("R", "Tensor"): _tensor_sinfo, ("R", "Tuple"): _tuple_sinfo,
          ("R", "Shape"): _shape_sinfo, ("R", "Prim"): _prim_sinfo}


def _out_sinfo(parser, node, what):
    """``R.Tensor(...)`` or a list of them, as a tuple of TensorStructInfo."""
    items = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
    out = []
    for item in items:
        sinfo = parse_sinfo(parser, item, _resolve_existing)
        if not isinstance(sinfo, TensorStructInfo):
            parser.error(item, f"{what}: out_sinfo must be R.Tensor(...) or a list of them")
        out.append(sinfo)
    if not out:
        parser.error(node, f"{what}: out_sinfo lists no outputs")
    return tuple(out)


# ---------------------------------------------------------------- small helpers
def _call_args(parser, node, what, params):
    """Map a call's positional and keyword arguments to ``params`` -> ast node."""
    if len(node.args) > len(params):
        parser.error(node.args[len(params)], f"{what} takes at most {len(params)} positional "
                                             f"argument(s): {', '.join(params)}")
    out = dict(zip(params, node.args))
    for kw in node.keywords:
        if kw.arg not in params:
            parser.error(kw, f"{what} has no argument {kw.arg!r}; it takes {', '.join(params)}")
        if kw.arg in out:
            parser.error(kw, f"{what} got argument {kw.arg!r} twice")
        out[kw.arg] = kw.value
    return out


def _plain(parser, node, what):
    """A plain constant (number, string, bool, None, tuple of them) written at ``node``."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, float) and math.isinf(node.value):
            overflowing_literal(parser, node, 'float("inf")')
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _plain(parser, node.operand, what)   # -1, -AXIS
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_plain(parser, e, what) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "float" and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], ast.Constant) \
            and node.args[0].value in ("inf", "-inf", "nan"):
        return float(node.args[0].value)   # as printed for values without a literal
    if isinstance(node, ast.Name) and not parser.scopes.lookup(node.id)[0]:
        found, value, plain = parser.python.lookup(node.id)
        if found and plain:
            return value
    parser.error(node, f"{what} must be a constant")


def _dtype(parser, node):
    value = _plain(parser, node, "dtype")
    if not isinstance(value, str) or value not in dt.DTYPES:
        parser.error(node, f"unknown dtype {value!r}", f"one of {', '.join(dt.DTYPES)}")
    return value


def _is_r_call(parser, node, name):
    return isinstance(node, ast.Call) and parser.dialect_of(node.func) == ("R", name)


# ---------------------------------------------------------------- statements
def _bind(parser, target, make_var_and_binding):
    """Define the name of assignment ``target``; ``make_var_and_binding(cls)`` builds the
    binding for variable class ``cls`` (DataflowVar inside a dataflow block unless the
    name is listed in R.output)."""
    state = _state(parser)
    if not isinstance(target, ast.Name):
        parser.error(target, "a binding assigns exactly one name", "x = R.add(a, b)")
    name = target.id
    _check_free(parser, target, name)
    block = state.dataflow
    cls = GraphVar
    if block is not None:
        if name in block["bound"]:
            parser.error(target, f"{name!r} is already bound in this dataflow block (line "
                                 f"{block['bound'][name]}); a dataflow block binds each name "
                                 "once", "a new name")
        block["bound"][name] = target.lineno
        if name not in block["outputs"]:
            cls = DataflowVar
    binding = make_var_and_binding(cls)
    parser.scopes.define(name, binding.var)
    state.retired.pop(name, None)
    return binding


def _check_free(parser, node, name):
    found, value = parser.scopes.lookup(name)
    if found and isinstance(value, Var):
        parser.error(node, f"{name!r} is a shape variable of this function; choose another "
                           "name for the graph variable")


@register("R", ast.Assign)
def _assign(parser, node):
    if len(node.targets) != 1:
        parser.error(node, "a binding assigns exactly one name", "x = R.add(a, b)")
    if _is_r_call(parser, node.value, "match_cast"):
        return _match_cast(parser, node.targets[0], node.value)
    value = parser.visit(node.value, "Rexpr")
    with parser.span(node.value):
        sinfo = struct_info_of(value)
    return _bind(parser, node.targets[0],
                 lambda cls: VarBinding(cls(node.targets[0].id, sinfo), value))


@register("R", ast.AnnAssign)
def _ann_assign(parser, node):
    if node.value is None:
        parser.error(node, "an annotated binding needs a value", "x: R.Tensor(...) = value")
    if _is_r_call(parser, node.value, "match_cast"):
        parser.error(node.annotation, "R.match_cast gives its own struct info; drop the "
                                      "annotation")
    value = parser.visit(node.value, "Rexpr")
    annotated = parse_sinfo(parser, node.annotation, _resolve_existing)
    with parser.span(node.annotation):
        check_compatible(annotated, struct_info_of(value))
    return _bind(parser, node.target,
                 lambda cls: VarBinding(cls(node.target.id, annotated), value))


def _match_cast(parser, target, call):
    args = _call_args(parser, call, "R.match_cast", ("value", "struct_info"))
    if len(args) != 2:
        parser.error(call, "R.match_cast takes a value and a struct info",
                     "R.match_cast(x, R.Tensor((\"k\",), \"float32\"))")
    value = parser.visit(args["value"], "Rexpr")
    sinfo = parse_sinfo(parser, args["struct_info"], _resolve_declare)
    with parser.span(call):
        check_castable(sinfo, struct_info_of(value))
    return _bind(parser, target,
                 lambda cls: MatchCast(cls(target.id, sinfo), value, sinfo))


@register("R", ast.With)
def _with(parser, node):
    state = _state(parser)
    if len(node.items) != 1 or node.items[0].optional_vars is not None \
            or not _is_r_call(parser, node.items[0].context_expr, "dataflow") \
            or node.items[0].context_expr.args or node.items[0].context_expr.keywords:
        parser.error(node, "graph code supports only `with R.dataflow():`")
    if state.dataflow is not None:
        parser.error(node, "dataflow blocks do not nest")
    outs = [s for s in node.body
            if isinstance(s, ast.Expr) and _is_r_call(parser, s.value, "output")]
    last = node.body[-1]
    if outs and outs[-1] is not last:
        parser.error(outs[-1], "R.output(...) must be the last statement of the dataflow block")
    if not outs:
        parser.error(last, "a dataflow block must end with R.output(...) listing the "
                           "variables used after it", "R.output(a, b)")
    outputs = _outputs(parser, last.value)
    state.dataflow = {"outputs": outputs, "bound": {}}
    with parser.scopes.frame():
        bindings = tuple(parser.visit(stmt, "R") for stmt in node.body[:-1])
        exported = {}
        for name, arg in outputs.items():
            found, value = parser.scopes.lookup(name)
            if name not in state.dataflow["bound"]:
                parser.error(arg, f"R.output({name}): {name!r} is not bound in this dataflow "
                                  "block")
            exported[name] = value
    state.dataflow = None
    for b in bindings:
        if isinstance(b.var, DataflowVar):
            state.retired[b.var.name] = node.lineno
    for name, var in exported.items():
        parser.scopes.define(name, var)
    return DataflowBlock(bindings)


def _outputs(parser, call):
    if call.keywords:
        parser.error(call.keywords[0], "R.output takes variable names only")
    outputs = {}
    for arg in call.args:
        if not isinstance(arg, ast.Name):
            parser.error(arg, "R.output takes the names of variables bound in the block")
        if arg.id in outputs:
            parser.error(arg, f"{arg.id!r} is listed twice in R.output")
        outputs[arg.id] = arg
    return outputs


@register("R", ast.Expr)
def _expr_stmt(parser, node):
    if _is_r_call(parser, node.value, "output"):
        parser.error(node, "R.output(...) must be the last statement of a `with "
                           "R.dataflow():` block")
    parser.error(node, "the value of this expression would be lost; bind it to a name",
                 "_ = R.call_packed(...)")


@register("R", ast.Return)
def _return(parser, node):
    parser.error(node, "return must be the last statement of the graph function, after any "
                       "dataflow block")


# ---------------------------------------------------------------- expressions
@register("Rexpr", ast.Name)
def _name(parser, node):
    found, value = parser.scopes.lookup(node.id)
    if found and isinstance(value, GraphVar):
        return value
    if found:
        parser.error(node, f"{node.id!r} is a shape variable, not a graph value",
                     f"R.prim_value({node.id}) or R.shape([{node.id}])")
    retired = _state(parser).retired
    if node.id in retired:
        parser.error(node, f"{node.id!r} is a dataflow variable of the block at line "
                           f"{retired[node.id]} and is not visible after it",
                     "list it in that block's R.output(...) to use it here")
    found, value, plain = parser.python.lookup(node.id)
    if found and plain and isinstance(value, (int, float)):
        return PrimValue(convert(value))
    parser.error(node, f"undefined variable {node.id!r}",
                 "a parameter or a name bound earlier in the function")


@register("Rexpr", ast.Constant, ast.UnaryOp)
def _number(parser, node):
    if isinstance(node, ast.UnaryOp) and not isinstance(node.operand, ast.Constant):
        symbol = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not", ast.Invert: "~"}[type(node.op)]
        parser.error(node, f"Python's unary '{symbol}' of a graph value is not supported in "
                           "graph-level (R) code: operators are R.* calls",
                     "R.negative(x)" if isinstance(node.op, ast.USub) else "R.* calls")
    value = _plain(parser, node, "this value")
    if isinstance(value, float):
        check_float_range(parser, node, value, "float32")
    if isinstance(value, (int, float)):
        return PrimValue(convert(value))
    parser.error(node, f"{value!r} is not a graph value", "a variable, a number or an R.* call")


@register("Rexpr", ast.Tuple)
def _tuple(parser, node):
    return Tuple(tuple(parser.visit(e, "Rexpr") for e in node.elts))


@register("Rexpr", ast.Subscript)
def _getitem(parser, node):
    value = parser.visit(node.value, "Rexpr")
    index = _plain(parser, node.slice, "a tuple index")
    if not isinstance(index, int) or isinstance(index, bool):
        parser.error(node.slice, "a tuple index must be an integer constant")
    item = TupleGetItem(value, index)
    with parser.span(node):
        struct_info_of(item)
    return item


@register("Rexpr", ast.Call)
def _call(parser, node):
    name = parser.dialect_of(node.func)
    if name is None or name[0] != "R":
        parser.error(node.func, "graph code calls only R.* functions",
                     "R.call_tir, R.call_dps_packed, R.call_packed or an R operator")
    op = name[1]
    if op in _CALLS:
        call = _CALLS[op](parser, node)
    elif op in OPS:
        call = _op_call(parser, node, op)
    elif op in _MISPLACED:
        parser.error(node, _MISPLACED[op])
    else:
        parser.error(node.func, f"unknown graph-level name R.{op}",
                     "R.call_tir, R.call_dps_packed, R.call_packed, R.match_cast, R.shape, "
                     f"R.prim_value or an operator: {', '.join('R.' + o for o in sorted(OPS))}")
    with parser.span(node):
        struct_info_of(call)
    return call


def _op_call(parser, node, op):
    if any(isinstance(a, ast.Starred) for a in node.args):
        parser.error(node, f"R.{op} does not take *args")
    if any(kw.arg is None for kw in node.keywords):
        parser.error(node, f"R.{op} does not take **kwargs", "attributes by name: axis=1")
    known = [a[0] for a in OPS[op].attrs]
    for kw in node.keywords:
        if kw.arg not in known:
            parser.error(kw, f"R.{op} has no attribute {kw.arg!r} (its attributes: "
                             f"{', '.join(known) or 'none'}); its {OPS[op].arity} operand(s) "
                             "are passed by position", "R.sum(x, axis=1)")
    args = tuple(parser.visit(a, "Rexpr") for a in node.args)
    attrs = {kw.arg: _plain(parser, kw.value, f"attribute {kw.arg}") for kw in node.keywords}
    with parser.span(node):
        return make_op_call(op, args, attrs)


def _args_tuple(parser, node, what):
    if not isinstance(node, (ast.Tuple, ast.List)):
        parser.error(node, f"{what} takes its arguments as a tuple", "(x, w)  or  (x,)")
    return tuple(parser.visit(e, "Rexpr") for e in node.elts)


def _packed_name(parser, node, what):
    value = _plain(parser, node, f"the function name of {what}")
    if not isinstance(value, str) or not value:
        parser.error(node, f"{what} needs the registered function's name as a string")
    return value


def _call_tir(parser, node):
    args = _call_args(parser, node, "R.call_tir", ("func", "args", "out_sinfo"))
    for key in ("func", "args"):
        if key not in args:
            parser.error(node, f"R.call_tir needs {key}", "R.call_tir(cls.f, (x,), out_sinfo=...)")
    if "out_sinfo" not in args:
        parser.error(node, "R.call_tir needs out_sinfo, the struct info of its output(s)",
                     "out_sinfo=R.Tensor((n, m), \"float32\") or a list of R.Tensor")
    callee = _callee(parser, args["func"])
    call_args = _args_tuple(parser, args["args"], "R.call_tir")
    return _site(parser, node, CallTIR(callee, call_args,
                                       _out_sinfo(parser, args["out_sinfo"], "R.call_tir")))


def _callee(parser, node):
    """The GlobalVar of a prim function named as ``cls.f``, ``Module.f`` or ``f``."""
    owners = {"cls", parser.state.get("class_name")}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id in owners:
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    else:
        parser.error(node, "R.call_tir calls a prim function of the module",
                     "cls.f, Module.f or f")
    kinds = parser.state.get("global_kinds", {})
    if kinds.get(name) == "prim_func":
        return parser.state["globals"][name]
    if name in kinds:
        parser.error(node, f"R.call_tir calls prim functions, but {name!r} is a graph function")
    prims = [n for n, k in kinds.items() if k == "prim_func"]
    where = f"the module's prim functions are {', '.join(prims)}" if prims else \
        "the module has no prim functions"
    parser.error(node, f"R.call_tir: unknown prim function {name!r}; {where}",
                 "a @T.prim_func of the same @I.ir_module")


def _call_dps_packed(parser, node):
    args = _call_args(parser, node, "R.call_dps_packed", ("func", "args", "out_sinfo"))
    if "func" not in args or "args" not in args:
        parser.error(node, "R.call_dps_packed needs a function name and arguments",
                     "R.call_dps_packed(\"name\", (x,), out_sinfo=...)")
    if "out_sinfo" not in args:
        parser.error(node, "R.call_dps_packed needs out_sinfo, the struct info of its "
                           "output(s)", "out_sinfo=R.Tensor((n, m), \"float32\")")
    name = _packed_name(parser, args["func"], "R.call_dps_packed")
    call_args = _args_tuple(parser, args["args"], "R.call_dps_packed")
    return _site(parser, node, CallDPSPacked(
        name, call_args, _out_sinfo(parser, args["out_sinfo"], "R.call_dps_packed")))


def _site(parser, node, call):
    """``call``, remembered with its source ``node`` for `check_calls`."""
    parser.state.setdefault("calls", {})[id(call)] = (call, node)
    return call


def check_calls(parser, funcs):
    """Match each call remembered by `_site` in the graph functions of ``funcs`` (a complete
    module's functions by name) with the parameters of the prim function or extern kernel it
    calls, as the build will: a mismatch is reported at the call, in the build's words."""
    sites = parser.state.pop("calls", {})
    for func in funcs.values():
        if not isinstance(func, Function):
            continue
        values = [(b.var.name, b.value) for block in func.body.blocks for b in block.bindings]
        for binding, value in values + [("return", func.body.body)]:
            for call in walk(value):
                if id(call) in sites:
                    _check_call(parser, sites[id(call)][1], func.name, binding, call, funcs)


def _check_call(parser, node, func, binding, call, funcs):
    if isinstance(call, CallTIR):
        callee = funcs[call.func.name]
    else:
        kernel = get_global_func(call.name, allow_missing=True)
        if not isinstance(kernel, ExternKernel):
            return   # a Python function takes what it is given; an unknown name is the build's
        callee = kernel.prim
    sinfos = _passed(call, binding)
    if sinfos is not None:
        with parser.span(node):
            match_params(func, binding, callee.name, param_infos(callee), sinfos)


def _passed(call, binding):
    """The struct infos of the values ``call`` passes, flattened as the build passes them:
    its inputs, then its outputs. A tensor of unknown shape gets a new variable per dimension
    (its dtype and rank are checked here, its dimensions when it is built). None if a value
    is an object or a tensor of unknown rank: how it fits is known only when it is built."""
    out = []

    def add(sinfo, name):
        if isinstance(sinfo, TupleStructInfo):
            for k, field in enumerate(sinfo.fields):
                add(field, f"{name}[{k}]")
        elif isinstance(sinfo, TensorStructInfo) and sinfo.shape is None and sinfo.ndim >= 0:
            out.append(with_dims(sinfo, name))
        else:
            out.append(sinfo)

    for a in call.args:
        add(struct_info_of(a), a.name if isinstance(a, GraphVar) else binding)
    for sinfo in call.out_sinfo:
        add(sinfo, binding)
    if any(isinstance(s, ObjectStructInfo) or isinstance(s, TensorStructInfo) and s.ndim < 0
           for s in out):
        return None
    return out


def _call_packed(parser, node):
    if _state(parser).dataflow is not None:
        parser.error(node, "R.call_packed may have effects, so it is not allowed inside a "
                           "dataflow block", "move it before or after `with R.dataflow():`")
    if not node.args:
        parser.error(node, "R.call_packed needs the registered function's name")
    name = _packed_name(parser, node.args[0], "R.call_packed")
    sinfo = ObjectStructInfo()
    for kw in node.keywords:
        if kw.arg != "sinfo_args":
            parser.error(kw, f"R.call_packed has no argument {kw.arg!r}; it takes the name, "
                             "the arguments and sinfo_args")
        items = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]
        if len(items) != 1:
            parser.error(kw.value, "sinfo_args takes one struct info; use R.Tuple(...) for "
                                   "several results")
        sinfo = parse_sinfo(parser, items[0], _resolve_existing)
    args = tuple(parser.visit(a, "Rexpr") for a in node.args[1:])
    return CallPacked(name, args, sinfo)


def _shape(parser, node):
    if len(node.args) != 1 or node.keywords:
        parser.error(node, "R.shape takes one list of dimensions", "R.shape([n, 4])")
    return ShapeExpr(_dims(parser, node.args[0], _resolve_existing))


def _prim_value(parser, node):
    args = _call_args(parser, node, "R.prim_value", ("value", "dtype"))
    if "value" not in args:
        parser.error(node, "R.prim_value needs a value", "R.prim_value(n * 2)")
    if "dtype" in args:
        value = _plain(parser, args["value"], "the value of a typed R.prim_value")
        dtype = _dtype(parser, args["dtype"])
        return PrimValue(const(_typed_value(parser, args["value"], value, dtype), dtype))
    literal = args["value"]
    if isinstance(literal, ast.UnaryOp) and isinstance(literal.op, ast.USub):
        literal = literal.operand    # -1.5
    if isinstance(literal, ast.Constant) and isinstance(literal.value, float):
        value = _plain(parser, args["value"], "the value of R.prim_value")
        check_float_range(parser, args["value"], value, "float32")
        return PrimValue(convert(value))

    def resolve(name, n):
        return _resolve_existing(parser, name, n)
    return PrimValue(parse_shape_expr(parser, args["value"], resolve))


def _typed_value(parser, node, value, dtype):
    """``value`` checked to be a ``dtype`` value: a number, integral for an integer or bool
    dtype and within its range."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) and dtype != "bool":
        parser.error(node, f"R.prim_value(..., \"{dtype}\") needs a number, not {value!r}")
    if dt.is_float(dtype):
        check_float_range(parser, node, float(value), dtype)
        return value
    if isinstance(value, float) and not value.is_integer():
        parser.error(node, f"{value!r} is not a whole number, so it cannot be {dtype}")
    check_range(parser, node, int(value), dtype)
    return int(value)


_CALLS = {"call_tir": _call_tir, "call_dps_packed": _call_dps_packed,
          "call_packed": _call_packed, "shape": _shape, "prim_value": _prim_value}

_MISPLACED = {
    "match_cast": "R.match_cast must be the whole right side of a binding: "
                  "y = R.match_cast(x, R.Tensor(...))",
    "output": "R.output(...) must be the last statement of a `with R.dataflow():` block",
    "dataflow": "R.dataflow() opens a block: `with R.dataflow():`",
    "function": "@R.function decorates a definition; it is not a value",
    **{k: f"R.{k}(...) is a struct info annotation, not a value"
       for k in ("Tensor", "Tuple", "Shape", "Prim", "Object")},
}
