"""Argument checks of compiled functions: every bad input raises a `pyir.Error` that is also
a TypeError or ValueError and names the function, the argument, what was expected and what
came. Calls that would touch memory out of bounds if a check were missing run in a
subprocess, which must survive."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyir
from pyir import ArgumentTypeError, ArgumentValueError

from dlpack_only import DLPackOnly


def f32(*shape):
    return np.zeros(shape, np.float32)


def raises(cls, fn, *args, words=()):
    with pytest.raises(cls) as info:
        fn(*args)
    assert isinstance(info.value, pyir.Error)
    if cls is not pyir.Error:
        assert isinstance(info.value, TypeError if cls is ArgumentTypeError else ValueError)
    message = str(info.value)
    for w in words:
        assert w in message, f"{w!r} not in {message!r}"
    return message


def test_too_few_arguments(lib):
    raises(ArgumentTypeError, lib["add"], f32(3), f32(3),
           words=("add", "takes 3", "2 were given", "A, B, C"))
    raises(ArgumentTypeError, lib["add"], f32(3), words=("but 1 was given",))


def test_arguments_by_name(lib):
    """Keywords raised Python's own TypeError ("unexpected keyword argument 'A'")."""
    a, b, c = np.arange(3, dtype=np.float32), np.ones(3, np.float32), f32(3)
    lib["add"](a, C=c, B=b)
    np.testing.assert_array_equal(c, a + b)
    for named, words in (({"D": c}, ("add has no parameter 'D'", "signature: add(A: float32[n]")),
                         ({"A": a, "C": c}, ("add: argument 'A' is given by position and by "
                                             "name",)),
                         ({"C": c}, ("add: no value for argument(s) 'B'",))):
        with pytest.raises(ArgumentTypeError) as info:
            lib["add"](a, **named)
        for w in words:
            assert w in str(info.value)


def test_too_many_arguments(lib):
    raises(ArgumentTypeError, lib["add"], f32(3), f32(3), f32(3), f32(3),
           words=("add", "takes 3", "4 were given"))


def test_list_instead_of_array(lib):
    raises(ArgumentTypeError, lib["add"], [1.0, 2.0], f32(2), f32(2),
           words=("add", "'A'", "numpy array", "__dlpack__", "float32(n,)", "got list"))


def test_numpy_scalar_instead_of_array(lib):
    """An np.float32 for a buffer was 'expects ... of float32(n,), got float32'."""
    raises(ArgumentTypeError, lib["add"], np.float32(1), f32(2), f32(2),
           words=("'A'", "float32(n,)", "got a numpy float32 scalar, not an array",
                  "np.array(x)"))


def test_string_for_float_scalar(lib):
    raises(ArgumentTypeError, lib["axpy"], "2", f32(3), f32(3),
           words=("axpy", "'alpha'", "float32", "float or int", "got str"))


def test_float_for_int_scalar(lib):
    raises(ArgumentTypeError, lib["fill_i8"], 1.5, np.zeros(3, np.int8),
           words=("fill_i8", "'value'", "int8", "expects an int", "got float 1.5"))


@pytest.mark.parametrize("flag", [True, np.True_])
def test_bool_for_number_scalar(lib, flag):
    """Python's True was taken as 1 (np.True_ was refused)."""
    raises(ArgumentTypeError, lib["fill_i8"], flag, np.zeros(3, np.int8),
           words=("fill_i8: argument 'value'", "int8", "a bool is not a number here",
                  f"got bool {flag!r}"))
    raises(ArgumentTypeError, lib["axpy"], flag, f32(3), f32(3),
           words=("axpy: argument 'alpha'", "float32", "a bool is not a number here"))


def test_array_for_scalar(lib):
    raises(ArgumentTypeError, lib["axpy"], f32(3), f32(3), f32(3),
           words=("'alpha'", "got ndarray"))


