"""High-level graph operators and struct-info inference for graph expressions.

`OPS` maps an operator name (``"add"``, ``"nn.softmax"``...) to its `OpDef`: arity,
attributes with defaults, and the rule that infers the result's struct info from the
arguments'. `make_op_call` builds a checked `OpCall`; `struct_info_of` infers the struct
info of any graph expression; `check_compatible` tells whether an annotation may describe a
value. Failures are IRErrors that show both sides in script syntax.
"""

from dataclasses import dataclass

from ..arith import simplify
from ..errors import IRError, kind_of
from . import dtype as dt
from .expr import IntImm
from .graph import (CallDPSPacked, CallPacked, CallTIR, GraphVar, ObjectStructInfo, OpCall,
                    PrimStructInfo, PrimValue, SeqExpr, ShapeExpr, ShapeStructInfo,
                    TensorStructInfo, Tuple, TupleGetItem, TupleStructInfo)


@dataclass(frozen=True)
class OpDef:
    """``attrs`` is a tuple of (key, default, check); ``check(op, value)`` returns the
    normalized plain value or raises. ``infer(op, sinfos, attrs)`` returns the result's
    struct info."""

    name: str
    arity: int
    infer: object
    attrs: tuple = ()


OPS = {}


def register_op(name, arity, infer, attrs=()):
    OPS[name] = OpDef(name, arity, infer, tuple(attrs))


def make_op_call(name, args, attrs=None):
    """An OpCall of operator ``name`` with every attribute present (defaults filled in)."""
    op = _opdef(name)
    if len(args) != op.arity:
        raise IRError(f"R.{name} takes {op.arity} argument(s), got {len(args)}")
    given = dict(attrs or {})
    unknown = [k for k in given if k not in {a[0] for a in op.attrs}]
    if unknown:
        known = ", ".join(a[0] for a in op.attrs) or "none"
        raise IRError(f"R.{name} has no attribute {unknown[0]!r}; its attributes: {known}")
    pairs = tuple((key, check(name, given[key]) if key in given else default)
                  for key, default, check in op.attrs)
    return OpCall(name, tuple(args), pairs)


def _opdef(name):
    if name not in OPS:
        raise IRError(f"unknown operator R.{name}")
    return OPS[name]


def struct_info_of(expr):
    """The struct info of graph expression ``expr``, inferred from its parts."""
    if isinstance(expr, GraphVar):
        return expr.struct_info
    if isinstance(expr, Tuple):
        return TupleStructInfo(tuple(struct_info_of(f) for f in expr.fields))
    if isinstance(expr, TupleGetItem):
        return _tuple_field(struct_info_of(expr.tuple_value), expr.index)
    if isinstance(expr, ShapeExpr):
        return ShapeStructInfo(expr.values)
    if isinstance(expr, PrimValue):
        return PrimStructInfo(expr.value.dtype)
    if isinstance(expr, (CallTIR, CallDPSPacked)):
        outs = expr.out_sinfo
        return outs[0] if len(outs) == 1 else TupleStructInfo(tuple(outs))
    if isinstance(expr, CallPacked):
        return expr.sinfo
    if isinstance(expr, OpCall):
        op = _opdef(expr.op)
        return op.infer(expr.op, [struct_info_of(a) for a in expr.args], dict(expr.attrs))
    if isinstance(expr, SeqExpr):
        return struct_info_of(expr.body)
    raise IRError(f"cannot infer the struct info of {kind_of(expr)}")


def _tuple_field(sinfo, index):
    if not isinstance(sinfo, TupleStructInfo):
        raise IRError(f"cannot index a value of struct info {show(sinfo)}: it is not a tuple")
    if not 0 <= index < len(sinfo.fields):
        raise IRError(f"tuple index {index} is out of range for {show(sinfo)}, which has "
                      f"{len(sinfo.fields)} field(s)")
    return sinfo.fields[index]


def show(sinfo):
    """Script text of a struct info, for error messages."""
    return sinfo.script()


# ---------------------------------------------------------------- dimensions
def same_dim(a, b):
    """True if int64 expressions ``a`` and ``b`` are provably equal."""
    return a == b or simplify(a - b) == IntImm(0, dt.INDEX)


