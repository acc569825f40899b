"""Scalar expressions of the tensor level: variables, immediates, arithmetic, loads.

Arithmetic operators on expressions build nodes without simplifying them (`pyir.arith`
simplifies). Python ints become int64 immediates, floats float32, bools bool. ``==`` is
structural equality of the nodes, never an IR comparison: use `eq`, `lt`, ... for those.
"""

import struct
from dataclasses import dataclass

from ..errors import IRError, kind_of
from . import dtype as dt
from .node import IdentityNode, Node


class PrimExpr(Node):
    """Base of scalar expressions; every subclass has a ``dtype`` (a field, or kept in the
    ``_dtype`` slot by `Binary`; `Binary` also keeps its hash in ``_hash``)."""

    __slots__ = ("_dtype", "_hash")

    def __add__(self, other):
        return Binary("add", self, convert(other, self.dtype))

    def __radd__(self, other):
        return Binary("add", convert(other, self.dtype), self)

    def __sub__(self, other):
        return Binary("sub", self, convert(other, self.dtype))

    def __rsub__(self, other):
        return Binary("sub", convert(other, self.dtype), self)

    def __mul__(self, other):
        return Binary("mul", self, convert(other, self.dtype))

    def __rmul__(self, other):
        return Binary("mul", convert(other, self.dtype), self)

    def __truediv__(self, other):
        return Binary("div", self, convert(other, self.dtype))

    def __rtruediv__(self, other):
        return Binary("div", convert(other, self.dtype), self)

    def __floordiv__(self, other):
        return Binary("floordiv", self, convert(other, self.dtype))

    def __rfloordiv__(self, other):
        return Binary("floordiv", convert(other, self.dtype), self)

    def __mod__(self, other):
        return Binary("floormod", self, convert(other, self.dtype))

    def __rmod__(self, other):
        return Binary("floormod", convert(other, self.dtype), self)

    def __neg__(self):
        return Binary("sub", const(0, self.dtype), self)


@dataclass(frozen=True, slots=True, eq=False)
class Var(IdentityNode, PrimExpr):
    """A scalar variable: loop variable, block iterator, let variable or shape variable."""

    name: str
    dtype: str = dt.INDEX

    def __post_init__(self):
        dt.check(self.dtype)

    def __repr__(self):
        return f"Var({self.name}: {self.dtype})"


@dataclass(frozen=True, slots=True)
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    value: int
    dtype: str = dt.INDEX

    def __post_init__(self):
        dt.check(self.dtype)
        if dt.is_float(self.dtype):
            raise IRError(f"IntImm cannot have float dtype {self.dtype}")
        if not isinstance(self.value, int):
            object.__setattr__(self, "value", int(self.value))
        lo, hi = dt.int_range(self.dtype)
        if not lo <= self.value <= hi:
            raise IRError(f"{self.value} does not fit in {self.dtype} ([{lo}, {hi}])")


@dataclass(frozen=True, slots=True)
class FloatImm(PrimExpr):
    """A floating-point constant."""

    value: float
    dtype: str = "float32"

    def __post_init__(self):
        dt.check(self.dtype)
        if not dt.is_float(self.dtype):
            raise IRError(f"FloatImm needs a float dtype, not {self.dtype}")
        if not isinstance(self.value, float):
            object.__setattr__(self, "value", float(self.value))

    # Equal only to the same value bit for bit: -0.0 is not 0.0 (x * -0.0 keeps the sign
    # flipped), and a NaN equals itself (a node is the same constant wherever it appears).
    def __eq__(self, other):
        return (type(other) is FloatImm and self.dtype == other.dtype
                and _float_key(self.value) == _float_key(other.value))

    def __hash__(self):
        return hash((_float_key(self.value), self.dtype))


def _float_key(value):
    return struct.pack("<d", value)


@dataclass(frozen=True, slots=True)
class StringImm(PrimExpr):
    """A string constant (names of external functions)."""

    value: str
    dtype: str = "handle"


ARITH_OPS = ("add", "sub", "mul", "div", "floordiv", "floormod", "min", "max")
COMPARE_OPS = ("eq", "ne", "lt", "le", "gt", "ge")
LOGIC_OPS = ("and", "or")
BINARY_OPS = ARITH_OPS + COMPARE_OPS + LOGIC_OPS
_OP_KIND = {**dict.fromkeys(ARITH_OPS, "arith"), **dict.fromkeys(COMPARE_OPS, "compare"),
            **dict.fromkeys(LOGIC_OPS, "logic")}


