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


def test_shape_variables_of_declared_parameter_shapes_are_defined_after_flattening():
    """A (0, n) buffer flattens to (0,): n is then only in the "param_shapes" attribute,
    which binds it at the call; the verifier took the loop over n for a use of an undefined
    variable (so every build of such a function failed in the test suite)."""
    import numpy as np

    import pyir
    from pyir.script import from_source
    src = '''from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((0, "n"), "float32"), O: T.Buffer((0, "n"), "float32")):
    for i0, i1 in T.grid(0, n):
        with T.block("O"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            O[v0, v1] = A[v0, v1]
'''
    f = from_source(src)
    flat = pyir.ir.IRModule.from_dict({"f": f})
    passes = pyir.transform.PIPELINE
    for p in passes[:passes.index(pyir.transform.flatten_buffers) + 1]:
        flat = p(flat)
    assert flat["f"].params[0].shape == (IntImm(0),)
    verify(flat)
    lib = pyir.build(f)
    lib["f"](np.zeros((0, 5), "float32"), np.zeros((0, 5), "float32"))
    with pytest.raises(pyir.Error, match="shape variable n is 5 from A.shape.1. but 7"):
        lib["f"](np.zeros((0, 5), "float32"), np.zeros((0, 7), "float32"))
