"""Indices the shapes alone do not bound: an offset passed as a scalar parameter is an
entry condition over it; an index read from memory is checked where it is used. Either way
a bad call is an ArgumentValueError naming the buffer and the index, never a read or write
out of bounds (the calls that would run in a subprocess, which must survive)."""

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyir
from pyir import ArgumentValueError
from pyir.schedule import Schedule
from pyir.script import from_source
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T
from pyir.transform import lower


@T.prim_func
def shift(A: T.Buffer(("n",), "float32"), B: T.Buffer(("m",), "float32"), off: T.int64):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            B[vi] = A[vi + off]


@T.prim_func
def gather(A: T.Buffer(("n",), "float32"), Idx: T.Buffer(("m",), "int64"),
           B: T.Buffer(("m",), "float32")):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            B[vi] = A[Idx[vi]] * T.float32(2)


@T.prim_func
def scatter(A: T.Buffer(("m",), "float32"), Idx: T.Buffer(("m",), "int32"),
            B: T.Buffer(("n", 4), "float32")):
    for i, j in T.grid(m, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[T.cast(Idx[vi], "int64"), vj] = A[vi]


@pytest.fixture(scope="module")
def lib():
    sch = Schedule(gather)
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, factors=[None, 16])
    sch.parallel(i0)
    sch.vectorize(i1)
    mod = pyir.ir.IRModule.from_dict({"shift": shift, "gather": gather, "scatter": scatter,
                                      "gather_vectorized": sch.mod["gather"]})
    return pyir.build(mod)


def test_an_offset_parameter_is_an_entry_condition(lib):
    a, b = np.arange(10, dtype=np.float32), np.zeros(6, np.float32)
    lib["shift"](a, b, 4)
    np.testing.assert_array_equal(b, a[4:])
    with pytest.raises(ArgumentValueError) as e:
        lib["shift"](a, b, 5)
    assert str(e.value) == ("shift: A is read up to index off + m - 1 in dimension 0 of A: "
                            "requires m < 1 or n >= off + m, but m = 6, n = 10, off = 5")
    with pytest.raises(ArgumentValueError, match="A is read at index off .* requires m < 1 or "
                                                 "off >= 0, but m = 6, off = -1"):
        lib["shift"](a, b, -1)


@pytest.mark.parametrize("name, i", [("gather", "i"), ("gather_vectorized", "i_0 * 16 + i_1")])
def test_an_index_read_from_memory_is_checked_where_it_is_used(lib, name, i):
    a = np.arange(100, dtype=np.float32)
    index = np.arange(1000, dtype=np.int64) % 100
    out = np.zeros(1000, np.float32)
    lib[name](a, index, out)
    np.testing.assert_array_equal(out, 2 * a[index])
    for bad in (100, -1, 1 << 40):
        index[777] = bad
        with pytest.raises(ArgumentValueError) as e:
            lib[name](a, index, out)
        assert str(e.value) == (f"{name}: A is read at index Idx[{i}] in dimension 0 of A, which "
                                "must lie in [0, n), but it did not as the function ran")


def test_a_store_through_an_index_read_from_memory_is_checked(lib):
    a, out = np.arange(5, dtype=np.float32), np.zeros((3, 4), np.float32)
    lib["scatter"](a, np.array([2, 0, 1, 0, 2], np.int32), out)
    np.testing.assert_array_equal(out[:, 0], [3, 2, 4])
    with pytest.raises(ArgumentValueError, match=r"B is written at index int64\(Idx\[i\]\) in "
                                                 r"dimension 0 of B, which must lie in \[0, n\)"):
        lib["scatter"](a, np.array([2, 0, 3, 0, 2], np.int32), out)


def test_checked_indices_print_and_parse_back():
    low = lower(pyir.ir.IRModule.from_dict({"gather": gather}))
    text = low.script()
    assert "T.checked_index(Idx[i], n, 1)" in text
    pyir.ir.assert_structural_equal(from_source(text), low)
    assert low["gather"].attr("access_checks") == (
        "A is read at index Idx[i] in dimension 0 of A, which must lie in [0, n)",)


