"""Graph code calling Python packed functions back: call_dps_packed with numpy views,
call_packed returning arrays, numbers and tuples, match_cast checked at run time, and
exceptions reaching the caller unchanged."""

import numpy as np
import pytest

import pyir
from pyir.script import from_source
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T

calls = []


@pyir.ffi.register_func("test.graph.scale2", override=True)
def scale2(x, out):
    calls.append(type(x))
    np.multiply(x, 2, out=out)


@pyir.ffi.register_func("test.graph.outer", override=True)
def outer(x, y):
    return np.multiply.outer(x, y).astype("float32")


@pyir.ffi.register_func("test.graph.stats", override=True)
def stats(x):
    return (float(x.sum()), x[::-1].copy())


@pyir.ffi.register_func("test.graph.count", override=True)
def count(x, shape):
    return int(x.size) + shape[0]


class Boom(RuntimeError):
    pass


@pyir.ffi.register_func("test.graph.boom", override=True)
def boom(x, out):
    raise Boom("from inside the kernel")


@pyir.ffi.register_func("test.graph.scribble_dps", override=True)
def scribble_dps(x, out):
    out[:] = 1
    x[0] = -1


@pyir.ffi.register_func("test.graph.scribble", override=True)
def scribble(x):
    x[0] = -1
    return x.copy()


