"""pyir.ir: the IR nodes (tensor level and graph level), IRModule, structural equality,
and the well-formedness verifier."""

from . import dtype
from .expr import (ARITH_OPS, BINARY_OPS, COMPARE_OPS, INTRINSICS, LOGIC_OPS, Binary, Buffer,
                   BufferLoad, Call, Cast, FloatImm, IntImm, Not, PrimExpr, Select, StringImm,
                   Var, and_, binary, conjuncts, const, convert, eq, ge, gt, is_true, le, lt, max_,
                   min_, ne, or_)
from .graph import (BindingBlock, CallDPSPacked, CallPacked, CallTIR, DataflowBlock, DataflowVar,
                    Function, GlobalVar, GraphExpr, GraphVar, MatchCast, ObjectStructInfo, OpCall,
                    PrimStructInfo, PrimValue, SeqExpr, ShapeExpr, ShapeStructInfo, StructInfo,
                    TensorStructInfo, Tuple, TupleGetItem, TupleStructInfo, VarBinding)
from .module import IRModule
from .node import IdentityNode, Node, children, rewrite, substitute, walk
from .stmt import (FOR_KINDS, STMT_FIELDS, Allocate, Block, BlockRealize, BufferRegion,
                   BufferStore, Evaluate, For, IfThenElse, IterVar, LetStmt, PrimFunc, Range,
                   SeqStmt, Stmt, seq, stmt_children)
from .structural import assert_structural_equal, structural_equal, structural_hash
from .verify import verify