def is_one(d):
    return isinstance(d, IntImm) and d.value == 1


# ---------------------------------------------------------------- compatibility
def check_compatible(annotated, inferred):
    """Raise IRError unless ``annotated`` may describe a value whose struct info is
    ``inferred``: same kind and dtype, and every dimension known on both sides equal."""
    if not _compatible(annotated, inferred):
        raise IRError(f"annotation {show(annotated)} does not match the value's struct info "
                      f"{show(inferred)}")


def check_castable(target, inferred):
    """Raise IRError if ``R.match_cast`` of a value of struct info ``inferred`` to
    ``target`` can never succeed (different kind, dtype or rank)."""
    if not _compatible(target, inferred, dims=False):
        raise IRError(f"R.match_cast can never succeed: the value is {show(inferred)}, the "
                      f"target {show(target)}")


def _compatible(a, b, dims=True):
    if isinstance(a, ObjectStructInfo) or isinstance(b, ObjectStructInfo):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, TensorStructInfo):
        return a.dtype == b.dtype and _shapes_compatible(a.shape, a.ndim, b.shape, b.ndim, dims)
    if isinstance(a, ShapeStructInfo):
        return _shapes_compatible(a.values, a.ndim, b.values, b.ndim, dims)
    if isinstance(a, PrimStructInfo):
        return a.dtype == b.dtype
    return len(a.fields) == len(b.fields) and \
        all(_compatible(x, y, dims) for x, y in zip(a.fields, b.fields))


def _shapes_compatible(sa, na, sb, nb, dims):
    if na != -1 and nb != -1 and na != nb:
        return False
    if sa is None or sb is None or not dims:
        return True
    return all(map(same_dim, sa, sb))


# ---------------------------------------------------------------- inference rules
def _tensor(op, sinfo, k):
    if not isinstance(sinfo, TensorStructInfo):
        raise IRError(f"R.{op}: argument {k} must be a tensor, not {show(sinfo)}")
    return sinfo


def _same_dtype(op, a, b):
    if a.dtype != b.dtype:
        raise IRError(f"R.{op}: dtypes differ: {show(a)} and {show(b)}")


def _broadcast(op, a, b, core=0):
    """The broadcast of the shapes of ``a`` and ``b`` but their last ``core`` dimensions
    (matmul's matrices), aligned at the right; a dimension of 1 stretches."""
    sa, sb = a.shape[:len(a.shape) - core], b.shape[:len(b.shape) - core]
    out = []
    for k in range(1, max(len(sa), len(sb)) + 1):
        da = sa[-k] if k <= len(sa) else None
        db = sb[-k] if k <= len(sb) else None
        if da is None or is_one(da):
            out.append(db if db is not None else da)
        elif db is None or is_one(db) or same_dim(da, db):
            out.append(da)
        else:
            what = "the batch dimensions of" if core else "shapes of"
            raise IRError(f"R.{op}: {what} {show(a)} and {show(b)} do not broadcast "
                          f"(dimension -{k + core} differs: {da.script()} and {db.script()})")
    return tuple(reversed(out))


def _numeric(op, x, float_only=False):
    """``x`` if ``R.op`` computes on its dtype: no bool (these are arithmetic), and floats
    only for true division and means."""
    if x.dtype == "bool":
        raise IRError(f"R.{op} is arithmetic and does not take bool tensors, got {show(x)}")
    if float_only and not dt.is_float(x.dtype):
        raise IRError(f"R.{op} needs float tensors (it divides exactly), not {show(x)}")
    return x


def _infer_elementwise(op, sinfos, attrs):
    a, b = (_tensor(op, s, k) for k, s in enumerate(sinfos))
    _same_dtype(op, a, b)
    _numeric(op, a, float_only=op == "divide")
    if a.shape is None or b.shape is None:
        ndim = -1 if -1 in (a.ndim, b.ndim) else max(a.ndim, b.ndim)
        return TensorStructInfo(None, a.dtype, ndim)
    return TensorStructInfo(_broadcast(op, a, b), a.dtype)