def test_wrong_dtype(lib):
    raises(ArgumentTypeError, lib["add"], f32(3), np.zeros(3), f32(3),
           words=("add", "'B'", "expects dtype float32", "float64"))


def test_wrong_dtype_int(lib):
    raises(ArgumentTypeError, lib["fill_i8"], 1, np.zeros(3, np.uint8),
           words=("'out'", "expects dtype int8", "uint8"))


def test_wrong_rank(lib):
    raises(ArgumentTypeError, lib["add"], f32(2, 3), f32(6), f32(6),
           words=("add", "'A'", "expects 1 dimension", "(n,)", "got 2", "(2, 3)"))


def test_wrong_rank_2d(lib):
    raises(ArgumentTypeError, lib["rowsum"], f32(12), f32(3),
           words=("rowsum", "'A'", "expects 2 dimension", "(n, 4)", "(12,)"))


def test_constant_dimension(lib):
    raises(ArgumentValueError, lib["rowsum"], f32(3, 5), f32(3),
           words=("rowsum", "'A'", "(n, 4)", "(3, 5)", "dimension 1 must be 4 but is 5"))


def test_inconsistent_shape_variable(lib):
    raises(ArgumentValueError, lib["add"], f32(5), f32(6), f32(5),
           words=("add", "n is 5 from A.shape[0] but 6 from B.shape[0]"))


def test_inconsistent_shape_variable_across_ranks(lib):
    raises(ArgumentValueError, lib["rowsum"], f32(3, 4), f32(4),
           words=("n is 3 from A.shape[0] but 4 from out.shape[0]",))


def test_expression_dimension(lib):
    raises(ArgumentValueError, lib["repeat2"], np.zeros(4), np.zeros(7),
           words=("repeat2", "'B'", "(n * 2,)", "n * 2 = 8", "n = 4", "but is 7"))


def test_non_contiguous(lib):
    raises(ArgumentValueError, lib["add"], f32(10)[::2], f32(5), f32(5),
           words=("add", "'A'", "C-contiguous", "strides (8,)"))


def test_fortran_order(lib):
    a = np.asfortranarray(f32(3, 4))
    raises(ArgumentValueError, lib["rowsum"], a, f32(3), words=("'A'", "C-contiguous"))


def test_misaligned(lib):
    raw = np.frombuffer(bytearray(41), dtype=np.float32, offset=1, count=10)
    raises(ArgumentValueError, lib["add"], raw, f32(10), f32(10),
           words=("add", "'A'", "aligned", "4 bytes", "offset 1"))


def test_read_only_output(lib):
    out = f32(4)
    out.setflags(write=False)
    raises(ArgumentValueError, lib["add"], f32(4), f32(4), out,
           words=("add", "'C'", "written", "read-only"))


