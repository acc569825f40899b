"""The ``T.*`` names the tensor-level parser knows: the expression builtins, and for every
name, where it may be written (the hint shown when it appears somewhere else)."""

from pyir.ir import INTRINSICS, Binary, Cast

from .tensor_expr import call_args, call_extern, dtype_arg, intrinsic, select, to_expr, unify


def _cast(parser, node):
    if node.keywords or len(node.args) != 2:
        parser.error(node, "T.cast takes a value and a dtype", "T.cast(x, \"float32\")")
    value = to_expr(parser, node.args[0], parser.visit(node.args[0], "Texpr"))
    return Cast(dtype_arg(parser, node.args[1]), value)


def _if_then_else(parser, node):
    call_args(parser, node, 3, "if_then_else")
    return select(parser, node, *node.args)


def _min_max(op):
    def build(parser, node):
        a, b = call_args(parser, node, 2, op)
        a, b = unify(parser, node, a, b, node.args[0], node.args[1])
        if a.dtype == "bool":
            parser.error(node, f"T.{op} needs numbers, not bool")
        return Binary(op, a, b)
    return build


def _intrinsic(name):
    return lambda parser, node: intrinsic(parser, node, name)


#: T.<name>(...) usable inside expressions: name -> handler(parser, call_node).
EXPRESSIONS = {
    "cast": _cast,
    "if_then_else": _if_then_else,
    "max": _min_max("max"),
    "min": _min_max("min"),
    "call_extern": call_extern,
    **{name: _intrinsic(name) for name in INTRINSICS},
}

_LOOP = "in a for statement: for i in T.{}(extent) or T.{}(start, stop, annotations={{...}})"

#: Every T.<name> the parser knows (dtypes aside) -> where it may be written.
KNOWN_NAMES = {
    "prim_func": "@T.prim_func as a decorator",
    "Buffer": "a parameter annotation: A: T.Buffer((\"n\", 16), \"float32\")",
    "handle": "a parameter annotation h: T.handle, matched by A = T.match_buffer(h, ...)",
    "grid": "in a for statement: for i, j in T.grid(n, m)",
    "serial": _LOOP.format("serial", "serial"),
    "parallel": _LOOP.format("parallel", "parallel"),
    "vectorized": _LOOP.format("vectorized", "vectorized"),
    "unroll": _LOOP.format("unroll", "unroll"),
    "block": "with T.block(\"name\"):",
    "init": "with T.init(): directly inside a with T.block(...)",
    "axis.spatial": "vi = T.axis.spatial(extent, binding) directly inside a with T.block(...)",
    "axis.reduce": "vk = T.axis.reduce(extent, binding) directly inside a with T.block(...)",
    "axis.remap": "vi, vj = T.axis.remap(\"SS\", [i, j]) directly inside a with T.block(...)",
    "where": "T.where(condition) as a statement directly inside a with T.block(...)",
    "reads": "T.reads(A[vi, 0:16], ...) as a statement directly inside a with T.block(...)",
    "writes": "T.writes(B[vi], ...) as a statement directly inside a with T.block(...)",
    "block_attr": "T.block_attr({\"key\": value}) directly inside a with T.block(...)",
    "func_attr": "T.func_attr({\"key\": value}) at the top of a prim function",
    "alloc_buffer": "X = T.alloc_buffer(shape, \"float32\", scope=\"global\") as a statement, "
                    "or with T.alloc_buffer(...) as X:",
    "let": "with T.let(value) as x: (a scalar bound for the with body only)",
    "match_buffer": "A = T.match_buffer(h, shape, \"float32\") at the top of a prim function",
    "evaluate": "T.evaluate(expression) as a statement",
    **{name: f"T.{name}(...) in an expression" for name in EXPRESSIONS},
}
