"""IRModule construction: functions renamed to their keys, anything else refused."""

import pytest

import pyir
from pyir.ir import IRModule
from pyir.script import tensor as T


@T.prim_func
def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i]


def test_functions_take_the_name_of_their_key():
    mod = IRModule.from_dict({"first": copy}).with_function("second", copy)
    assert mod.names() == ["first", "second"]
    assert [f.name for _, f in mod.functions] == ["first", "second"]


def test_a_module_of_something_else_than_functions_is_an_error():
    with pytest.raises(pyir.Error, match="maps names .str. to prim or graph functions, got "
                       "'x': int"):
        IRModule.from_dict({"x": 3})
    with pytest.raises(pyir.Error, match="got 'y': str"):
        IRModule.from_dict({"f": copy}).with_function("y", "copy")