def _infer_unary(op, sinfos, attrs):
    return _numeric(op, _tensor(op, sinfos[0], 0))


def _infer_float_unary(op, sinfos, attrs):
    x = _tensor(op, sinfos[0], 0)
    if not dt.is_float(x.dtype):
        raise IRError(f"R.{op} needs a float tensor, not {show(x)}")
    return x


def _infer_softmax(op, sinfos, attrs):
    x = _infer_float_unary(op, sinfos, attrs)
    _normalize_axes(op, x, (attrs["axis"],))
    return x


def _infer_matmul(op, sinfos, attrs):
    a, b = (_tensor(op, s, k) for k, s in enumerate(sinfos))
    _same_dtype(op, a, b)
    _numeric(op, a)
    for x in (a, b):
        if x.ndim != -1 and x.ndim < 2:
            raise IRError(f"R.{op} needs tensors of at least 2 dimensions, not {show(x)}")
    if a.shape is None or b.shape is None:
        ndim = -1 if -1 in (a.ndim, b.ndim) else max(a.ndim, b.ndim)
        return TensorStructInfo(None, a.dtype, ndim)
    if not same_dim(a.shape[-1], b.shape[-2]):
        raise IRError(f"R.{op}: inner dimensions of {show(a)} and {show(b)} differ")
    batch = _broadcast(op, a, b, core=2)
    return TensorStructInfo(batch + (a.shape[-2], b.shape[-1]), a.dtype)


def _normalize_axes(op, x, axes):
    if x.ndim == -1:
        return None
    out = []
    for axis in axes:
        if not -x.ndim <= axis < x.ndim:
            raise IRError(f"R.{op}: axis {axis} is out of range for {show(x)}")
        out.append(axis % x.ndim)
    if len(set(out)) != len(out):
        raise IRError(f"R.{op}: axis {axes} names a dimension twice")
    return out


def _infer_reduce(op, sinfos, attrs):
    x = _numeric(op, _tensor(op, sinfos[0], 0), float_only=op == "mean")
    axis, keep = attrs["axis"], attrs["keepdims"]
    if x.ndim == -1:
        return TensorStructInfo(None, x.dtype)
    axes = set(range(x.ndim)) if axis is None else set(
        _normalize_axes(op, x, axis if isinstance(axis, tuple) else (axis,)))
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, x.ndim if keep else x.ndim - len(axes))
    empty = [k for k in sorted(axes) if x.shape[k] == IntImm(0, dt.INDEX)]
    if empty and op in ("max", "min"):
        raise IRError(f"R.{op}: axis {empty[0]} of {show(x)} is empty, and an empty "
                      f"{op}imum has no value (numpy raises too)")
    if keep:
        return TensorStructInfo(tuple(1 if k in axes else d for k, d in enumerate(x.shape)),
                                x.dtype)
    return TensorStructInfo(tuple(d for k, d in enumerate(x.shape) if k not in axes), x.dtype)


# ---------------------------------------------------------------- attribute checks
def _int(op, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise IRError(f"R.{op}: axis must be an integer, not {value!r}")
    return value


def _axes(op, value):
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return tuple(_int(op, v) for v in value)
    return _int(op, value)


def _bool(op, value):
    if not isinstance(value, bool):
        raise IRError(f"R.{op}: keepdims must be True or False, not {value!r}")
    return value


for _name in ("add", "subtract", "multiply", "divide", "maximum", "minimum"):
    register_op(_name, 2, _infer_elementwise)
for _name in ("negative", "abs", "nn.relu"):
    register_op(_name, 1, _infer_unary)
for _name in ("exp", "log", "sqrt", "tanh", "sigmoid", "nn.gelu", "nn.gelu_tanh"):
    register_op(_name, 1, _infer_float_unary)
for _name in ("sum", "mean", "max", "min"):
    register_op(_name, 1, _infer_reduce, [("axis", None, _axes), ("keepdims", False, _bool)])
register_op("matmul", 2, _infer_matmul)
register_op("nn.softmax", 1, _infer_softmax, [("axis", -1, _int)])
register_op("nn.log_softmax", 1, _infer_softmax, [("axis", -1, _int)])
