"""Audit of the runtime's, the graph compiler's and the graph operators' error messages that
no other test reached: each triggered through the public API (``pyir.build`` of decorated
code, calls of the built functions) and checked for its words."""

import os
import re
import stat

import numpy as np
import pytest

import pyir
from pyir.script import ParseError
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T

from source_lines import line_in

returned = []
PACKED = ("test.audit_rt.next", "test.audit_rt.same")


@pytest.fixture(scope="module", autouse=True)
def packed_functions():
    """``test.audit_rt.next`` returns the values a test puts in ``returned``, in turn."""
    pyir.ffi.register_func(PACKED[0], lambda *args: returned.pop(0), override=True)
    pyir.ffi.register_func(PACKED[1], lambda x: x, override=True)
    yield
    for name in PACKED:
        pyir.ffi.remove_global_func(name)


@pytest.fixture(scope="module")
def graphs(packed_functions):
    @I.ir_module
    class Graphs:
        @R.function
        def audit_tuple_in(t: R.Tuple(R.Tensor(("n",), "float32"),
                                      R.Tensor(("n",), "float32"))):
            x = t[0]
            y = t[1]
            z = R.add(x, y)
            return z

        @R.function
        def audit_pair(x: R.Tensor(("n",), "float32")):
            y = R.call_packed("test.audit_rt.next", x,
                              sinfo_args=R.Tuple(R.Tensor((n,), "float32"),
                                                 R.Tensor((n,), "float32")))
            return y

        @R.function
        def audit_cast(x: R.Tensor(("n",), "float32")):
            y = R.call_packed("test.audit_rt.next", x, sinfo_args=R.Object)
            z = R.match_cast(y, R.Tensor(("n",), "float32"))
            return z

        @R.function
        def audit_float(x: R.Tensor(("n",), "float32")):
            y = R.call_packed("test.audit_rt.next", x, sinfo_args=R.Prim("float32"))
            return y

    return pyir.build(Graphs)


def test_a_tuple_taking_graph_function_given_too_many_arguments(graphs):
    """Two arrays for one tuple parameter: the count is named."""
    x = np.ones(3, "float32")
    with pytest.raises(pyir.ArgumentTypeError, match=r"^audit_tuple_in takes 1 argument\(s\), "
                                                     r"2 given$"):
        graphs["audit_tuple_in"](x, x)


def test_a_packed_result_that_is_not_the_declared_tuple(graphs):
    """An array where R.Tuple was declared names the binding, the function and both sides."""
    x = np.ones(3, "float32")
    returned[:] = [x]
    with pytest.raises(pyir.Error, match=re.escape(
            "graph function audit_pair, binding y: 'test.audit_rt.next' returned an array of "
            "shape (3,) and dtype float32, expected a tuple R.Tuple(R.Tensor((n,), "
            "\"float32\"), R.Tensor((n,), \"float32\"))")):
        graphs["audit_pair"](x)


def test_match_cast_of_a_value_of_the_wrong_kind_or_dtype(graphs):
    """A list, or an int32 array, cast to a float32 tensor is refused naming the binding."""
    x = np.ones(3, "float32")
    for value, shown in (([1, 2], "list [1, 2]"),
                         (np.zeros(3, "int32"), "an array of shape (3,) and dtype int32")):
        returned[:] = [value]
        with pytest.raises(pyir.Error, match=re.escape(
                f"graph function audit_cast: match_cast in binding z: the value ({shown}) "
                "does not match R.Tensor((n,), \"float32\")")):
            graphs["audit_cast"](x)


def test_a_packed_float_result_of_the_wrong_kind_or_out_of_range(graphs):
    """A str, or a number past float32's range, for R.Prim("float32") is refused."""
    x = np.ones(3, "float32")
    returned[:] = ["fast"]
    with pytest.raises(pyir.Error, match=r"^graph function audit_float, binding y: "
                       r"'test.audit_rt.next' returned str 'fast', expected a float32 number$"):
        graphs["audit_float"](x)
    returned[:] = [1e300]
    with pytest.raises(pyir.Error, match=re.escape(
            "returned float 1e+300, expected a float32 number: 1e+300 is outside its range "
            "(±3.40282e+38)")):
        graphs["audit_float"](x)


