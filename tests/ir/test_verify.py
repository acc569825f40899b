"""`pyir.ir.verify` accepts well-formed prim functions and rejects ill-formed ones with a
message naming the function and what is wrong."""

import pytest

from pyir.errors import IRError
from pyir.ir import (Allocate, Binary, Block, BlockRealize, Buffer, BufferLoad, BufferStore,
                     FloatImm, For, IfThenElse, IntImm, IterVar, LetStmt, PrimFunc, Var, seq,
                     verify)

N = 8


def func(body, *params):
    return PrimFunc("f", params, body)


def loop(var, body, extent=N):
    return For(var, IntImm(0), IntImm(extent), "serial", body)


def store(buf, value, *indices):
    return BufferStore(buf, value, indices)


def test_well_formed_function_passes():
    A, B = Buffer("A", (N,), "float32"), Buffer("B", (N,), "float32")
    i, x = Var("i"), Var("x", "float32")
    tmp = Buffer("tmp", (N,), "float32")
    body = Allocate(tmp, loop(i, seq(
        store(tmp, BufferLoad(A, (i,)), i),
        LetStmt(x, BufferLoad(tmp, (i,)), store(B, Binary("mul", x, FloatImm(2.0)), i)))))
    f = func(body, A, B)
    assert verify(f) is f


def test_undefined_variable():
    A = Buffer("A", (N,), "float32")
    i = Var("i")
    with pytest.raises(IRError, match="prim function f: variable i is used in a store to A but "
                                      "not defined there"):
        verify(func(store(A, FloatImm(0.0), i), A))


def test_buffer_out_of_scope():
    A = Buffer("A", (N,), "float32")
    tmp = Buffer("tmp", (N,), "float32")
    i = Var("i")
    body = seq(Allocate(tmp, loop(i, store(tmp, FloatImm(0.0), i))),
               loop(Var("j"), store(tmp, FloatImm(1.0), IntImm(0))))
    with pytest.raises(IRError, match="prim function f: buffer tmp is written but not in scope"):
        verify(func(body, A))


def test_load_from_buffer_out_of_scope():
    A = Buffer("A", (N,), "float32")
    other = Buffer("other", (N,), "float32")
    i = Var("i")
    with pytest.raises(IRError, match="buffer other is read in a store to A but not in scope"):
        verify(func(loop(i, store(A, BufferLoad(other, (i,)), i)), A))


def test_store_dtype_mismatch():
    A = Buffer("A", (N,), "float32")
    i = Var("i")
    with pytest.raises(IRError, match="storing a float64 value into float32 buffer A"):
        verify(func(loop(i, store(A, FloatImm(1.0, "float64"), i)), A))


def test_variable_defined_twice():
    A = Buffer("A", (N,), "float32")
    i = Var("i")
    body = seq(loop(i, store(A, FloatImm(0.0), i)), loop(i, store(A, FloatImm(1.0), i)))
    with pytest.raises(IRError, match="prim function f: variable i is defined twice"):
        verify(func(body, A))


def test_non_bool_if_condition():
    A = Buffer("A", (N,), "float32")
    i = Var("i")
    body = loop(i, IfThenElse(i, store(A, FloatImm(0.0), i)))
    with pytest.raises(IRError, match="prim function f: if condition is int64, not bool"):
        verify(func(body, A))


def test_non_int64_index():
    A = Buffer("A", (N,), "float32")
    with pytest.raises(IRError, match="index of A in a store to A is int32, not int64"):
        verify(func(store(A, FloatImm(0.0), IntImm(0, "int32")), A))


def test_block_iterator_used_outside_its_block():
    A = Buffer("A", (N,), "float32")
    i, vi = Var("i"), Var("vi")
    block = Block("b", (IterVar(vi, IntImm(N), "S"),), (), (), store(A, FloatImm(0.0), vi))
    body = loop(i, seq(BlockRealize((i,), IntImm(1, "bool"), block),
                       store(A, FloatImm(1.0), vi)))
    with pytest.raises(IRError, match="variable vi is used in a store to A but not defined"):
        verify(func(body, A))


def test_non_bool_block_predicate():
    A = Buffer("A", (N,), "float32")
    i, vi = Var("i"), Var("vi")
    block = Block("b", (IterVar(vi, IntImm(N), "S"),), (), (), store(A, FloatImm(0.0), vi))
    with pytest.raises(IRError, match="block b: predicate is int64, not bool"):
        verify(func(loop(i, BlockRealize((i,), IntImm(1), block)), A))