def test_read_only_input_is_fine(lib):
    a = np.arange(4, dtype=np.float32)
    a.setflags(write=False)
    c = f32(4)
    lib["add"](a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_output_overlaps_input(lib):
    a = f32(8)
    raises(ArgumentValueError, lib["add"], a[:4], f32(4), a[2:6],
           words=("add", "'C'", "overlaps argument 'A'"))


def test_scalar_out_of_range(lib):
    raises(ArgumentValueError, lib["fill_i8"], 200, np.zeros(3, np.int8),
           words=("fill_i8", "'value'", "int8", "200", "[-128, 127]"))


def test_float32_scalar_overflow(lib):
    raises(ArgumentValueError, lib["axpy"], 1e300, f32(3), f32(3),
           words=("axpy", "'alpha'", "float32", "outside its range"))


def test_scalar_too_large_for_any_float(lib):
    raises(ArgumentValueError, lib["axpy"], 10 ** 400, f32(3), f32(3),
           words=("axpy", "'alpha'", "float32", "10000000000", "...", "outside its range"))


def test_entry_condition_reports_numbers(lib):
    raises(ArgumentValueError, lib["window"], f32(10), f32(9),
           words=("window", "X is read up to index p + 1", "m >= p + 2", "m = 10", "p = 9"))


def test_native_status_codes(lib):
    raises(pyir.Error, lib["status"], -1, words=("status", "out of memory"))
    raises(pyir.Error, lib["status"], -2, words=("status", "external kernel"))
    raises(pyir.Error, lib["status"], 7, words=("status", "unknown status 7"))


def test_dlpack_with_wrong_dtype(lib):
    raises(ArgumentTypeError, lib["add"], DLPackOnly(np.zeros(3)), f32(3), f32(3),
           words=("'A'", "float32", "float64"))


def test_broken_dlpack(lib):
    raises(ArgumentTypeError, lib["add"], BrokenDLPack(), f32(3), f32(3),
           words=("'A'", "__dlpack__", "BrokenDLPack", "cannot import"))


def test_unknown_function(lib):
    with pytest.raises(pyir.Error, match="no function named 'nope'.*add"):
        lib["nope"]


class BrokenDLPack:
    def __dlpack__(self, **kwargs):
        raise BufferError("no data here")

    def __dlpack_device__(self):
        return (1, 0)


SURVIVAL = """
import numpy as np, pyir, native_kernels
from pyir.runtime import Executable
lib = Executable.jit(native_kernels.IR, native_kernels.INFOS, "llvm")
big, small = np.zeros(1 << 20, np.float32), np.zeros(16, np.float32)
attempts = {
    "short output": lambda: lib["add"](big, big.copy(), small),
    "short input": lambda: lib["window"](small, big),
    "wrong rank": lambda: lib["rowsum"](big, small),
    "strided": lambda: lib["add"](big[::4], big[1::4], np.zeros(1 << 18, np.float32)),
    "huge expression": lambda: lib["repeat2"](np.zeros(1 << 20), np.zeros(2)),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, "ACCEPTED")
    except pyir.Error as e:
        print(name, type(e).__name__)
print("survived")
"""


def test_dangerous_calls_are_refused_in_a_subprocess():
    import pathlib
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SURVIVAL)], check=False,
                          capture_output=True, text=True, timeout=120,
                          cwd=pathlib.Path(__file__).parent)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "survived"
    assert not [line for line in lines if "ACCEPTED" in line], done.stdout
    assert len([line for line in lines if "Argument" in line]) == 5, done.stdout


def test_a_scalar_parameter_can_be_a_dimension():
    """``n: T.int64`` beside ``A: T.Buffer(("n", "m"))``: the call passes n, and A must have
    n rows. The binder named the variable n, which it never set: every call raised
    NameError from the generated code."""
    from pyir.script import from_source

    lib = pyir.build(from_source(textwrap.dedent('''
        from pyir.script import tensor as T


        @T.prim_func
        def h(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n * 2",), "float32"),
              n: T.int64):
            for i, j in T.grid(n, m):
                A[i, j] = A[i, j] * T.float32(2)
            for i in range(n * 2):
                B[i] = T.float32(1)
    ''')))
    a, b = np.ones((4, 3), "float32"), np.zeros(8, "float32")
    lib["h"](a, b, 4)
    np.testing.assert_array_equal(a, np.full((4, 3), 2, "float32"))
    np.testing.assert_array_equal(b, np.ones(8, "float32"))
    with pytest.raises(ArgumentValueError, match=r"^h: argument 'A' expects shape \(n, m\), got "
                       r"\(4, 3\): dimension 0 must be n = 3 \(with n = 3\) but is 4$"):
        lib["h"](a, b, 3)
    with pytest.raises(ArgumentValueError, match=r"^h: argument 'B' expects shape \(n \* 2,\), "
                       r"got \(7,\): dimension 0 must be n \* 2 = 8 \(with n = 4\) but is 7$"):
        lib["h"](a, np.zeros(7, "float32"), 4)