def test_a_graph_parameter_that_is_an_object_is_refused_at_build():
    """R.Object has no layout a compiled call could check."""
    @R.function
    def audit_object_param(x: R.Object):
        return x

    with pytest.raises(pyir.Error, match=r"^graph function audit_object_param, parameter x: only "
                       r"tensors and shapes of known rank, and scalars, can be compiled, not "
                       r"R.Object$"):
        pyir.build(audit_object_param)


def test_a_shape_parameter_of_unknown_rank_is_refused_at_build():
    @R.function
    def audit_shape_param(s: R.Shape()):
        return s

    with pytest.raises(pyir.Error, match=r"^graph function audit_shape_param, parameter s: only "
                       r"tensors and shapes of known rank, and scalars, can be compiled, not "
                       r"R.Shape\(\)$"):
        pyir.build(audit_shape_param)


def test_a_graph_parameter_of_unknown_rank_is_refused_at_build():
    """A tensor parameter without ndim cannot be given shape variables."""
    @R.function
    def audit_no_rank(x: R.Tensor(dtype="float32")):
        return x

    with pytest.raises(pyir.Error, match=re.escape(
            "graph function audit_no_rank, binding x: parameter x is R.Tensor(dtype="
            "\"float32\"); a compiled graph function needs the rank of every input tensor")):
        pyir.build(audit_no_rank)


