"""Numeric semantics of compiled expressions against numpy: one elementwise prim function
``O[i] = <expr>`` built with and without the default schedule."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import pyir
from pyir.script import from_source

SOURCE = '''from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n",), "{a}"), B: T.Buffer(("n",), "{b}"), O: T.Buffer(("n",), "{out}")):
    for i in T.serial(n):
        with T.block("O"):
            vi = T.axis.spatial(n, i)
            O[vi] = {expr}
'''


def evaluate(expr, a, out_dtype, opt_level="O3", b=None):
    """``expr`` of ``A[vi]``, ``B[vi]`` and ``vi`` over ``a`` and ``b`` (default: ``a``),
    scalar and vectorized (equal results)."""
    b = a if b is None else b
    func = from_source(SOURCE.format(a=a.dtype, b=b.dtype, out=out_dtype, expr=expr))
    results = []
    for vectorized in (False, True):
        out = np.zeros(a.shape, out_dtype)
        pyir.build(func, default_schedule=vectorized, opt_level=opt_level)["f"](a, b, out)
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    return results[0]


@pytest.mark.parametrize("expr, ref", [
    ("vi // vi", lambda a, vi: vi // vi),
    ("(vi * 3 + 1) // vi", lambda a, vi: (vi * 3 + 1) // vi),
    ("A[vi] // A[vi]", lambda a, vi: a // a),
    ("(A[vi] * T.int64(3) + T.int64(1)) // A[vi]", lambda a, vi: (a * 3 + 1) // a)])
def test_floor_division_by_a_symbolic_zero(expr, ref):
    """``x // x`` and ``(3 * x + 1) // x`` are 0 at ``x == 0``, as ``x // 0`` is (numpy's
    rule, which codegen follows). The int64 simplifier took the multiple of the divisor out
    of the dividend whatever the divisor (``x // x`` became 1, ``(3 * x + 1) // x`` became
    ``3 + 1 // x``), so at 0 they were 1 and 3."""
    a = np.array([0, 1, -3, 5, 0, 7, -1, 2], "int64")
    with np.errstate(divide="ignore"):
        expected = ref(a, np.arange(len(a)))
    np.testing.assert_array_equal(evaluate(expr, a, "int64"), expected)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_negation_flips_the_sign_of_zero(dtype):
    """``-x`` of +0.0 is -0.0 (``1 / -x`` is -inf), as numpy's negative. Unary minus was
    parsed as ``0.0 - x``, which is +0.0 for x = +0.0: ``1 / -x`` was +inf."""
    a = np.array([0.0, -0.0, 1.5, -np.inf, np.nan], dtype)
    with np.errstate(divide="ignore"):
        expected = np.float32(1) / (-a).astype("float32")
    got = evaluate('T.float32(1.0) / T.cast(-A[vi], "float32")', a, "float32")
    np.testing.assert_array_equal(got, expected)


def test_graph_negative_flips_the_sign_of_zero():
    """R.negative of a float tensor, legalized to ``0.0 - x``, gave +0.0 for +0.0 (numpy:
    -0.0); it is legalized to ``-x`` now, negation in the tensor language."""
    main = from_source('''from pyir.script import graph as R

@R.function
def main(a: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    return R.negative(a)
''')
    a = np.array([0.0, -0.0, 2.0, -np.inf], "float32")
    got = pyir.build(main)["main"](a)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(-a))
    np.testing.assert_array_equal(got, -a)


def test_unsigned_minimum_with_zero_of_a_float_conversion():
    """``T.min(T.cast(f, "uint8"), T.uint8(0))`` (either order) built at opt_level "none"
    aborted the process: LLVM's instruction selection asserts (a 0-bit integer type) on the
    unsigned minimum with 0 of an ``fptoui``, which only instcombine used to remove. The
    builder decides ``x < 0`` unsigned, and min/max put a constant on the right. Run in a
    child process, which a regression kills instead of the test session."""
    code = """if True:
        import numpy as np
        import test_expr_semantics as t
        a = np.array([0.0, 1.5, 7.0, 200.0, 3.0, 9.0, 4.0, 2.0, 1.0], "float32")
        for expr in ['T.min(T.cast(A[vi], "uint8"), T.uint8(0))',
                     'T.min(T.uint8(0), T.cast(A[vi], "uint8"))']:
            assert not t.evaluate(expr, a, "uint8", opt_level="none").any()
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=pathlib.Path(__file__).parent)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("dtype, low", [("float16", -17.0), ("float32", -104.0),
                                        ("float64", -745.0)])
def test_sigmoid_of_large_negative_numbers(dtype, low):
    """``sigmoid(x)`` was ``1 / (1 + e**-x)``, 0 once ``e**-x`` overflowed although the
    result is a subnormal number still: float16 ``sigmoid(-12)`` (6.1e-6) was 0 from -11.1
    on, float32 from -88.7, float64 from -709.8."""
    a = np.linspace(low, 0.0, 301).astype(dtype)
    expected = (1 / (1 + np.exp(-a.astype(np.longdouble)))).astype(dtype)
    got = evaluate("T.sigmoid(A[vi])", a, dtype)
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps,
                               atol=2 * np.finfo(dtype).smallest_subnormal)


@pytest.mark.parametrize("expr, ref", [
    ('T.max(T.int64(-7), T.cast(A[vi], "int64"))', lambda b: np.maximum(b, -7)),
    ('T.cast(A[vi], "int64") // T.int64(4)', lambda b: b // 4),
    ('T.cast(T.cast(A[vi], "int64") < T.int64(0), "int64")', lambda b: (b < 0).astype("int64"))])
def test_uint64_cast_to_int64_wraps(expr, ref):
    """``int64(x)`` of a uint64 ``x >= 2**63`` is negative. Its bounds were the uint64
    value's (int64 is unbounded to the bounds, as indices do not overflow), so
    ``max(-7, int64(x))`` became ``int64(x)``, ``int64(x) < 0`` False, and ``// 4``
    truncated."""
    a = np.array([2**64 - 1, 2**63, 5, 0, 2**63 - 1, 2**63 + 9], "uint64")
    np.testing.assert_array_equal(evaluate(expr, a, "int64"), ref(a.astype("int64")))
