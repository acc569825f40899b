"""Struct-info inference of high-level graph operators (`pyir.ir.ops`)."""

import pytest

from pyir.errors import IRError
from pyir.ir import GraphVar, TensorStructInfo, TupleStructInfo, Var
from pyir.ir.ops import check_compatible, make_op_call, struct_info_of

n, m, k = Var("n"), Var("m"), Var("k")


def tensor(shape, dtype="float32", ndim=-1):
    return GraphVar("t", TensorStructInfo(shape, dtype, ndim))


def infer(op, *args, **attrs):
    return struct_info_of(make_op_call(op, args, attrs))


def test_broadcast_symbolic_and_unit_dims():
    out = infer("add", tensor((n, 1)), tensor((1, m)))
    assert out == TensorStructInfo((n, m), "float32")
    assert infer("multiply", tensor((4, n, m)), tensor((m,))) == TensorStructInfo((4, n, m),
                                                                                 "float32")


def test_broadcast_equal_expressions_after_simplification():
    out = infer("subtract", tensor((n * 2,)), tensor((2 * n,)))
    assert out.shape[0] == n * 2


def test_broadcast_mismatch_names_both_shapes():
    with pytest.raises(IRError, match=r'R.add: shapes of R.Tensor\(\(n, 4\), "float32"\) and '
                                      r'R.Tensor\(\(m, 4\), "float32"\) do not broadcast'):
        infer("add", tensor((n, 4)), tensor((m, 4)))


def test_dtype_mismatch():
    with pytest.raises(IRError, match="dtypes differ"):
        infer("maximum", tensor((n,)), tensor((n,), "int32"))


def test_matmul_with_batch():
    out = infer("matmul", tensor((2, 1, n, k)), tensor((3, k, m)))
    assert out == TensorStructInfo((2, 3, n, m), "float32")
    with pytest.raises(IRError, match="inner dimensions"):
        infer("matmul", tensor((n, k)), tensor((m, k)))


def test_reductions_and_softmax():
    assert infer("sum", tensor((n, m, 4)), axis=1) == TensorStructInfo((n, 4), "float32")
    assert infer("mean", tensor((n, m)), axis=(0, -1), keepdims=True) == \
        TensorStructInfo((1, 1), "float32")
    assert infer("max", tensor((n, m))) == TensorStructInfo((), "float32")
    assert infer("nn.softmax", tensor((n, m))) == TensorStructInfo((n, m), "float32")
    with pytest.raises(IRError, match="axis 2 is out of range"):
        infer("sum", tensor((n, m)), axis=2)


def test_ndim_only_tensors_keep_what_is_known():
    assert infer("add", tensor(None, ndim=2), tensor((n, m))) == \
        TensorStructInfo(None, "float32", 2)
    assert infer("sum", tensor(None, ndim=3), axis=0) == TensorStructInfo(None, "float32", 2)
    assert infer("nn.relu", tensor(None)) == TensorStructInfo(None, "float32")


def test_attributes_are_checked_and_defaults_filled():
    call = make_op_call("sum", (tensor((n,)),), {"axis": [0]})
    assert call.attrs == (("axis", (0,)), ("keepdims", False))
    with pytest.raises(IRError, match="R.nn.softmax has no attribute 'dim'"):
        make_op_call("nn.softmax", (tensor((n,)),), {"dim": 0})
    with pytest.raises(IRError, match="R.add takes 2 argument"):
        make_op_call("add", (tensor((n,)),))
    with pytest.raises(IRError, match="unknown operator R.conv"):
        make_op_call("conv", ())


def test_float_only_operators():
    with pytest.raises(IRError, match="R.exp needs a float tensor"):
        infer("exp", tensor((n,), "int32"))


def test_compatibility_of_annotations():
    check_compatible(TensorStructInfo((n, 4), "float32"), TensorStructInfo(None, "float32", 2))
    check_compatible(TupleStructInfo((TensorStructInfo((n,), "float32"),)),
                     TupleStructInfo((TensorStructInfo((n,), "float32"),)))
    with pytest.raises(IRError, match="does not match"):
        check_compatible(TensorStructInfo((n, 4), "float32"), TensorStructInfo((n, 5), "float32"))
    with pytest.raises(IRError, match="does not match"):
        check_compatible(TensorStructInfo((n,), "float32"), TensorStructInfo(None, "float32", 2))