@dataclass(frozen=True, slots=True)
class Binary(PrimExpr):
    """``a <op> b`` for op in BINARY_OPS. Both operands have the same dtype.

    ``div`` is true division (floats only); ``floordiv``/``floormod`` round toward minus
    infinity (Python's ``//`` and ``%``; for floats numpy's floor_divide and remainder, bit
    for bit but for the sign and payload of a NaN). Comparisons and logic yield bool.
    """

    op: str
    a: PrimExpr
    b: PrimExpr

    def __post_init__(self):
        kind = _OP_KIND.get(self.op)
        if kind is None:
            raise IRError(f"unknown binary operator {self.op!r}")
        try:
            a, b = self.a.dtype, self.b.dtype
        except AttributeError:   # a Python number, ...: pyir.ir.binary converts those
            bad = next(x for x in (self.a, self.b) if not isinstance(x, PrimExpr))
            raise IRError(f"an operand of {self.op} is {kind_of(bad)} {bad!r}, not an "
                          "expression (pyir.ir.binary converts Python numbers)") from None
        if a != b:
            raise IRError(f"operands of {self.op} have different dtypes: "
                          f"{a} and {self.b.dtype}")
        if self.op == "div" and not dt.is_float(a):
            raise IRError(f"true division needs float operands, not {a}; use // for "
                          "floor division")
        if kind == "logic" and a != "bool":
            raise IRError(f"'{self.op}' needs bool operands, not {a}")
        # Kept, not a field: asking a long sum for its dtype would walk its left spine.
        object.__setattr__(self, "_dtype", a if kind == "arith" else "bool")

    @property
    def dtype(self):
        return self._dtype

    def __reduce__(self):
        # Rebuilt through __init__ (pickle, copy, deepcopy): its dtype is kept in a slot that
        # is not a field, which the dataclass's own state leaves out.
        return Binary, (self.op, self.a, self.b)

    def __hash__(self):
        # Computed once: answers are remembered by expression, and a sum's hash would
        # otherwise walk all of it at every lookup. (getattr with a default: most nodes are
        # hashed once, and a caught AttributeError cost twice as much.)
        h = getattr(self, "_hash", None)
        if h is None:
            h = hash((self.op, self.a, self.b))
            object.__setattr__(self, "_hash", h)
        return h


@dataclass(frozen=True, slots=True)
class Not(PrimExpr):
    a: PrimExpr

    def __post_init__(self):
        if self.a.dtype != "bool":
            raise IRError(f"'not' needs a bool operand, not {self.a.dtype}")

    @property
    def dtype(self):
        return "bool"


@dataclass(frozen=True, slots=True)
class Cast(PrimExpr):
    dtype: str
    value: PrimExpr

    def __post_init__(self):
        dt.check(self.dtype)


@dataclass(frozen=True, slots=True)
class Select(PrimExpr):
    """``true_value if cond else false_value``; only the chosen side is evaluated
    (``T.if_then_else``), so a side may hold a load that is only in bounds when chosen."""

    cond: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr

    def __post_init__(self):
        if self.cond.dtype != "bool":
            raise IRError(f"if_then_else condition must be bool, not {self.cond.dtype}")
        if self.true_value.dtype != self.false_value.dtype:
            raise IRError(f"if_then_else branches have different dtypes: "
                          f"{self.true_value.dtype} and {self.false_value.dtype}")

    @property
    def dtype(self):
        return self.true_value.dtype


#: Intrinsics: name -> number of arguments. The math ones take and return a float dtype,
#: except abs, which takes any numeric dtype. ``checked_index(index, extent, status)`` is
#: ``index`` (int64) once it is known to lie in ``[0, extent)``: the function returns
#: ``status`` at that point otherwise (lowering puts it around an index the entry
#: conditions cannot bound, such as one read from memory).
INTRINSICS = {
    "exp": 1, "log": 1, "sqrt": 1, "tanh": 1, "abs": 1, "floor": 1, "ceil": 1,
    "sigmoid": 1, "sin": 1, "cos": 1, "pow": 2, "erf": 1, "rsqrt": 1, "checked_index": 3,
}
#: The math intrinsics: their arguments and result have one dtype, a float (abs: a number).
MATH_INTRINSICS = frozenset(INTRINSICS) - {"checked_index"}