def test_exported_functions_check_the_same(lib, tmp_path):
    lib.export_library(tmp_path / "safe.so")
    loaded = pyir.load_module(tmp_path / "safe.so")
    with pytest.raises(ArgumentValueError, match="requires m < 1 or n >= off \\+ m, but m = 6, "
                                                 "n = 10, off = 5"):
        loaded["shift"](np.zeros(10, np.float32), np.zeros(6, np.float32), 5)
    with pytest.raises(ArgumentValueError, match="A is read at index Idx\\[i\\]"):
        loaded["gather"](np.zeros(3, np.float32), np.array([3]), np.zeros(1, np.float32))


SURVIVAL = """
import numpy as np, pyir, sys
sys.path.insert(0, {here!r})
from test_index_safety import gather, scatter
lib = pyir.build(pyir.ir.IRModule.from_dict({{"gather": gather, "scatter": scatter}}))
big, far = np.full(1 << 16, 1 << 40, np.int64), np.full(4, -(1 << 30), np.int32)
f32 = np.float32
for name, call in {{
        "gather": lambda: lib["gather"](np.zeros(8, f32), big, np.zeros(1 << 16, f32)),
        "scatter": lambda: lib["scatter"](np.zeros(4, f32), far, np.zeros((2, 4), f32))}}.items():
    try:
        call()
        print(name, "ACCEPTED")
    except pyir.ArgumentValueError:
        print(name, "refused")
print("survived")
"""


def test_bad_indices_are_refused_in_a_subprocess():
    import pathlib
    here = str(pathlib.Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SURVIVAL.format(here=here))],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["gather", "refused", "scatter", "refused", "survived"]


