"""The tensor-level (T) dialect: ``@T.prim_func`` definitions -> `pyir.ir.PrimFunc`.

`parse_prim_func` declares the shape variables (strings in buffer shapes, ``n =
T.int64()``), reads the parameters (buffers, scalars, handles matched later by
``T.match_buffer``), then hands the body to `tensor_stmt`. Expressions are in
`tensor_expr`, read/write region inference in `pyir.transform.regions`.
"""

import ast

from pyir.ir import PrimFunc, Var
from pyir.ir import dtype as dt
from pyir.ir.node import walk

from .tensor_expr import Handle, check_dtype
from .tensor_stmt import FuncState, make_buffer, parse_body, string_expr


# ---------------------------------------------------------------- the function
def parse_prim_func(parser, node, name=None):
    """A PrimFunc from a ``def`` decorated with ``@T.prim_func``, named ``name`` (default:
    as the ``def``)."""
    name = name or node.name
    st = FuncState(name)
    parser.state["prim"] = st
    _check_signature(parser, node, name)
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body or (len(body) == 1 and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and body[0].value.value is Ellipsis):
        parser.error(node, f"prim function {name!r} has no body",
                     "loops, blocks and buffer stores (a body of ... declares an extern "
                     "kernel, see pyir.ffi.extern)")
    with parser.scopes.frame():
        _declare_shape_vars(parser, st, node.args.args, body)
        params = [_param(parser, st, a) for a in node.args.args]
        stmt = parse_body(parser, body)
    params = [_matched(parser, st, p, a) for p, a in zip(params, node.args.args)]
    _check_bound(parser, st, params, stmt)
    return PrimFunc(name, tuple(params), stmt, st.attrs)


def _check_signature(parser, node, name):
    a = node.args
    extra = a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults
    if extra:
        parser.error(node, f"prim function {name!r}: parameters must be plain "
                           "annotated names (no defaults, *args, keyword-only or / markers)",
                     "def f(A: T.Buffer((\"n\",), \"float32\"), x: T.float32)")
    if node.returns is not None and not (isinstance(node.returns, ast.Constant)
                                         and node.returns.value is None):
        parser.error(node.returns, "a prim function returns nothing; it writes its results "
                                   "into output buffers", "no return annotation, or -> None")


def _shape_node(parser, call):
    """The shape argument of ``T.Buffer(...)`` / ``T.match_buffer(h, ...)`` calls."""
    name = parser.dialect_of(call.func) if isinstance(call, ast.Call) else None
    position = {("T", "Buffer"): 0, ("T", "match_buffer"): 1, ("T", "alloc_buffer"): 0}
    if name not in position:
        return None
    if len(call.args) > position[name]:
        return call.args[position[name]]
    return next((k.value for k in call.keywords if k.arg == "shape"), None)


def _declare_shape_vars(parser, st, args, body):
    """Create the int64 shape variables named by strings in parameter shapes and
    ``T.match_buffer`` shapes, and by ``n = T.int64()`` at the top of the body."""
    def declare(name, where):
        if name not in st.shape_vars:
            st.shape_vars[name] = Var(name, dt.INDEX)
            st.shape_nodes[name] = where
            parser.scopes.define(name, st.shape_vars[name])

    shapes = [_shape_node(parser, a.annotation) for a in args]
    for stmt in body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            name = parser.dialect_of(stmt.value.func)
            if name is not None and name[0] == "T" and name[1] in dt.DTYPES \
                    and not stmt.value.args and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                declare(stmt.targets[0].id, stmt)
            shapes.append(_shape_node(parser, stmt.value) if name == ("T", "match_buffer")
                          else None)
    for shape in shapes:
        for sub in ast.walk(shape) if shape is not None else ():
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                for n in ast.walk(string_expr(parser, sub)):
                    if isinstance(n, ast.Name):
                        declare(n.id, sub)


def _param(parser, st, arg):
    ann = arg.annotation
    if ann is None:
        parser.error(arg, f"parameter {arg.arg!r} has no annotation",
                     f"{arg.arg}: T.Buffer(shape, dtype), {arg.arg}: T.float32, "
                     f"{arg.arg}: T.handle")
    found, _ = parser.scopes.lookup(arg.arg)
    if found and arg.arg not in st.shape_vars:
        parser.error(arg, f"parameter {arg.arg!r} is defined twice")
    name = parser.dialect_of(ann.func if isinstance(ann, ast.Call) else ann)
    if isinstance(ann, ast.Call) and name == ("T", "Buffer"):
        buf = make_buffer(parser, ann, arg.arg, ann.args, ann.keywords, "T.Buffer")
        parser.scopes.define(arg.arg, buf)
        return buf
    if name == ("T", "handle") and not isinstance(ann, ast.Call):
        st.handles[arg.arg] = None
        parser.scopes.define(arg.arg, Handle(arg.arg))
        return None
    if name is not None and name[0] == "T" and name[1] in dt.DTYPES \
            and not isinstance(ann, ast.Call):
        var = st.shape_vars.get(arg.arg)
        if var is not None and name[1] != dt.INDEX:
            parser.error(ann, f"{arg.arg} is a shape variable, so it is int64, not {name[1]}",
                         f"{arg.arg}: T.int64")
        if var is None:
            var = Var(arg.arg, name[1])
            parser.scopes.define(arg.arg, var)
        return var
    if name is not None and name[0] == "T" and name[1] not in ("Buffer", "handle"):
        check_dtype(parser, ann, name[1])
    parser.error(ann, f"parameter {arg.arg!r} has an unsupported annotation",
                 "T.Buffer(shape, dtype), a scalar type such as T.float32, or T.handle")


def _matched(parser, st, param, arg):
    if param is not None:
        return param
    buf = st.handles[arg.arg]
    if buf is None:
        parser.error(arg, f"handle {arg.arg!r} is never matched to a buffer",
                     f"A = T.match_buffer({arg.arg}, shape, dtype) at the top of the body")
    return buf


def _check_bound(parser, st, params, body):
    # The declared shapes of a flattened function bind its shape variables too, as they do
    # at the call (`pyir.codegen.abi.param_shapes`): (0, n) flattens to (0,).
    declared = [d for shape in dict(st.attrs).get("param_shapes") or () for d in shape]
    bound = {n for p in (*params, *declared) for n in walk(p) if isinstance(n, Var)}
    for name, var in st.shape_vars.items():
        if var not in bound and any(n is var for n in walk(body)):
            parser.error(st.shape_nodes[name], f"shape variable {name} is used in the body "
                                               "but appears in no parameter's shape",
                         f"a buffer parameter whose shape names {name}, or a parameter "
                         f"{name}: T.int64")
