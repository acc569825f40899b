"""Errors of compiled graph functions name the binding and both shapes."""

import inspect

import numpy as np
import pytest

import pyir
from pyir.script import graph as R
from pyir.script import ParseError
from pyir.script import ir as I
from pyir.script import tensor as T


@pyir.ffi.register_func("test.err.wrong_shape", override=True)
def wrong_shape(x):
    return np.zeros((3, 4), "float32")


@pyir.ffi.register_func("test.err.wrong_type", override=True)
def wrong_type(x):
    return [1, 2]


@pyir.ffi.register_func("test.err.wrong_dtype", override=True)
def wrong_dtype(x):
    return np.zeros(x.shape, "float64")


@I.ir_module
class Bad:
    @T.prim_func
    def twice(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = X[vi] * T.float32(2)

    @R.function
    def shape(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.err.wrong_shape", x, sinfo_args=R.Tensor((n, 4), "float32"))
        return y

    @R.function
    def flat(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.err.wrong_shape", x, sinfo_args=R.Tensor((n,), "float32"))
        return y

    @R.function
    def kind(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.err.wrong_type", x, sinfo_args=R.Tensor((n,), "float32"))
        return y

    @R.function
    def dtype(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.err.wrong_dtype", x, sinfo_args=R.Tensor((n,), "float32"))
        return y

    @R.function
    def cast(x: R.Tensor(("n",), "float32")):
        y = R.match_cast(x, R.Tensor((5,), "float32"))
        z = R.call_tir(cls.twice, (y,), out_sinfo=R.Tensor((5,), "float32"))
        return z


@pytest.fixture(scope="module")
def lib(build_as):
    return build_as(Bad)


def test_packed_result_of_the_wrong_shape_names_binding_and_both_shapes(lib):
    with pytest.raises(pyir.Error, match=r"binding y: 'test.err.wrong_shape' returned an array "
                                         r"of shape \(3, 4\).*expected R.Tensor\(\(n, 4\).*"
                                         r"= \(2, 4\)"):
        lib["shape"](np.zeros(2, "float32"))


def test_the_expected_shape_of_one_dimension_reads_as_python_writes_it(lib):
    """``= (2)`` was the shape (2,)."""
    with pytest.raises(pyir.Error, match=r"returned an array of shape \(3, 4\) and dtype "
                                         r"float32, expected R.Tensor\(\(n,\), \"float32\"\) "
                                         r"= \(2,\)$"):
        lib["flat"](np.zeros(2, "float32"))


def test_packed_result_of_the_wrong_type(lib):
    with pytest.raises(pyir.Error, match=r"binding y: .* returned list .*expected an array"):
        lib["kind"](np.zeros(2, "float32"))


def test_packed_result_of_the_wrong_dtype(lib):
    with pytest.raises(pyir.Error, match=r"binding y: .*dtype float64, expected R.Tensor"):
        lib["dtype"](np.zeros(2, "float32"))


def test_failed_match_cast_names_binding_and_both_shapes(lib):
    with pytest.raises(pyir.Error, match=r"match_cast in binding y: the value has shape \(3,\), "
                                         r"but R.Tensor\(\(5,\), \"float32\"\) requires \(5,\)"):
        lib["cast"](np.zeros(3, "float32"))
    np.testing.assert_array_equal(lib["cast"](np.ones(5, "float32")), 2 * np.ones(5))


def test_unknown_packed_name_at_build_time():
    @I.ir_module
    class Unknown:
        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            with R.dataflow():
                y = R.call_dps_packed("test.err.nowhere", (x,), out_sinfo=R.Tensor((n,), "float32"))
                R.output(y)
            return y

    with pytest.raises(pyir.Error, match="binding y: no global function named "
                                         "'test.err.nowhere' is registered"):
        pyir.build(Unknown)


def test_unknown_call_packed_name_at_build_time():
    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.err.missing", x, sinfo_args=R.Tensor((n,), "float32"))
        return y

    with pytest.raises(pyir.Error, match="'test.err.missing'"):
        pyir.build(main)


def test_call_tir_rank_mismatch_is_reported_at_the_call():
    """It was reported only by pyir.build, without the line."""
    with pytest.raises(ParseError) as info:
        @I.ir_module
        class Checked:
            @T.prim_func
            def twice(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
                T.evaluate(0)

            @R.function
            def checked(x: R.Tensor(("n", "m"), "float32")):
                with R.dataflow():
                    y = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((n,), "float32"))
                    R.output(y)
                return y
    line = inspect.currentframe().f_lineno - 3
    assert (info.value.filename, info.value.line) == (__file__, line)
    assert "graph function checked, binding y: twice parameter 'X' expects float32 with 1 " \
           "dimension(s), got R.Tensor((n, m), \"float32\")" in info.value.message
    assert f"{line:>5} | y = R.call_tir(cls.twice, (x,), " in str(info.value)


def test_call_tir_mismatch_in_a_module_put_together_is_reported_at_build():
    """A module assembled from functions (no source to point at) is checked by the build."""
    @I.ir_module
    class Wide:
        @T.prim_func
        def twice(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n",), "float32")):
            T.evaluate(0)

        @R.function
        def checked(x: R.Tensor(("n", "m"), "float32")):
            y = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((n,), "float32"))
            return y

    with pytest.raises(pyir.Error, match="graph function checked, binding y: twice parameter "
                                         "'X' expects float32 with 1 dimension"):
        pyir.build(Wide.with_function("twice", Bad["twice"]))
    with pytest.raises(pyir.Error, match="graph function checked, binding y: call_tir of "
                                         "'twice', which is not a prim function of the module"):
        pyir.build(Wide.without("twice"))


def test_bad_inputs_are_argument_errors(lib):
    with pytest.raises(TypeError, match="argument 'x' expects dtype float32"):
        lib["cast"](np.zeros(5, "int32"))
    with pytest.raises(TypeError, match="takes 1 argument"):
        lib["cast"]()


@I.ir_module
class _Pair:
    @T.prim_func
    def add(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32"),
            C: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] + B[vi]

    @R.function
    def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("k",), "float32")):
        with R.dataflow():
            z = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((n,), "float32"))
            R.output(z)
        return z


def test_call_tir_shapes_that_cannot_be_proven_equal_are_checked_natively():
    lib = pyir.build(_Pair)
    np.testing.assert_array_equal(lib["main"](np.ones(3, "float32"), np.ones(3, "float32")),
                                  2 * np.ones(3))
    with pytest.raises(ValueError, match="binding z: add parameter 'B': dimension 0 of "
                                         "R.Tensor\\(\\(k,\\), \"float32\"\\) must equal "
                                         "n .requires n == k, but n = 3, k = 4"):
        lib["main"](np.ones(3, "float32"), np.ones(4, "float32"))


def test_match_cast_to_a_new_variable_inside_an_expression_is_refused_at_build():
    """It could never succeed (the variable is read from a whole dimension); the call said
    the value's shape 'requires (None,)'."""
    @I.ir_module
    class Cast:
        @R.function
        def mc(x: R.Tensor(ndim=1, dtype="float32")):
            y = R.match_cast(x, R.Tensor(("k * 2",), "float32"))
            return y

    with pytest.raises(pyir.Error, match=r"binding y: match_cast: shape variable k is new and "
                       r"appears only inside an expression of R.Tensor\(\(k \* 2,\), "):
        pyir.build(Cast)


@I.ir_module
class Shrinking:
    @T.prim_func
    def drop1(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n - 1",), "float32")):
        for i in range(n - 1):
            with T.block("Y"):
                vi = T.axis.spatial(n - 1, i)
                Y[vi] = X[vi + 1]

    @T.prim_func
    def total(X: T.Buffer(("n",), "float32"), Y: T.Buffer((1,), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.reduce(n, i)
                with T.init():
                    Y[0] = T.float32(0)
                Y[0] = Y[0] + X[vi]

    @R.function
    def ret(x: R.Tensor(("n",), "float32")):
        return R.call_tir(cls.drop1, (x,), out_sinfo=R.Tensor((n - 1,), "float32"))

    @R.function
    def inter(x: R.Tensor(("n",), "float32")):
        y = R.call_tir(cls.drop1, (x,), out_sinfo=R.Tensor((n - 1,), "float32"))
        z = R.call_tir(cls.drop1, (y,), out_sinfo=R.Tensor((n - 2,), "float32"))
        return R.call_tir(cls.total, (z,), out_sinfo=R.Tensor((1,), "float32"))


def test_a_negative_shape_for_the_arguments_is_an_argument_error(build_as):
    """n = 0 made numpy's empty fail inside the call (a ValueError naming nothing); n = 1
    gave an intermediate of shape (-1,) and returned 0 silently."""
    lib = build_as(Shrinking)
    np.testing.assert_array_equal(lib["ret"](np.arange(3, dtype="float32")), [1, 2])
    np.testing.assert_array_equal(lib["inter"](np.arange(4, dtype="float32")), [5])
    with pytest.raises(pyir.ArgumentValueError, match=r"graph function ret: the result "
                       r"R.Tensor\(\(n - 1,\), \"float32\"\) would have the negative shape "
                       r"\(-1,\)"):
        lib["ret"](np.zeros(0, "float32"))
    with pytest.raises(pyir.ArgumentValueError, match=r"graph function inter, binding z: "
                       r"dimension 0 of drop1's result .* must not be negative \(requires "
                       r"n - 2 >= 0, but n = 1\)"):
        lib["inter"](np.zeros(1, "float32"))


def test_errors_of_calls_in_return_or_nested_name_the_binding_written():
    """A call written in ``return``, or inside another call, was named "binding lv1" (a
    variable legalize made up), where the parser says "binding return"."""
    pyir.ffi.register_func("test.err.fill", lambda x, o: o.fill(1), override=True)

    @I.ir_module
    class Unshaped:
        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            return R.call_dps_packed("test.err.fill", (x,),
                                     out_sinfo=R.Tensor(ndim=1, dtype="float32"))

    with pytest.raises(pyir.Error, match=r"^graph function main, binding return: an output "
                       r"must be a tensor of known shape"):
        pyir.build(Unshaped)

    @I.ir_module
    class Fixed:
        @T.prim_func
        def four(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("Y"):
                    vi = T.axis.spatial(4, i)
                    Y[vi] = X[vi] + T.float32(1)

        @R.function
        def ret(x: R.Tensor(("n",), "float32")):
            return R.exp(R.call_tir(cls.four, (x,), out_sinfo=R.Tensor((4,), "float32")))

        @R.function
        def nested(x: R.Tensor(("n",), "float32")):
            y = R.call_tir(cls.four, (R.exp(x),), out_sinfo=R.Tensor((4,), "float32"))
            return y

    lib = pyir.build(Fixed)
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(lib["ret"](x), np.exp(x + 1), rtol=1e-6)
    np.testing.assert_allclose(lib["nested"](x), np.exp(x) + 1, rtol=1e-6)
    for name, binding in (("ret", "return"), ("nested", "y")):
        with pytest.raises(pyir.ArgumentValueError, match=rf"^graph function {name}, binding "
                           rf"{binding}: four parameter 'X': dimension 0 of .* must equal 4 "
                           r"\(requires 4 == n, but n = 5\)"):
            lib[name](np.ones(5, "float32"))


@I.ir_module
class Dividing:
    @T.prim_func
    def fill(Y: T.Buffer(("m",), "float32")):
        for i in range(m):
            with T.block("Y"):
                vi = T.axis.spatial(m, i)
                Y[vi] = T.float32(1)

    @T.prim_func
    def scale(X: T.Buffer(("n",), "float32"), s: T.int64, Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = X[vi] * T.cast(s, "float32")

    @R.function
    def shape_of(x: R.Tensor(("n", "k"), "float32")):
        return R.shape([n // k])

    @R.function
    def param(x: R.Tensor(("n", "k"), "float32"), y: R.Tensor(("n // k",), "float32")):
        return y

    @R.function
    def result(x: R.Tensor(("n", "k"), "float32")):
        y = R.call_tir(cls.fill, (), out_sinfo=R.Tensor((n // k,), "float32"))
        return y

    @R.function
    def intermediate(x: R.Tensor(("n", "k"), "float32")):
        y = R.call_tir(cls.fill, (), out_sinfo=R.Tensor((n % k + 1,), "float32"))
        return R.sum(y)

    @R.function
    def scalar(x: R.Tensor(("n", "k"), "float32")):
        y = R.call_tir(cls.scale, (R.sum(x, axis=1), R.prim_value(n // k)),
                       out_sinfo=R.Tensor((n,), "float32"))
        return y


def test_a_shape_that_divides_by_zero_is_an_error_naming_the_expression(build_as):
    """k = 0 in n // k or n % k raised a bare ZeroDivisionError where Python computes the
    shape (a result, R.shape, a parameter's), and was silently 0 where native code does (an
    intermediate's shape, a scalar argument)."""
    lib = build_as(Dividing)
    x = np.ones((6, 4), "float32")
    assert lib["shape_of"](x) == (1,)
    np.testing.assert_array_equal(lib["param"](x, np.arange(1, dtype="float32")), [0])
    np.testing.assert_array_equal(lib["result"](x), [1])
    assert lib["intermediate"](x) == 3
    np.testing.assert_array_equal(lib["scalar"](x), np.full(6, 4))
    x = np.ones((2, 0), "float32")
    native = r"the divisor of n {} k must not be 0 \(requires k != 0, but k = 0\)$"
    for name, args, message in [
            ("shape_of", (x,), r"^graph function shape_of, binding return: "
                               + native.format("//")),
            ("param", (x, np.ones(0, "float32")), r"^param: argument 'y' expects shape "
             r"\(n // k,\): dimension 0, n // k, cannot be computed: the divisor of n // k is "
             r"0 \(with n = 2, k = 0\)$"),
            ("result", (x,), r"^graph function result: the result R.Tensor\(\(n // k,\), "
                             r"\"float32\"\) cannot be allocated: the divisor of n // k is 0 "
                             r"\(with n = 2, k = 0\)$"),
            ("intermediate", (x,), r"^graph function intermediate, binding y: "
                                   + native.format("%")),
            ("scalar", (x,), r"^graph function scalar, binding y: " + native.format("//"))]:
        with pytest.raises(pyir.ArgumentValueError, match=message):
            lib[name](*args)


def test_a_scalar_argument_computed_past_int64_is_an_error(build_as):
    """R.prim_value(k * k * k) passed to a T.int64 parameter wrapped (2**66 to 0): the call
    returned x * 0; returned, the same value was refused."""
    @I.ir_module
    class Cube:
        @T.prim_func
        def scale(X: T.Buffer(("n",), "float32"), s: T.int64, Y: T.Buffer(("n",), "float32")):
            for i in range(n):
                with T.block("Y"):
                    vi = T.axis.spatial(n, i)
                    Y[vi] = X[vi] * T.cast(s, "float32")

        @R.function
        def main(x: R.Tensor(("n",), "float32"), s: R.Shape(["k"])):
            y = R.call_tir(cls.scale, (x, R.prim_value(k * k * k)),
                           out_sinfo=R.Tensor((n,), "float32"))
            return y

    lib = build_as(Cube)
    x = np.arange(3, dtype="float32")
    np.testing.assert_array_equal(lib["main"](x, (3,)), 27 * x)
    with pytest.raises(pyir.ArgumentValueError, match=r"^graph function main, binding y: "
                       r"scale parameter 's': the value k \* k \* k must fit in int64 "
                       r"\(requires k \* k \* k <= 9223372036854775807, but k = 4194304\)$"):
        lib["main"](x, (2 ** 22,))


def test_a_failed_call_reads_its_error_before_another_call_takes_its_frame():
    """The frame of a failed call went back to the pool before its error was read from it:
    a call in another thread taking it then (here: as soon as it is back) made the error
    name that call's values (n = 7, k = 9)."""
    f = pyir.build(_Pair)["main"]
    namespace = f._call.__globals__
    other = []

    class Pool(list):
        def append(self, item):
            super().append(item)
            while other:
                with pytest.raises(pyir.Error):
                    f(*other.pop())

    namespace["pool"] = Pool(namespace["pool"])
    other.append((np.ones(7, np.float32), np.ones(9, np.float32)))
    with pytest.raises(pyir.ArgumentValueError, match=r"requires n == k, but n = 3, k = 4\)$"):
        f(np.ones(3, np.float32), np.ones(4, np.float32))
    assert not other