@T.prim_func
def _lookback(A: T.Buffer(("n",), "float32"), C: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = A[vi] + A[T.max(vi - 1, 0)]


def test_a_call_that_runs_no_access_needs_no_bounds():
    """n = 0: the loop runs no access, so A[max(i - 1, 0)], which needs n >= 1, may not
    refuse the call (its bound is needed only where the loop runs)."""
    lib = pyir.build(_lookback)
    c = np.zeros(0, np.float32)
    lib["_lookback"](np.zeros(0, np.float32), c)
    a = np.arange(5, dtype=np.float32)
    c = np.zeros(5, np.float32)
    lib["_lookback"](a, c)
    np.testing.assert_array_equal(c, a + np.maximum(np.arange(5) - 1, 0))


def test_a_read_up_to_a_max_below_the_extent_needs_no_condition():
    """``A[max(i - 1, 0)]`` for ``i < n`` reads up to ``max(n - 2, 0)``, below n wherever
    the loop runs: it was the condition ``n < 1 or n >= max(n - 2, 0) + 1``, always true,
    checked at every call."""
    lowered = pyir.transform.lower(pyir.ir.IRModule.from_dict({"_lookback": _lookback}))
    assert lowered["_lookback"].attr("entry_conditions") == ()


@T.prim_func
def scaled_quarters(A: T.Buffer(("n",), "float32"), S: T.Buffer(("k",), "float32"),
                    B: T.Buffer(("n",), "float32")):
    for i in range(n // 4):
        with T.block("B"):
            vi = T.axis.spatial(n // 4, i)
            B[vi] = A[vi * 4] * S[k - 1]


@T.prim_func
def scaled_tail(A: T.Buffer(("n",), "float32"), S: T.Buffer(("k",), "float32"),
                B: T.Buffer(("n",), "float32")):
    for i in range(n - 2):
        with T.block("B"):
            vi = T.axis.spatial(n - 2, i)
            B[vi] = A[vi + 2] * S[k - 1]


@pytest.mark.parametrize("func, extent, expected", [
    (scaled_quarters, "n // 4", lambda a, s: a[::4][:len(a) // 4] * s[-1]),
    (scaled_tail, "n - 2", lambda a, s: a[2:] * s[-1])])
def test_a_loop_over_an_expression_that_runs_no_access_needs_no_bounds(func, extent, expected):
    """A loop over ``n // 4`` or ``n - 2`` runs no access where that is below 1, as a loop
    over a variable does at 0; its condition lacked the escape ("requires k >= 1"), so an
    empty S was refused even for n = 2, where nothing is read (n - 2 is 0; for n < 2 it
    is negative, the loop parallel: it still runs nothing)."""
    lib = pyir.build(func)
    for n in (0, 1, 2):
        b = np.full(n, -1, np.float32)
        lib[func.name](np.arange(n, dtype=np.float32), np.zeros(0, np.float32), b)
        np.testing.assert_array_equal(b, [-1] * n)
    a, s = np.arange(1, 10, dtype=np.float32), np.array([5, 3], np.float32)
    b = np.zeros(9, np.float32)
    lib[func.name](a, s, b)
    want = expected(a, s)
    np.testing.assert_array_equal(b[:len(want)], want)
    with pytest.raises(ArgumentValueError) as e:
        lib[func.name](a, np.zeros(0, np.float32), b)
    assert str(e.value) == (f"{func.name}: S is read at index k - 1 in dimension 0 of S: "
                            f"requires {extent} < 1 or k >= 1, but n = 9, k = 0")


@T.prim_func
def nested_quarters(S: T.Buffer(("k",), "float32"), B: T.Buffer(("n", "n"), "float32")):
    for i, j in T.grid(n, n // 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = S[k - 1]


@T.prim_func
def nested_tails(S: T.Buffer(("k",), "float32"), B: T.Buffer(("n", "n"), "float32")):
    for i, j in T.grid(n - 2, n - 2):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = S[k - 1]


@T.prim_func
def one_more(S: T.Buffer(("k",), "float32"), X: T.Buffer(("n",), "float32"),
             B: T.Buffer(("n + 1",), "float32")):
    for i in range(n + 1):
        with T.block("B"):
            vi = T.axis.spatial(n + 1, i)
            B[vi] = S[k - 1]


@pytest.mark.parametrize("func, requires, empty", [
    (nested_quarters, "n // 4 < 1 or k >= 1", (0, 1, 3)),
    (nested_tails, "n - 2 < 1 or k >= 1", (0, 1, 2))])
def test_a_condition_names_each_loop_that_may_run_nothing_once(func, requires, empty):
    """A condition needed where the loops run escapes only through extents below 1, each
    once: a loop over ``n // 4`` inside one over ``n`` runs nothing where ``n < 1`` too, and
    the condition read "n // 4 < 1 or (n < 1 or k >= 1)"; two loops over ``n - 2`` gave
    "n - 2 < 1 or (n - 2 < 1 or k >= 1)"."""
    lib = pyir.build(func)
    for n in empty:   # nothing is read
        b = np.full((n, n), -1, np.float32)
        lib[func.name](np.zeros(0, np.float32), b)
        np.testing.assert_array_equal(b, np.full((n, n), -1, np.float32))
    b = np.zeros((5, 5), np.float32)
    lib[func.name](np.array([2, 7], np.float32), b)
    assert (b == 7).sum() == (5 if func is nested_quarters else 9)
    with pytest.raises(ArgumentValueError) as e:
        lib[func.name](np.zeros(0, np.float32), b)
    assert str(e.value) == (f"{func.name}: S is read at index k - 1 in dimension 0 of S: "
                            f"requires {requires}, but n = 5, k = 0")


def test_a_condition_does_not_name_a_loop_that_always_runs():
    """A loop over ``n + 1`` runs for every n: its condition read "n + 1 < 1 or k >= 1"."""
    lib = pyir.build(one_more)
    for n in (0, 3):
        b = np.zeros(n + 1, np.float32)
        lib["one_more"](np.array([2, 7], np.float32), np.zeros(n, np.float32), b)
        np.testing.assert_array_equal(b, np.full(n + 1, 7, np.float32))
        with pytest.raises(ArgumentValueError) as e:
            lib["one_more"](np.zeros(0, np.float32), np.zeros(n, np.float32), b)
        assert str(e.value) == ("one_more: S is read at index k - 1 in dimension 0 of S: "
                                "requires k >= 1, but k = 0")


@T.prim_func
def shift32(A: T.Buffer(("n",), "float32"), B: T.Buffer(("m",), "float32"), off: T.int64):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            B[vi] = A[T.int64(T.int32(vi) + T.int32(off))]


@T.prim_func
def copy32(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[T.cast(T.cast(vi, "int32"), "int64")]


def test_an_index_computed_in_int32_is_bounded_where_it_does_not_wrap():
    """``A[T.int64(T.int32(i) + T.int32(off))]`` was bounded by every int32 value (the
    sum could wrap around), which made "n >= 2**31 and 0 <= -2**31" the condition: every
    call with m >= 1 was refused. The sum equals ``i + off`` where none of its parts wraps
    around; that is now the condition, and the index is bounded as ``i + off``."""
    lib = pyir.build(pyir.ir.IRModule.from_dict({"shift32": shift32, "copy32": copy32}))
    a, b = np.arange(10, dtype=np.float32), np.zeros(6, np.float32)
    lib["shift32"](a, b, 4)
    np.testing.assert_array_equal(b, a[4:])
    c = np.zeros(10, np.float32)
    lib["copy32"](a, c)
    np.testing.assert_array_equal(c, a)
    with pytest.raises(ArgumentValueError) as e:
        lib["shift32"](a, b, 5)
    assert str(e.value) == ("shift32: A is read up to index off + m - 1 in dimension 0 of A: "
                            "requires m < 1 or n >= off + m, but m = 6, n = 10, off = 5")
    for off in (2**31 - 3, 2**32 + 2, -2**31 - 4):   # the int32 sum wraps around
        with pytest.raises(ArgumentValueError) as e:
            lib["shift32"](a, b, off)
        assert str(e.value).startswith(
            "shift32: A is read at index int64(int32(i) + int32(off)) in dimension 0 of A, "
            "computed in int32 without wrapping around: requires m < 1 or ")
        assert str(e.value).endswith(f"but m = 6, off = {off}")
    with pytest.raises(ArgumentValueError, match=r"A is read at index off in dimension 0 of A: "
                                                 r"requires m < 1 or off >= 0, but m = 6, "
                                                 r"off = -1"):
        lib["shift32"](a, b, -1)


def test_an_index_computed_in_int32_under_a_tail_guard_is_bounded_by_the_guard():
    """Split by 8, the int32 sum ``i_0 * 8 + i_1 + off`` runs up to ``off + m - 1`` under
    the tail guard; the condition that it does not wrap around took the loops' reach
    (``off + (m + 7) // 8 * 8 - 1``), so a call with ``off + m - 1`` at the largest int32
    was refused as wrapping (here A is too short for it anyway)."""
    sch = Schedule(shift32)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 8])
    lib = pyir.build(sch.mod)
    a, b = np.arange(10, dtype=np.float32), np.zeros(6, np.float32)
    lib["shift32"](a, b, 4)
    np.testing.assert_array_equal(b, a[4:])
    with pytest.raises(ArgumentValueError) as e:
        lib["shift32"](a, np.zeros(3, np.float32), 2**31 - 3)
    assert str(e.value) == ("shift32: A is read up to index off + m - 1 in dimension 0 of A: "
                            "requires (m + 7) // 8 < 1 or n >= off + m, but m = 3, n = 10, "
                            "off = 2147483645")
    with pytest.raises(ArgumentValueError) as e:
        lib["shift32"](a, np.zeros(3, np.float32), 2**31 - 2)
    assert str(e.value).startswith(
        "shift32: A is read at index int64(int32(i_0 * 8 + i_1) + int32(off)) in dimension 0 "
        "of A, computed in int32 without wrapping around: requires (m + 7) // 8 < 1 or ")
    assert str(e.value).endswith("off + m - 1 <= 2147483647, but m = 3, off = 2147483646")


OVERFLOW = """
import numpy as np, pyir, sys
sys.path.insert(0, {here!r})
from test_index_safety import window, Rows
f = pyir.build(window)["window"]
a = np.arange(10, dtype=np.float32)
for k, off in ((1, 2**63 - 1), (2, 2**63 - 2), (0, 2**63 - 1), (3, 7)):
    b = np.zeros(10, np.float32)
    try:
        f(a, b, k, off)
        print(k, "ran", b[:k].tolist())
    except pyir.ArgumentValueError as e:
        print(k, "refused:", str(e).split(": ", 1)[1])
main = pyir.build(Rows)["main"]
for n in (1 << 32, 3):
    try:
        main(np.zeros((n, 0), np.float32), np.zeros((n, 0), np.float32), np.zeros(0, np.float32))
        print(n, "ran")
    except pyir.ArgumentValueError as e:
        print(n, "refused:", e)
"""


@T.prim_func
def window(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32"), k: T.int64,
           off: T.int64):
    for i in range(k):
        with T.block("B"):
            vi = T.axis.spatial(k, i)
            B[vi] = A[vi + off]


@I.ir_module
class Rows:
    @T.prim_func
    def total(X: T.Buffer(("n", "z"), "float32"), Y: T.Buffer(("m", "z"), "float32"),
              A: T.Buffer(("n * m",), "float32"), O: T.Buffer((1,), "float32")):
        for i, j in T.grid(n, m):
            with T.block("O"):
                vi, vj = T.axis.remap("RR", [i, j])
                with T.init():
                    O[0] = T.float32(0)
                O[0] = O[0] + A[vi * m + vj]

    @R.function
    def main(x: R.Tensor(("p", "z"), "float32"), y: R.Tensor(("q", "z"), "float32"),
             a: R.Tensor(("c",), "float32")) -> R.Tensor((1,), "float32"):
        with R.dataflow():
            o = R.call_tir(cls.total, (x, y, a), out_sinfo=R.Tensor((1,), "float32"))
            R.output(o)
        return o


def test_an_entry_condition_that_overflows_refuses_the_call():
    """The entry condition ``n >= off + k`` was computed in wrapping int64: with
    ``off = 2**63 - 1`` and ``k = 1``, ``off + k`` wrapped negative, the call was accepted
    and read far outside A (a segfault). A comparison whose operands overflow no longer
    holds; ``k < 1 or ...`` still accepts ``k = 0`` whatever ``off`` is. So for a graph
    function's shape check: ``p * q == c`` held for ``p = q = 2**32, c = 0`` (the product
    wrapped to 0) and the prim function read A, which is empty."""
    import pathlib
    here = str(pathlib.Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", OVERFLOW.format(here=here)], check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for line, k, off in zip(lines, (1, 2), (2**63 - 1, 2**63 - 2)):
        assert line == (f"{k} refused: A is read up to index off + k - 1 in dimension 0 of A: "
                        f"requires k < 1 or n >= off + k, but k = {k}, n = 10, off = {off}")
    assert lines[2:4] == ["0 ran []", "3 ran [7.0, 8.0, 9.0]"]
    for line, n in zip(lines[4:], (1 << 32, 3)):
        assert line == (f"{n} refused: graph function main, binding o: total parameter 'A': "
                        f'dimension 0 of R.Tensor((c,), "float32") must equal p * q (requires '
                        f"p * q == c, but p = {n}, q = {n}, c = 0)")
    assert len(lines) == 6


@T.prim_func
def copy_where(A: T.Buffer(("n",), "float32"), B: T.Buffer(("m",), "float32")):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            T.where(i < n)
            B[vi] = A[vi]


@T.prim_func
def copy_if(A: T.Buffer(("k",), "float32"), B: T.Buffer(("m",), "float32"), n: T.int64):
    for i in range(m):
        if i < n:
            B[i] = A[i]


GUARDED = """
import ctypes, mmap, sys
import numpy as np, pyir
sys.path.insert(0, {here!r})
from test_index_safety import copy_where, copy_if
from pyir.schedule import Schedule
sch = Schedule(copy_where)
(i,) = sch.get_loops(sch.get_block("B"))
sch.vectorize(sch.split(i, factors=[None, 4])[1])
lib = pyir.build(pyir.ir.IRModule.from_dict({{"copy_where": sch.mod["copy_where"],
                                              "copy_if": copy_if}}))
pages = mmap.mmap(-1, 2 * mmap.PAGESIZE)
start = np.frombuffer(pages, np.uint8).ctypes.data
ctypes.CDLL(None).mprotect(ctypes.c_void_p(start + mmap.PAGESIZE), mmap.PAGESIZE, 0)
a = np.frombuffer(pages, np.float32, 3, mmap.PAGESIZE - 12)   # ends at the unreadable page
a[:] = [1, 2, 3]
b = np.full(40, -7, np.float32)
lib["copy_where"](a, b)
print(b.tolist() == [1, 2, 3] + [-7] * 37)
for n in (3, 40):
    try:
        lib["copy_if"](a, b, n)
        print(n, "ran")
    except pyir.ArgumentValueError as e:
        print(n, "refused:", e)
"""


def test_a_guard_on_another_shape_still_guards():
    """Guards were matched with `structural_equal`, which takes two free variables for the
    same: the split tail guard ``i < m`` of a vectorized ``T.where(i < n)`` made the
    whole-vector path drop ``i < n`` too (A read past its end, B written where it must
    stay), and ``if i < n: B[i] = A[i]`` with A of extent k counted as in bounds (no entry
    condition; a read past A). Guards are now compared by value, variables by identity."""
    import pathlib
    here = str(pathlib.Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", GUARDED.format(here=here)], check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "True", "3 ran", "40 refused: copy_if: A is read up to index n - 1 in dimension 0 of A: "
                         "requires m < 1 or k >= n, but m = 40, k = 3, n = 40"]


def _reading_a_count(body):
    """A prim function ``f(A, I)`` of an 8-element A and a count I[0] read from memory."""
    return pyir.build(from_source(
        'from pyir.script import tensor as T\n@T.prim_func\n'
        'def f(A: T.Buffer((8,), "float32"), I: T.Buffer((1,), "int64")):\n'
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"))


@pytest.mark.parametrize("body", [
    "for i in range(I[0]):\n    A[i] = T.float32(1)",
    "m = I[0]\nfor i in range(m):\n    A[i] = T.float32(1)",
    "for i in range(8):\n    if i < I[0]:\n        A[i] = T.float32(1)",
])
def test_a_bound_read_from_memory_is_checked_where_it_is_used(body):
    """A loop extent or a guard read from memory became an entry condition, which codegen
    cannot evaluate at the entry: the build failed with a KeyError."""
    lib = _reading_a_count(body)
    a = np.zeros(8, np.float32)
    lib["f"](a, np.array([3]))
    np.testing.assert_array_equal(a, [1, 1, 1, 0, 0, 0, 0, 0])
    if "if" in body:
        lib["f"](a, np.array([9]))           # the guard keeps i below 8 anyway
        np.testing.assert_array_equal(a, 1)
    else:
        with pytest.raises(ArgumentValueError, match=r"^f: A is written at index i in dimension "
                           r"0 of A, which must lie in \[0, 8\), but it did not as the function "
                           r"ran$"):
            lib["f"](a, np.array([9]))


def test_a_loop_read_from_memory_around_an_access_needs_its_condition_always():
    """The condition of an access inside a loop whose extent is read from memory cannot be
    'the loop runs nothing, or ...' (it cannot be read at the entry): it holds for every
    call, and A[7] in 8 elements is in bounds."""
    lib = _reading_a_count("for j in range(I[0]):\n    A[7] = T.float32(1)")
    a = np.zeros(8, np.float32)
    lib["f"](a, np.array([0]))
    assert a[7] == 0
    lib["f"](a, np.array([3]))
    assert a[7] == 1


def test_an_index_cast_from_a_narrow_value_read_from_memory_is_checked_where_used():
    """int64(X[i] + 1) of an int32 X: "no wrap-around" is false for some value of X, and was
    recorded as the entry condition False, which refused every call."""
    lib = pyir.build(from_source(
        'from pyir.script import tensor as T\n@T.prim_func\n'
        'def g(A: T.Buffer((8,), "float32"), X: T.Buffer((8,), "int32"), '
        'B: T.Buffer((8,), "float32")):\n'
        "    for i in range(8):\n"
        '        B[i] = A[T.cast(X[i] + T.int32(1), "int64")]\n'))
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    lib["g"](a, np.array([0, 1, 2, 3, 4, 5, 6, -1], np.int32), b)
    np.testing.assert_array_equal(b, [1, 2, 3, 4, 5, 6, 7, 0])
    with pytest.raises(ArgumentValueError, match=r"^g: A is read at index int64\(X\[i\] \+ 1\) "
                       r"in dimension 0 of A, which must lie in \[0, 8\), but it did not"):
        lib["g"](a, np.full(8, 7, np.int32), b)


@pytest.mark.parametrize("body, words", [
    ("A[8] = T.float32(1)", "A is written up to index 8"),
    ("A[-1] = T.float32(1)", "A is written at index -1"),
    ("for i in range(9):\n    A[i] = T.float32(1)", "A is written up to index 8"),
    ("for i in range(8):\n    A[i] = A[i + 1]", "A is read up to index 8"),
])
def test_an_access_out_of_bounds_for_every_call_is_refused_at_build(body, words):
    """It built, and every call failed with "... requires False"."""
    with pytest.raises(pyir.Error, match=rf"^prim function f: {re.escape(words)} in dimension 0 "
                       r"of A, out of bounds for every call$"):
        pyir.build(from_source(
            'from pyir.script import tensor as T\n@T.prim_func\n'
            'def f(A: T.Buffer((8,), "float32")):\n'
            + textwrap.indent(body, "    ") + "\n"))
