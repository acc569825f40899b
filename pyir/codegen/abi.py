"""The native calling convention shared by codegen, the runtime and exported libraries.

Every compiled prim function ``f`` is an LLVM function ``i32 @"pyir.entry.f"(ptr %slots)``
(`entry_symbol`: a name no C library uses, so that the calls LLVM makes to ``log`` or
``free`` reach the C library's even in a module with a function of that name). ``slots``
is an array of 8-byte slots: one per parameter in order (a buffer's data pointer, or a
scalar's value stored in its own dtype at the slot's start, little-endian), then one int64
per shape variable in ``FuncInfo.shape_vars`` order. The return value is 0 on success,
``k > 0`` when entry condition ``k - 1`` failed (or, past the entry conditions, the
access check ``k - 1 - len(conditions)``), `STATUS_NO_MEMORY` when an allocation
failed, and `STATUS_EXTERN_FAILED` when a called kernel reported failure. A graph function
(`pyir.codegen.graph`) also returns `STATUS_CALLBACK_FAILED` and `STATUS_CALL_FAILED`.

`FuncInfo` describes one such function; it travels as JSON inside exported libraries, so
expressions in it (shapes, conditions) are kept in a small JSON form evaluated here.

Graph code calls such a function with the values of a binding (`match_params`): the
graph lowering (`pyir.transform.graph_plan`) when it compiles the call, and the parser
before, to report a call that cannot fit at the line that makes it.
"""

import json
from dataclasses import dataclass

from ..arith import simplify
from ..arith.canonical import wrap
from ..errors import ArgumentValueError, Error
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir.graph import PrimStructInfo, TensorStructInfo
from ..ir.node import substitute
from ..ir.ops import same_dim, show

STATUS_OK = 0
STATUS_NO_MEMORY = -1
STATUS_EXTERN_FAILED = -2
STATUS_CALLBACK_FAILED = -3
STATUS_CALL_FAILED = -4
SLOT_BYTES = 8

#: Name of the global constant (a NUL-terminated JSON string) in an exported library.
METADATA_SYMBOL = "__pyir_metadata"


def entry_symbol(name):
    """The native symbol of the entry of compiled function ``name`` (see the module
    docstring)."""
    return "pyir.entry." + name


@dataclass(frozen=True)
class ParamInfo:
    """One parameter: ``kind`` is "buffer", "scalar" or "shape" (a graph function's
    ``R.Shape``, whose values are shape variables'); ``shape`` holds int64 expressions over
    the function's shape variables (buffers and shapes); ``writes`` is True for a buffer the
    function may write (the runtime then refuses read-only arrays), ``written_by`` says why
    where a kernel it calls may write it rather than the function itself."""

    name: str
    kind: str
    dtype: str
    shape: tuple = ()
    writes: bool = False
    written_by: str = ""


def param_shapes(func):
    """One shape tuple per parameter of prim function ``func`` (``()`` for scalars), as
    declared by the user (once buffers are flattened, from the "param_shapes" attribute)."""
    recorded = func.attr("param_shapes")
    if recorded is not None:
        return recorded
    return tuple(p.shape if isinstance(p, E.Buffer) else () for p in func.params)


def param_infos(func):
    """The `ParamInfo` of each parameter of prim function ``func``, in order."""
    return tuple(ParamInfo(p.name, "buffer" if isinstance(p, E.Buffer) else "scalar",
                           p.dtype, shape) for p, shape in zip(func.params, param_shapes(func)))


@dataclass(frozen=True)
class Condition:
    """A requirement checked at entry: ``expr`` (bool, over shape variables) must hold.
    ``message`` says what it protects, e.g. "X is read up to index p + 1"."""

    expr: E.PrimExpr
    message: str


