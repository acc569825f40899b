"""Values of ``R.call_packed(..., sinfo_args=R.Object)``: held as the packed function
returned them, with the arrays in them the graph's own."""

import numpy as np
import pytest

import pyir
from pyir.script import graph as R
from pyir.script import ir as I


@pyir.ffi.register_func("test.obj.same", override=True)
def same(x):
    return x


@pyir.ffi.register_func("test.obj.pair", override=True)
def pair(x):
    return [x, (x, 1)]


@I.ir_module
class Objects:
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