@dataclass(frozen=True, slots=True)
class Call(PrimExpr):
    """An intrinsic (``op`` in INTRINSICS) or ``op == "call_extern"``, whose first
    argument is a StringImm naming a kernel registered with `pyir.ffi.extern`."""

    dtype: str
    op: str
    args: tuple

    def __post_init__(self):
        if type(self.args) is not tuple:
            object.__setattr__(self, "args", tuple(self.args))   # hashed: no list
        if self.op == "call_extern":
            if not self.args or not isinstance(self.args[0], StringImm):
                raise IRError("call_extern needs the kernel name as its first argument")
        elif self.op not in INTRINSICS:
            raise IRError(f"unknown intrinsic {self.op!r}")
        elif len(self.args) != INTRINSICS[self.op]:
            raise IRError(f"{self.op} takes {INTRINSICS[self.op]} argument(s), "
                          f"got {len(self.args)}")
        elif self.op in MATH_INTRINSICS:
            kinds = [a.dtype for a in self.args]
            if self.op == "abs" and not (dt.is_float(self.dtype) or dt.is_integer(self.dtype)):
                raise IRError(f"abs needs a number, not {self.dtype}")
            if self.op != "abs" and not dt.is_float(self.dtype):
                raise IRError(f"{self.op} needs a float argument, not {self.dtype}")
            if any(k != self.dtype for k in kinds):
                raise IRError(f"{self.op} of {', '.join(kinds)} cannot return {self.dtype}: "
                              "its arguments and result have one dtype")


@dataclass(frozen=True, slots=True)
class BufferLoad(PrimExpr):
    buffer: "Buffer"
    indices: tuple

    def __post_init__(self):
        if len(self.indices) != len(self.buffer.shape):
            raise IRError(f"buffer {self.buffer.name} has {len(self.buffer.shape)} dimension(s) "
                          f"but is indexed with {len(self.indices)}")
        object.__setattr__(self, "indices", index_exprs(self.indices))

    @property
    def dtype(self):
        return self.buffer.dtype


@dataclass(frozen=True, slots=True, eq=False)
class Buffer(IdentityNode):
    """A multi-dimensional array. ``scope`` is "global" (parameters, heap) or "local"
    (small per-thread scratch, candidates for registers)."""

    name: str
    shape: tuple
    dtype: str
    scope: str = "global"

    def __post_init__(self):
        dt.check(self.dtype)
        object.__setattr__(self, "shape", tuple(convert(s) for s in self.shape))
        for s in self.shape:
            if s.dtype != dt.INDEX:
                raise IRError(f"buffer {self.name}: shape entries must be int64, got {s.dtype}")

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, tuple(convert(i) for i in indices))

    def __repr__(self):
        return f"Buffer({self.name}, {self.dtype})"


def const(value, dtype):
    """A constant of ``dtype``."""
    if dt.is_float(dtype):
        return FloatImm(float(value), dtype)
    return IntImm(int(value), dtype)


def index_exprs(indices):
    """The indices of a load or store as a tuple of expressions: Python ints become int64
    constants (``A[0]`` built by hand), anything else that is no expression is refused."""
    if type(indices) is tuple:
        for i in indices:
            if not isinstance(i, PrimExpr):
                break
        else:
            return indices
    return tuple(convert(i, dt.INDEX) if isinstance(i, int) and not isinstance(i, bool)
                 else i if isinstance(i, PrimExpr) else _no_index(i) for i in indices)


def _no_index(value):
    raise IRError(f"an index is an int64 expression, not {kind_of(value)} {value!r}")


def convert(value, dtype=None):
    """An expression from a Python value: ints (as ``dtype`` or int64), floats (as ``dtype``
    if it is a float type, else float32) and bools; expressions pass through."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool):
        return IntImm(int(value), "bool")
    if isinstance(value, int):
        return const(value, dtype if dtype and dtype != "bool" else dt.INDEX)
    if isinstance(value, float):
        return FloatImm(value, dtype if dtype and dt.is_float(dtype) else "float32")
    raise IRError(f"cannot use {type(value).__name__} {value!r} as an IR expression")


def binary(op, a, b):
    """``Binary(op, a, b)`` converting Python numbers to the other side's dtype."""
    if isinstance(a, PrimExpr):
        return Binary(op, a, convert(b, a.dtype))
    b = convert(b)
    return Binary(op, convert(a, b.dtype), b)


def min_(a, b):
    return binary("min", a, b)


def max_(a, b):
    return binary("max", a, b)


def eq(a, b):
    return binary("eq", a, b)


def ne(a, b):
    return binary("ne", a, b)


def lt(a, b):
    return binary("lt", a, b)


def le(a, b):
    return binary("le", a, b)


def gt(a, b):
    return binary("gt", a, b)


def ge(a, b):
    return binary("ge", a, b)


def and_(a, b):
    return binary("and", a, b)


def or_(a, b):
    return binary("or", a, b)


def is_true(expr):
    """Whether ``expr`` is the constant ``True`` (a predicate that holds everywhere)."""
    return isinstance(expr, IntImm) and expr.dtype == "bool" and expr.value == 1


def conjuncts(cond):
    """The terms of ``cond`` joined by ``and``, left to right (a true constant has none)."""
    if isinstance(cond, Binary) and cond.op == "and":
        return conjuncts(cond.a) + conjuncts(cond.b)
    if isinstance(cond, IntImm) and cond.value:
        return []
    return [cond]