@dataclass(frozen=True)
class FuncInfo:
    """``scalar_vars``: the variables of the scalar parameters, in parameter order (entry
    conditions may read them); ``access_checks``: the messages of the indices checked where
    they are used (`pyir.transform.entry_conditions`), in status order after the
    conditions."""

    name: str
    params: tuple
    shape_vars: tuple
    conditions: tuple = ()
    scalar_vars: tuple = ()
    access_checks: tuple = ()

    @property
    def num_slots(self):
        return len(self.params) + len(self.shape_vars)

    def to_json(self):
        names = {v: v.name for v in self.scalar_vars + self.shape_vars}
        return {
            "name": self.name,
            "params": [{"name": p.name, "kind": p.kind, "dtype": p.dtype,
                        "shape": [expr_to_json(s, names) for s in p.shape],
                        "writes": p.writes, "written_by": p.written_by}
                       for p in self.params],
            "shape_vars": [v.name for v in self.shape_vars],
            "conditions": [{"expr": expr_to_json(c.expr, names), "message": c.message}
                           for c in self.conditions],
            "scalar_vars": [[v.name, v.dtype] for v in self.scalar_vars],
            "access_checks": list(self.access_checks),
        }

    @staticmethod
    def from_json(data):
        shape_vars = tuple(E.Var(n) for n in data["shape_vars"])
        scalar_vars = tuple(E.Var(n, dtype) for n, dtype in data["scalar_vars"])
        env = {v.name: v for v in scalar_vars + shape_vars}
        params = tuple(ParamInfo(p["name"], p["kind"], p["dtype"],
                                 tuple(expr_from_json(s, env) for s in p["shape"]),
                                 p.get("writes", False), p.get("written_by", ""))
                       for p in data["params"])
        conds = tuple(Condition(expr_from_json(c["expr"], env), c["message"])
                      for c in data["conditions"])
        return FuncInfo(data["name"], params, shape_vars, conds, scalar_vars,
                        tuple(data["access_checks"]))


def dumps(infos, graphs=(), target="", requires=()):
    """The metadata of an exported library: its prim functions' `FuncInfo`s, the JSON form
    of its graph functions' plans (`pyir.transform.graph_plan.GraphPlan.to_json`), the
    target it was compiled for and the CPU features (of
    `pyir.codegen.target.FEATURE_PROBES`) its code may use."""
    return json.dumps({"functions": [i.to_json() for i in infos],
                       "graphs": [g.to_json() for g in graphs],
                       "target": target, "requires": sorted(requires)})


def loads(text):
    """``(infos, graphs, target, requires)`` from `dumps` text; graphs stay JSON data (a
    library exported before the target was recorded: "" and no features)."""
    data = json.loads(text)
    return ([FuncInfo.from_json(d) for d in data["functions"]], data["graphs"],
            data.get("target", ""), tuple(data.get("requires", ())))


def expr_to_json(e, names):
    """Integer/bool expressions over shape variables (and float constants, passed to packed
    functions) as nested lists."""
    if isinstance(e, E.IntImm):
        return ["imm", e.value, e.dtype]
    if isinstance(e, E.FloatImm):
        return ["fimm", e.value, e.dtype]
    if isinstance(e, E.Var):
        if e not in names:
            raise Error(f"expression refers to {e.name}, which is not a shape variable")
        return ["var", names[e]]
    if isinstance(e, E.Binary):
        return [e.op, expr_to_json(e.a, names), expr_to_json(e.b, names)]
    if isinstance(e, E.Not):
        return ["not", expr_to_json(e.a, names)]
    if isinstance(e, E.Select):
        return ["select"] + [expr_to_json(x, names) for x in (e.cond, e.true_value, e.false_value)]
    if isinstance(e, E.Cast):
        return ["cast", e.dtype, expr_to_json(e.value, names)]
    raise Error(f"cannot describe {type(e).__name__} in function metadata")


def expr_from_json(d, env):
    tag = d[0]
    if tag == "imm":
        return E.IntImm(d[1], d[2])
    if tag == "fimm":
        return E.FloatImm(d[1], d[2])
    if tag == "var":
        return env[d[1]]
    if tag == "not":
        return E.Not(expr_from_json(d[1], env))
    if tag == "select":
        return E.Select(*(expr_from_json(x, env) for x in d[1:]))
    if tag == "cast":
        return E.Cast(d[1], expr_from_json(d[2], env))
    return E.Binary(tag, expr_from_json(d[1], env), expr_from_json(d[2], env))


#: The Python function of each binary operator on integers and bools (`evaluate`,
#: `pyir.codegen.emit_expr.fold_index`).
BINARY_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "floormod": lambda a, b: a % b,
    "min": min, "max": max, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "and": lambda a, b: a and b, "or": lambda a, b: a or b,
}