@I.ir_module
class Packed:
    @T.prim_func
    def twice(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = X[vi] * T.float32(2)

    @T.prim_func
    def twice2(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = X[vi, vj] * T.float32(2)

    @R.function
    def dps(x: R.Tensor(("n",), "float32")):
        with R.dataflow():
            a = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((n,), "float32"))
            b = R.call_dps_packed("test.graph.scale2", (a,), out_sinfo=R.Tensor((n,), "float32"))
            c = R.call_tir(cls.twice, (b,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(c)
        return c

    @R.function
    def packed_array(x: R.Tensor(("n",), "float32"), y: R.Tensor(("m",), "float32")):
        a = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((n,), "float32"))
        o = R.call_packed("test.graph.outer", a, y, sinfo_args=R.Tensor((n, m), "float32"))
        b = R.call_tir(cls.twice2, (o,), out_sinfo=R.Tensor((n, m), "float32"))
        return b

    @R.function
    def packed_tuple(x: R.Tensor(("n",), "float32")):
        t = R.call_packed("test.graph.stats", x,
                          sinfo_args=R.Tuple(R.Prim("float64"), R.Tensor((n,), "float32")))
        r = t[1]
        b = R.call_tir(cls.twice, (r,), out_sinfo=R.Tensor((n,), "float32"))
        return (t[0], b)

    @R.function
    def packed_number(x: R.Tensor(("n",), "float32")):
        c = R.call_packed("test.graph.count", x, R.shape([n * 3]), sinfo_args=R.Prim("int64"))
        return c

    @R.function
    def cast(x: R.Tensor(("n",), "float32")):
        o = R.call_packed("test.graph.outer", x, x, sinfo_args=R.Tensor(ndim=2, dtype="float32"))
        p = R.match_cast(o, R.Tensor(("a", "b"), "float32"))
        q = R.call_tir(cls.twice2, (p,), out_sinfo=R.Tensor((a, b), "float32"))
        return q

    @R.function
    def cast_input(x: R.Tensor(ndim=1, dtype="float32")):
        y = R.match_cast(x, R.Tensor((6,), "float32"))
        z = R.call_tir(cls.twice, (y,), out_sinfo=R.Tensor((6,), "float32"))
        return z

    @R.function
    def scribbles_dps(x: R.Tensor(("n",), "float32")):
        y = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((n,), "float32"))
        z = R.call_dps_packed("test.graph.scribble_dps", (y,), out_sinfo=R.Tensor((n,), "float32"))
        return (y, z)

    @R.function
    def scribbles_packed(x: R.Tensor(("n",), "float32")):
        z = R.call_packed("test.graph.scribble", x, sinfo_args=R.Tensor((n,), "float32"))
        return z

    @R.function
    def raises(x: R.Tensor(("n",), "float32")):
        with R.dataflow():
            a = R.call_tir(cls.twice, (x,), out_sinfo=R.Tensor((n,), "float32"))
            b = R.call_dps_packed("test.graph.boom", (a,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(b)
        return b


@pytest.fixture(scope="module")
def lib(build_as):
    return build_as(Packed)


def test_call_dps_packed_gets_numpy_views(lib):
    calls.clear()
    x = np.arange(5, dtype="float32")
    np.testing.assert_array_equal(lib["dps"](x), 8 * x)
    assert calls == [np.ndarray]


def test_call_packed_returning_an_array(lib):
    x, y = np.arange(3, dtype="float32"), np.arange(4, dtype="float32")
    np.testing.assert_array_equal(lib["packed_array"](x, y), 2 * np.multiply.outer(2 * x, y))


def test_call_packed_returning_a_tuple_with_a_number(lib):
    x = np.arange(4, dtype="float32")
    total, b = lib["packed_tuple"](x)
    assert total == 6.0
    np.testing.assert_array_equal(b, 2 * x[::-1])


def test_call_packed_returning_a_number_with_a_shape_argument(lib):
    assert lib["packed_number"](np.zeros(5, "float32")) == 5 + 15


def _returning(returned, sinfo):
    """``main(x)`` of a module whose packed function "test.graph.result", declared
    ``sinfo``, returns ``returned``."""
    pyir.ffi.register_func("test.graph.result", lambda x: returned, override=True)
    mod = from_source(f"""
from pyir.script import graph as R, ir as I
@I.ir_module
class M:
    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.graph.result", x, sinfo_args={sinfo})
        return y
""")
    return lambda: pyir.build(mod)["main"](np.zeros(2, "float32"))


@pytest.mark.parametrize("returned, sinfo, expected", [
    (3, 'R.Prim("float32")', np.float32(3)),
    (0.1, 'R.Prim("float32")', np.float32(0.1)),
    (np.float64(0.1), 'R.Prim("float16")', np.float16(0.1)),
    (np.int64(5), 'R.Prim("int8")', np.int8(5)),
    (True, 'R.Prim("bool")', np.True_),
    (np.False_, 'R.Prim("bool")', np.False_),
])
def test_a_number_call_packed_returns_comes_back_in_its_declared_dtype(returned, sinfo,
                                                                       expected):
    """As an array's dtype is checked, a number is what its struct info declares (an int
    declared float32 came back an int, 0.1 unrounded)."""
    got = _returning(returned, sinfo)()
    assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize("returned, sinfo, words", [
    (np.complex128(1 + 2j), 'R.Prim("float32")', "returned complex128 np.complex128(1+2j), "
                                                 "expected a float32 number"),
    (1, 'R.Prim("bool")', "returned int 1, expected a bool number"),
    ((-2, 3), "R.Shape(ndim=2)", "returned tuple (-2, 3), expected a shape R.Shape(ndim=2) of "
                                 "non-negative int64 values"),
    ((2 ** 63, 3), "R.Shape(ndim=2)", "returned tuple (9223372036854775808, 3), expected a "
                                      "shape R.Shape(ndim=2) of non-negative int64 values"),
])
def test_a_packed_result_that_is_not_what_it_declares_is_refused(returned, sinfo, words):
    """A complex number declared float32 came back as its real part (numpy warning of it);
    a shape of negative values came back as a shape."""
    call = _returning(returned, sinfo)
    with pytest.raises(pyir.Error) as info:
        call()
    assert str(info.value) == f"graph function main, binding y: 'test.graph.result' {words}"


def test_match_cast_defines_shape_variables(lib):
    x = np.arange(3, dtype="float32")
    np.testing.assert_array_equal(lib["cast"](x), 2 * np.multiply.outer(x, x))


def test_match_cast_of_an_input(lib):
    x = np.arange(6, dtype="float32")
    np.testing.assert_array_equal(lib["cast_input"](x), 2 * x)


def test_exception_in_a_packed_function_reaches_the_caller_unchanged(lib):
    with pytest.raises(Boom, match="from inside the kernel") as info:
        lib["raises"](np.ones(3, "float32"))
    assert type(info.value) is Boom
    np.testing.assert_array_equal(lib["dps"](np.ones(2, "float32")), 8 * np.ones(2))


def test_threads_calling_a_graph_function_with_python_steps_at_once(lib):
    import threading

    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(200):
                x = rng.random(int(rng.integers(1, 9)), dtype=np.float32)
                y = rng.random(int(rng.integers(1, 9)), dtype=np.float32)
                np.testing.assert_allclose(lib["packed_array"](x, y),
                                           2 * np.multiply.outer(2 * x, y), rtol=1e-6)
        except Exception as e:  # collected and reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("name", ["scribbles_dps", "scribbles_packed"])
def test_a_packed_function_cannot_write_into_its_inputs(lib, name):
    """They were writable views: writing changed the caller's array, or a value a later
    binding (or the caller) reads."""
    x = np.arange(1, 5, dtype="float32")
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        lib[name](x)
    np.testing.assert_array_equal(x, [1, 2, 3, 4])
