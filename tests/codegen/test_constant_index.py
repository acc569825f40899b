"""Index arithmetic whose variables are all constant where it is emitted (the copies of an
unrolled loop) is folded in Python (`pyir.codegen.emit_expr.fold_index`): its values must be
numpy's, also for floor division and modulo of negative numbers and by 0 and -1."""

import numpy as np
import pytest

import pyir
from pyir.codegen.emit_expr import fold_index
from pyir.ir import Binary, IntImm, Var
from pyir.script import from_source

SOURCE = '''from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((64,), "int64"), O: T.Buffer((8, 8), "int64")):
    for r in T.{kind}(8):
        for c in T.{kind}(8):
            with T.block("O"):
                vr, vc = T.axis.remap("SS", [r, c])
                O[vr, vc] = {expr}
'''


def numpy_floordiv(a, b):
    return np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b)))


def numpy_floormod(a, b):
    return np.where(b == 0, 0, np.remainder(a, np.where(b == 0, 1, b)))


R, C = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
A = np.arange(64, dtype="int64") * 3 - 50


@pytest.mark.parametrize("expr, ref", [
    ("(vr - 3) // (vc - 1)", lambda: numpy_floordiv(R - 3, C - 1)),
    ("(vr - 3) % (vc - 1)", lambda: numpy_floormod(R - 3, C - 1)),
    ("(vr * 5 - 17) // (2 - vc) + (vr * 5 - 17) % (3 - vc)",
     lambda: numpy_floordiv(R * 5 - 17, 2 - C) + numpy_floormod(R * 5 - 17, 3 - C)),
    ("T.min(vr * 3 - vc, vc * 2) - T.max(vr - vc, 1)",
     lambda: np.minimum(R * 3 - C, C * 2) - np.maximum(R - C, 1)),
    ("A[(vr * 8 + vc * 3) % 64] + A[T.min(vr * vc, 63)]",
     lambda: A[(R * 8 + C * 3) % 64] + A[np.minimum(R * C, 63)]),
])
@pytest.mark.parametrize("kind", ["unroll", "serial"])
def test_unrolled_index_arithmetic_matches_numpy(expr, ref, kind):
    func = from_source(SOURCE.format(kind=kind, expr=expr))
    out = np.zeros((8, 8), "int64")
    pyir.build(func, default_schedule=False)["f"](A, out)
    np.testing.assert_array_equal(out, ref())


def test_fold_index_wraps_and_leaves_division_by_zero_and_minus_one():
    """int64 arithmetic wraps as the machine's does; a division by 0 or -1 is not folded
    (codegen chooses its result as numpy does), and None says so."""
    x, y = Var("x"), Var("y")
    big = Binary("mul", x, IntImm(1 << 62))
    assert fold_index(big, {x: 3}) == -(1 << 62)
    assert fold_index(Binary("floordiv", x, y), {x: -7, y: 2}) == -4
    assert fold_index(Binary("floormod", x, y), {x: -7, y: 2}) == 1
    assert fold_index(Binary("floordiv", x, y), {x: 7, y: 0}) is None
    assert fold_index(Binary("add", IntImm(1), Binary("floormod", x, y)), {x: 7, y: -1}) is None