def evaluate(e, env):
    """Value of an integer/bool expression (or a float constant) given ``env``: Var -> int;
    an `ArgumentValueError` where it divides by 0."""
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    if isinstance(e, E.Binary):
        a, b = evaluate(e.a, env), evaluate(e.b, env)
        if e.op in ("floordiv", "floormod") and b == 0:
            raise ArgumentValueError(f"the divisor of {e.script()} is 0")
        return BINARY_OPS[e.op](a, b)
    if isinstance(e, E.Not):
        return not evaluate(e.a, env)
    if isinstance(e, E.Select):
        return evaluate(e.true_value if evaluate(e.cond, env) else e.false_value, env)
    if isinstance(e, E.Cast) and dt.is_integer(e.dtype):
        return wrap(int(evaluate(e.value, env)), e.dtype)
    raise Error(f"cannot evaluate {type(e).__name__} at the function entry")


# ---------------------------------------------------------------- calls from graph code
class GraphLowerError(Error):
    """A graph construct that cannot be compiled (names the function and binding)."""

    def __init__(self, func, binding, message):
        super().__init__(f"graph function {func}, binding {binding}: {message}")


def with_dims(sinfo, name):
    """Tensor struct info ``sinfo``, of known rank, with a new int64 variable per dimension
    (``name.shape[d]``): how a tensor known only by rank is passed."""
    return TensorStructInfo(tuple(E.Var(f"{name}.shape[{d}]", "int64")
                                  for d in range(sinfo.ndim)), sinfo.dtype)


def match_params(func, binding, callee, params, sinfos):
    """Match the values that binding ``binding`` of graph function ``func`` passes to the
    function ``callee`` (their struct infos ``sinfos``: the inputs flattened, then the
    outputs) with its `ParamInfo`s ``params``. Returns the values of ``callee``'s shape
    variables, and ``(where, dimension, required, passed, sinfo)`` for each dimension only
    run time can compare; a mismatch known now raises `GraphLowerError`."""
    if len(sinfos) != len(params):
        raise GraphLowerError(func, binding, f"{callee} takes {len(params)} argument(s) "
                              f"({', '.join(p.name for p in params)}) with its outputs, but "
                              f"the call passes {len(sinfos)}")
    bound, unproven = {}, []
    for p, sinfo in zip(params, sinfos):   # first the variables: A: (n * m,) may come first
        if isinstance(sinfo, TensorStructInfo) and len(sinfo.shape or ()) == len(p.shape):
            for pe, ge in zip(p.shape, sinfo.shape):
                if isinstance(pe, E.Var) and pe not in bound:
                    bound[pe] = ge
    for p, sinfo in zip(params, sinfos):
        wrong = _mismatch(f"{callee} parameter {p.name!r}", p, sinfo, bound, unproven)
        if wrong and (p.kind == "scalar") != isinstance(sinfo, PrimStructInfo):
            wrong += (f"; the call passes its inputs, then its outputs, to the parameters "
                      f"({', '.join(p.name for p in params)}) in this order")
        if wrong:
            raise GraphLowerError(func, binding, wrong)
    return bound, unproven


def _mismatch(where, p, sinfo, bound, unproven):
    """What is wrong with passing a value of struct info ``sinfo`` for parameter ``p``, or
    None (adding to ``unproven``); ``bound`` holds the shape variables' values."""
    if p.kind == "scalar":
        if not isinstance(sinfo, PrimStructInfo) or sinfo.dtype != p.dtype:
            return f"{where} is {dt.a(p.dtype)} scalar, got {show(sinfo)}"
        return None
    if not isinstance(sinfo, TensorStructInfo):
        return f"{where} is a buffer; the value passed is {show(sinfo)}"
    if sinfo.shape is None:
        return (f"{where} is a buffer; the value passed is {show(sinfo)} (match_cast it to a "
                "shape first)")
    if not sinfo.shape and len(p.shape) == 1 and same_dim(p.shape[0], E.IntImm(1)) \
            and sinfo.dtype == p.dtype:
        return None
    if sinfo.dtype != p.dtype or len(sinfo.shape) != len(p.shape):
        return f"{where} expects {p.dtype} with {len(p.shape)} dimension(s), got {show(sinfo)}"
    for d, (pe, ge) in enumerate(zip(p.shape, sinfo.shape)):
        want = simplify(substitute(pe, bound))
        got = simplify(ge)
        if same_dim(want, got):
            continue
        if isinstance(want, E.IntImm) and isinstance(got, E.IntImm):
            return (f"{where}: dimension {d} must be {want.value}, the value passed has "
                    f"{got.value} ({show(sinfo)})")
        if isinstance(simplify(want - got), E.IntImm):    # n and n + 1: never equal
            return (f"{where}: dimension {d} must be {want.script()}, the value passed has "
                    f"{got.script()} ({show(sinfo)})")
        unproven.append((where, d, want, got, sinfo))
    return None