def test_match_cast_to_a_shape_is_refused_at_build(packed_functions):
    """Only tensors and scalars can be match_cast in compiled code."""
    @R.function
    def audit_cast_shape(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.audit_rt.same", x, sinfo_args=R.Object)
        z = R.match_cast(y, R.Shape([2]))
        return z

    with pytest.raises(pyir.Error, match=r"^graph function audit_cast_shape, binding z: "
                       r"match_cast is supported on a tensor or a scalar$"):
        pyir.build(audit_cast_shape)


def test_a_dps_output_of_unknown_shape_is_refused_at_build(packed_functions):
    """call_dps_packed needs the output's shape to allocate it."""
    @R.function
    def audit_dps_rank(x: R.Tensor(("n",), "float32")):
        y = R.call_dps_packed("test.audit_rt.same", (x,),
                              out_sinfo=R.Tensor(ndim=1, dtype="float32"))
        return y

    with pytest.raises(pyir.Error, match=re.escape(
            "graph function audit_dps_rank, binding y: an output must be a tensor of known "
            "shape, not R.Tensor(ndim=1, dtype=\"float32\")")):
        pyir.build(audit_dps_rank)


def test_an_operator_on_a_tensor_of_unknown_shape_is_refused_at_build():
    """R.add of a tensor known only by rank asks for a match_cast."""
    @R.function
    def audit_ndim_add(x: R.Tensor(ndim=1, dtype="float32")):
        y = R.add(x, x)
        return y

    with pytest.raises(pyir.Error, match=r"^graph function audit_ndim_add, binding y: R.add: "
                       r"cannot legalize a call on tensors of unknown shape; match_cast them "
                       r"to a shape first$"):
        pyir.build(audit_ndim_add)


def test_a_shape_variable_only_inside_an_expression_cannot_be_bound_by_a_call():
    """n appears only in n * 2: a call could not tell n from the array's shape."""
    @T.prim_func
    def audit_double(X: T.Buffer(("n * 2",), "float32")):
        for i in range(n * 2):
            with T.block("X"):
                vi = T.axis.spatial(n * 2, i)
                X[vi] = T.float32(1)

    lib = pyir.build(audit_double)
    with pytest.raises(pyir.Error, match=r"^audit_double: shape variable\(s\) n appear in no "
                       r"parameter dimension by themselves, so a call cannot determine them$"):
        lib["audit_double"]


@T.prim_func
def audit_copy(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("Y"):
            vi = T.axis.spatial(n, i)
            Y[vi] = X[vi]


@pytest.fixture(scope="module")
def copy_lib():
    return pyir.build(audit_copy)


def test_an_executable_loaded_from_a_file_cannot_be_exported_again(copy_lib, tmp_path):
    """A loaded library has no LLVM IR to link again; it still runs."""
    path = tmp_path / "copy.so"
    copy_lib.export_library(path)
    loaded = pyir.load_module(path)
    with pytest.raises(pyir.Error, match=f"^cannot export an executable loaded from "
                                         f"{re.escape(str(path))}$"):
        loaded.export_library(tmp_path / "again.so")
    y = np.zeros(3, "float32")
    loaded["audit_copy"](np.arange(3, dtype="float32"), y)
    np.testing.assert_array_equal(y, [0, 1, 2])


def test_export_without_a_c_compiler(copy_lib, tmp_path, monkeypatch):
    """A CC that is not there names the path to link and says to set CC."""
    missing = str(tmp_path / "no-such-cc")
    monkeypatch.setenv("CC", missing)
    path = tmp_path / "k.so"
    with pytest.raises(pyir.Error, match=re.escape(
            f"export_library needs a C compiler to link {path}; {missing!r} was not found "
            "(set CC)")):
        copy_lib.export_library(path)


def test_export_when_linking_fails(copy_lib, tmp_path, monkeypatch):
    """A linker that fails: its command line and its complaint come back."""
    cc = tmp_path / "failing-cc"
    cc.write_text("#!/bin/sh\necho 'audit: cannot link' >&2\nexit 1\n")
    cc.chmod(cc.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CC", str(cc))
    path = tmp_path / "k.so"
    with pytest.raises(pyir.Error) as info:
        copy_lib.export_library(path)
    message = str(info.value)
    assert message.startswith(f"linking {path} failed: {cc} -shared -o {path} "), message
    assert message.endswith("\naudit: cannot link"), message
    assert not os.path.exists(path)


def parse_error(test, needle, make):
    """The ParseError of ``make()``, which must point at ``needle``'s line of ``test``."""
    with pytest.raises(ParseError) as info:
        make()
    assert (info.value.filename, info.value.line) == (__file__, line_in(test, needle))
    return info.value.message


def test_matmul_of_a_vector_is_refused_where_it_is_written():
    """R.matmul needs 2-D operands."""
    def make():
        @R.function
        def f(x: R.Tensor(("n",), "float32")):
            y = R.matmul(x, x)
            return y

    message = parse_error(test_matmul_of_a_vector_is_refused_where_it_is_written,
                          "R.matmul(x, x)", make)
    assert message == ("R.matmul needs tensors of at least 2 dimensions, not "
                       "R.Tensor((n,), \"float32\")")


def test_a_reduction_naming_a_dimension_twice():
    """axis=(0, -2) of a 2-D tensor is dimension 0 twice."""
    def make():
        @R.function
        def f(x: R.Tensor(("n", "m"), "float32")):
            y = R.sum(x, axis=(0, -2))
            return y

    message = parse_error(test_a_reduction_naming_a_dimension_twice,
                          "R.sum(x, axis=(0, -2))", make)
    assert message == "R.sum: axis (0, -2) names a dimension twice"


def test_a_reduction_axis_that_is_not_an_integer():
    """axis=1.5 is refused, showing the value."""
    def make():
        @R.function
        def f(x: R.Tensor(("n", "m"), "float32")):
            y = R.max(x, axis=1.5)
            return y

    message = parse_error(test_a_reduction_axis_that_is_not_an_integer,
                          "R.max(x, axis=1.5)", make)
    assert message == "R.max: axis must be an integer, not 1.5"


def test_keepdims_that_is_not_a_bool():
    """keepdims=1 would pass for True; it is refused."""
    def make():
        @R.function
        def f(x: R.Tensor(("n", "m"), "float32")):
            y = R.mean(x, axis=0, keepdims=1)
            return y

    message = parse_error(test_keepdims_that_is_not_a_bool,
                          "R.mean(x, axis=0, keepdims=1)", make)
    assert message == "R.mean: keepdims must be True or False, not 1"


def test_an_operator_given_a_tuple():
    """R.add of a tuple names the argument and shows its struct info."""
    def make():
        @R.function
        def f(x: R.Tensor(("n",), "float32")):
            t = (x, x)
            y = R.add(t, x)
            return y

    message = parse_error(test_an_operator_given_a_tuple, "R.add(t, x)", make)
    assert message == ("R.add: argument 0 must be a tensor, not R.Tuple(R.Tensor((n,), "
                       "\"float32\"), R.Tensor((n,), \"float32\"))")


def test_a_tuple_index_out_of_range():
    """t[2] of a pair says how many fields it has."""
    def make():
        @R.function
        def f(x: R.Tensor(("n",), "float32")):
            t = (x, x)
            y = t[2]
            return y

    message = parse_error(test_a_tuple_index_out_of_range, "y = t[2]", make)
    assert message == ("tuple index 2 is out of range for R.Tuple(R.Tensor((n,), \"float32\"), "
                       "R.Tensor((n,), \"float32\")), which has 2 field(s)")


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_a_duration_is_no_number_for_a_scalar_parameter(dtype):
    """np.timedelta64 is a kind of np.integer: an int32 parameter got "the scalar arguments
    could not be stored", a float32 one took 2 days' worth... as the number 2.0."""
    lib = pyir.build(pyir.script.from_source(
        "from pyir.script import tensor as T\n@T.prim_func\n"
        f'def fill(v: T.{dtype}, A: T.Buffer((3,), "{dtype}")):\n'
        "    for i in range(3):\n        A[i] = v\n"))
    a = np.zeros(3, dtype)
    kind = "an int" if dtype == "int32" else "a float or int"
    with pytest.raises(pyir.ArgumentTypeError, match=rf"^fill: argument 'v' is a scalar of "
                       rf"dtype {dtype} and expects {kind}, got timedelta64"):
        lib["fill"](np.timedelta64(2), a)
    for v in (np.int8(3), np.uint64(3), np.intc(3), np.longlong(3), 3):
        lib["fill"](v, a)
        np.testing.assert_array_equal(a, 3)


@pytest.mark.parametrize("n", [2**32, 2**20])
def test_a_graph_result_too_big_for_memory_is_named(n):
    """numpy's own "array is too big" (ValueError) and MemoryError came out of the call."""
    @R.function
    def audit_mm(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(("k", "m"), "float32")):
        y = R.matmul(x, w)
        return y
    f = pyir.build(audit_mm)["audit_mm"]
    with pytest.raises(pyir.ArgumentValueError, match=rf"^graph function audit_mm: out of "
                       rf"memory for the result R.Tensor\(\(n, m\), \"float32\"\) of shape "
                       rf"\({n}, {n}\) \({n * n * 4:,} bytes\)$"):
        f(np.empty((n, 0), "float32"), np.empty((0, n), "float32"))
    np.testing.assert_array_equal(f(np.ones((2, 3), "float32"), np.ones((3, 2), "float32")), 3)


def test_a_refused_operator_call_names_its_buffers_in_graph_terms():
    """R.max over an empty axis is refused by the operator's prim function, whose message
    speaks of its own X and Y: the graph function's names for them follow, and the
    condition is written in the graph function's shape variables (it was d0 and d1, the
    prim function's)."""
    @R.function
    def audit_mx(x: R.Tensor(("a", "b"), "float32")):
        y = R.max(x, axis=1)
        return y
    f = pyir.build(audit_mx)["audit_mx"]
    with pytest.raises(pyir.ArgumentValueError, match=r"^graph function audit_mx, binding y: "
                       r"max: X is read up to index 0 in dimension 1 of X: requires a < 1 or "
                       r"b >= 1, but a = 3, b = 0 \(its X is x, its Y is y\)$"):
        f(np.ones((3, 0), "float32"))
    np.testing.assert_array_equal(f(np.arange(6, dtype="float32").reshape(3, 2)), [1, 3, 5])
