"""The graph level: struct info, graph variables, calls, bindings and graph functions."""

from dataclasses import dataclass

from ..errors import IRError
from . import dtype as dt
from .expr import PrimExpr, convert
from .node import IdentityNode, Node


# ---------------------------------------------------------------- struct info
class StructInfo(Node):
    """What is statically known about a graph value."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class TensorStructInfo(StructInfo):
    """A tensor: ``shape`` is a tuple of int64 expressions, or None when only ``ndim`` is
    known (``ndim == -1``: not even that); ``ndim=0`` is the shape ``()``, fully known."""

    shape: tuple
    dtype: str
    ndim: int = -1

    def __post_init__(self):
        dt.check(self.dtype)
        if self.shape is None and self.ndim == 0:
            object.__setattr__(self, "shape", ())
        if self.shape is not None:
            object.__setattr__(self, "shape", tuple(convert(s) for s in self.shape))
            if self.ndim not in (-1, len(self.shape)):
                raise IRError(f"tensor struct info: ndim={self.ndim} but shape has "
                              f"{len(self.shape)} entries")
            object.__setattr__(self, "ndim", len(self.shape))


@dataclass(frozen=True, slots=True)
class TupleStructInfo(StructInfo):
    fields: tuple


@dataclass(frozen=True, slots=True)
class ShapeStructInfo(StructInfo):
    """A shape value: known entries ``values`` or only ``ndim``."""

    values: tuple = None
    ndim: int = -1

    def __post_init__(self):
        if self.values is not None:
            object.__setattr__(self, "values", tuple(convert(s) for s in self.values))
            object.__setattr__(self, "ndim", len(self.values))


@dataclass(frozen=True, slots=True)
class PrimStructInfo(StructInfo):
    """A scalar (``R.Prim("float32")``)."""

    dtype: str

    def __post_init__(self):
        dt.check(self.dtype)


@dataclass(frozen=True, slots=True)
class ObjectStructInfo(StructInfo):
    """Anything; nothing is known statically."""


# ---------------------------------------------------------------- expressions
class GraphExpr(Node):
    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False)
class GraphVar(IdentityNode, GraphExpr):
    """A graph variable (function parameter or binding outside dataflow blocks)."""

    name: str
    struct_info: StructInfo

    def __repr__(self):
        return f"{type(self).__name__}({self.name})"


@dataclass(frozen=True, slots=True, eq=False)
class DataflowVar(GraphVar):
    """A variable bound inside a dataflow block and not exported by ``R.output``."""


@dataclass(frozen=True, slots=True)
class GlobalVar(GraphExpr):
    """The name of a function in the enclosing IRModule."""

    name: str


@dataclass(frozen=True, slots=True)
class Tuple(GraphExpr):
    fields: tuple


@dataclass(frozen=True, slots=True)
class TupleGetItem(GraphExpr):
    tuple_value: GraphExpr
    index: int


@dataclass(frozen=True, slots=True)
class ShapeExpr(GraphExpr):
    """A shape value ``R.shape([n, 4])``."""

    values: tuple

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(convert(s) for s in self.values))


@dataclass(frozen=True, slots=True)
class PrimValue(GraphExpr):
    """A scalar passed as a graph value (``R.prim_value(...)`` or a number literal)."""

    value: PrimExpr


@dataclass(frozen=True, slots=True)
class CallTIR(GraphExpr):
    """``R.call_tir(func, args, out_sinfo)``: allocate outputs, call a prim function in
    destination-passing style, yield the output (a tuple for several)."""

    func: GlobalVar
    args: tuple
    out_sinfo: tuple


@dataclass(frozen=True, slots=True)
class CallDPSPacked(GraphExpr):
    """``R.call_dps_packed(name, args, out_sinfo)``: like CallTIR for a registered packed
    function or extern kernel."""

    name: str
    args: tuple
    out_sinfo: tuple


@dataclass(frozen=True, slots=True)
class CallPacked(GraphExpr):
    """``R.call_packed(name, *args, sinfo_args)``: call a registered function that returns
    its result; may have effects, so it is not allowed in dataflow blocks."""

    name: str
    args: tuple
    sinfo: StructInfo


@dataclass(frozen=True, slots=True)
class OpCall(GraphExpr):
    """A high-level operator (``R.add``, ``R.nn.softmax``...) before legalization.
    ``attrs`` is a tuple of (key, plain value) pairs."""

    op: str
    args: tuple
    attrs: tuple = ()


# ---------------------------------------------------------------- bindings
@dataclass(frozen=True, slots=True)
class VarBinding(Node):
    var: GraphVar
    value: GraphExpr


@dataclass(frozen=True, slots=True)
class MatchCast(Node):
    """Binds ``var`` to ``value`` after checking at run time that it matches
    ``struct_info``; new symbolic variables in ``struct_info`` are defined here."""

    var: GraphVar
    value: GraphExpr
    struct_info: StructInfo


@dataclass(frozen=True, slots=True)
class BindingBlock(Node):
    bindings: tuple


@dataclass(frozen=True, slots=True)
class DataflowBlock(Node):
    """Pure bindings (``with R.dataflow():``); only non-DataflowVar vars escape it."""

    bindings: tuple


@dataclass(frozen=True, slots=True)
class SeqExpr(GraphExpr):
    blocks: tuple
    body: GraphExpr


@dataclass(frozen=True, slots=True)
class Function(Node):
    """A graph function ``@R.function``."""

    name: str
    params: tuple
    body: SeqExpr
    ret_struct_info: StructInfo
    attrs: tuple = ()

    def __post_init__(self):
        for p in self.params:
            if not isinstance(p, GraphVar) or isinstance(p, DataflowVar):
                raise IRError(f"graph function {self.name}: parameter {p!r} is not a GraphVar")


def symbolic_vars(sinfo):
    """The shape Vars occurring anywhere in a struct info, in first-occurrence order."""
    from .node import walk
    from .expr import Var
    out = []
    for n in walk(sinfo):
        if isinstance(n, Var) and n not in out:
            out.append(n)
    return out
