"""Values of ``R.call_packed(..., sinfo_args=R.Object)``: held as the packed function
returned them, and given a shape or a dtype by ``R.match_cast`` before native code uses
them."""

import numpy as np
import pytest

import pyir
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T


returned = []


@pyir.ffi.register_func("test.obj.same", override=True)
def same(x):
    return x


@pyir.ffi.register_func("test.obj.pair", override=True)
def pair(x):
    return [x, (x, 1)]


@pyir.ffi.register_func("test.obj.next", override=True)
def next_value(x):
    return returned.pop(0)


@I.ir_module
class Objects:
    @T.prim_func
    def times(s: T.int64, X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in T.grid(n):
            with T.block("Y"):
                vi, = T.axis.remap("S", [i])
                Y[vi] = T.cast(s, "float32") * X[vi]

    @R.function
    def keep(x: R.Tensor(("n",), "float32")):
        a = R.add(x, x)
        y = R.call_packed("test.obj.same", a, sinfo_args=R.Object)
        return y

    @R.function
    def keep_nested(x: R.Tensor(("n",), "float32")):
        a = R.add(x, x)
        y = R.call_packed("test.obj.pair", a, sinfo_args=R.Object)
        return y

    @R.function
    def keep_input(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.obj.same", x, sinfo_args=R.Object)
        return y

    @R.function
    def to_tensor(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.obj.next", x, sinfo_args=R.Object)
        z = R.match_cast(y, R.Tensor(("n",), "float32"))
        w = R.add(z, x)
        return w

    @R.function
    def to_scalar(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.obj.next", x, sinfo_args=R.Object)
        k = R.match_cast(y, R.Prim("int64"))
        w = R.call_tir(cls.times, (k, x), out_sinfo=R.Tensor((n,), "float32"))
        return (w, k)


@pytest.fixture(scope="module")
def lib(build_as):
    return build_as(Objects)


def test_an_object_holding_an_argument_outlives_the_call(lib):
    """The packed function's argument, a view of the plan's memory, came back as the
    result: freed when the call returned (a crash when read)."""
    x = np.arange(50000, dtype="float32")
    first = lib["keep"](x)
    second = lib["keep"](x + 1)
    np.testing.assert_array_equal(first, 2 * x)
    np.testing.assert_array_equal(second, 2 * x + 2)
    a, (b, one) = lib["keep_nested"](x)
    lib["keep"](x + 3)
    np.testing.assert_array_equal(a, 2 * x)
    np.testing.assert_array_equal(b, 2 * x)
    assert one == 1


def test_an_object_holding_an_input_is_a_copy(lib):
    x = np.arange(5, dtype="float32")
    y = lib["keep_input"](x)
    np.testing.assert_array_equal(y, x)
    assert not np.may_share_memory(y, x)


def test_match_cast_of_an_object_to_a_tensor_feeds_native_code(lib):
    """The tensor's data pointer was never put in the frame: native code read a null (or
    an earlier call's) pointer."""
    x = np.arange(4, dtype="float32")
    returned[:] = [np.full(4, 5, "float32"), np.arange(8, dtype="float32")[::2]]
    np.testing.assert_array_equal(lib["to_tensor"](x), x + 5)
    np.testing.assert_array_equal(lib["to_tensor"](x), x + np.arange(0, 8, 2))


def test_match_cast_of_an_object_to_a_scalar_is_checked_and_passed(lib):
    """Any object passed unchecked, and native code read a slot never written (x * 0)."""
    x = np.arange(4, dtype="float32")
    returned[:] = [7]
    w, k = lib["to_scalar"](x)
    np.testing.assert_array_equal(w, 7 * x)
    assert k == 7
    for value, words in [("hello", r"the value is str 'hello', expected an int64 number$"),
                         (2.5, "the value is float 2.5, expected an int64 number: 2.5 is not "
                               "an integer"),
                         (2 ** 70, "the value is int 1180591620717411303424, expected an int64 "
                                   "number: 1180591620717411303424 is outside its range")]:
        returned[:] = [value]
        with pytest.raises(pyir.Error, match="graph function to_scalar: match_cast in binding "
                                             "k: " + words):
            lib["to_scalar"](x)
