"""`pyir.ir.verify` on hand-built graph IR: each test breaks one well-formedness rule."""

import pytest

from pyir.errors import IRError
from pyir.ir import (BindingBlock, CallPacked, CallTIR, DataflowBlock, DataflowVar, Function,
                     GlobalVar, GraphVar, IRModule, MatchCast, OpCall, SeqExpr,
                     TensorStructInfo, Var, VarBinding, verify)

n, k = Var("n"), Var("k")
VEC = TensorStructInfo((n,), "float32")


def func(blocks, body, params=None):
    x = params[0] if params else GraphVar("x", VEC)
    return Function("main", tuple(params or (x,)), SeqExpr(tuple(blocks), body), VEC)


def test_well_formed_function_passes():
    x = GraphVar("x", VEC)
    y = DataflowVar("y", VEC)
    z = GraphVar("z", VEC)
    block = DataflowBlock((VarBinding(y, OpCall("exp", (x,))),
                           VarBinding(z, OpCall("exp", (y,)))))
    f = func([block], z, [x])
    assert verify(f) is f


def test_undefined_symbolic_variable():
    x = GraphVar("x", VEC)
    y = GraphVar("y", TensorStructInfo((k,), "float32"))
    f = func([BindingBlock((VarBinding(y, OpCall("exp", (x,))),))], y, [x])
    with pytest.raises(IRError, match="symbolic variable k in the struct info of y is not "
                                      "defined"):
        verify(f)


def test_match_cast_defines_symbolic_variables():
    x = GraphVar("x", VEC)
    cast = TensorStructInfo((k,), "float32")
    y = GraphVar("y", cast)
    f = func([BindingBlock((MatchCast(y, x, cast),))], y, [x])
    assert verify(f) is f


def test_dataflow_variable_escaping_its_block():
    x = GraphVar("x", VEC)
    y = DataflowVar("y", VEC)
    f = func([DataflowBlock((VarBinding(y, OpCall("exp", (x,))),))], y, [x])
    with pytest.raises(IRError, match="variable y is used in the return value but not defined"):
        verify(f)


def test_dataflow_variable_bound_outside_dataflow():
    x = GraphVar("x", VEC)
    y = DataflowVar("y", VEC)
    f = func([BindingBlock((VarBinding(y, OpCall("exp", (x,))),))], x, [x])
    with pytest.raises(IRError, match="dataflow variable y is bound outside a dataflow block"):
        verify(f)


def test_call_packed_inside_dataflow():
    x = GraphVar("x", VEC)
    y = GraphVar("y", VEC)
    f = func([DataflowBlock((VarBinding(y, CallPacked("log", (x,), VEC)),))], y, [x])
    with pytest.raises(IRError, match=r"R.call_packed\('log'\) in y is inside a dataflow "
                                      "block; it may have effects"):
        verify(f)


def test_call_tir_of_a_graph_function():
    x = GraphVar("x", VEC)
    y = GraphVar("y", VEC)
    f = func([BindingBlock((VarBinding(y, CallTIR(GlobalVar("main"), (x,), (VEC,))),))], y,
             [x])
    with pytest.raises(IRError, match="calls main, which is not a prim function"):
        verify(IRModule((("main", f),)))


def test_variable_bound_twice():
    x = GraphVar("x", VEC)
    y = GraphVar("y", VEC)
    bind = VarBinding(y, OpCall("exp", (x,)))
    f = func([BindingBlock((bind, bind))], y, [x])
    with pytest.raises(IRError, match="variable y is bound twice"):
        verify(f)
