"""A script's ``T.parallel`` loop over statements outside blocks is checked when it is read
(`pyir.transform.concurrency.statement_conflict`): a race is a ParseError at the loop's
line, naming the access; loops whose iterations stay apart build and match numpy. Before,
such loops were trusted: a parallel sum into ``s[0]`` and a shared scratch buffer raced."""

import textwrap

import numpy as np
import pytest

import pyir
from pyir.script import ParseError, from_source
from pyir.script import tensor as T

HEADER = "from pyir.script import tensor as T\n\n@T.prim_func\n"
ACROSS = "which other iterations of loop i may access too; the iterations of parallel loop i " \
         "cannot run at the same time"


def _func(params, body):
    return (HEADER + f"def f({params}):\n"
            + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n")


def _refused(params, body):
    with pytest.raises(ParseError) as info:
        from_source(_func(params, body))
    return info.value


@pytest.mark.parametrize("params, body, line, why", [
    ('A: T.Buffer(("n",), "float32"), s: T.Buffer((1,), "float32")', """
     for i in T.parallel(n):
         s[0] = s[0] + A[i]
     """, 5, f"the statements below it write s[0], {ACROSS}"),
    ('A: T.Buffer(("n",), "float32")', """
     for i in T.parallel(n - 1):
         A[i + 1] = A[i + 1] + A[i]
     """, 5, f"the statements below it write A[i + 1] and access A[i], {ACROSS}"),
    ('A: T.Buffer(("n", 8), "float32"), B: T.Buffer(("n", 8), "float32")', """
     tmp = T.alloc_buffer((8,), "float32")
     for i in T.parallel(n):
         for j in range(8):
             tmp[j] = A[i, j] * T.float32(2)
         for j in range(8):
             B[i, j] = tmp[7 - j]
     """, 6, f"the statements below it write tmp[j] and access tmp[7 - j], {ACROSS}"),
    ('A: T.Buffer(("n",), "float32"), I: T.Buffer(("n",), "int64")', """
     for i in T.parallel(n):
         A[I[i]] = A[I[i]] + T.float32(1)
     """, 5, f"the statements below it write A[I[i]], {ACROSS}"),
    ('A: T.Buffer(("n * m + 1",), "float32")', """
     for i in T.parallel(n):
         for j in range(m + 1):
             A[i * m + j] = T.float32(1)
     """, 5, f"the statements below it write A[i * m + j], {ACROSS}"),
    ('A: T.Buffer(("n",), "float32")', """
     for i in T.parallel(n):
         T.call_extern("test.no_such_kernel", A, i, dtype="void")
     """, 5, "a kernel called below it is passed A, which the kernel may write, and how far "
             "the kernel reaches into it is not known; the iterations of parallel loop i "
             "cannot run at the same time"),
    ('A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")', """
     for i in T.parallel(n):
         with T.block("b"):
             vi = T.axis.spatial(n, i)
             B[vi] = A[vi]
         A[i] = B[0]
     """, 5, "blocks and statements outside blocks below it both access A, and one of them "
             "writes it; the iterations of parallel loop i cannot run at the same time"),
], ids=["sum", "scan", "shared scratch", "scatter", "rows overlap", "kernel", "block too"])
def test_a_race_is_refused_at_the_loop(params, body, line, why):
    err = _refused(params, body)
    assert (err.line, err.message) == (line, why)
    assert "T.serial" in str(err)


def _run(params, body, *arrays):
    lib = pyir.build(from_source(_func(params, body)))
    lib["f"](*arrays)


def test_rows_of_a_two_dimensional_buffer_are_apart():
    a = np.random.default_rng(0).random((37, 5), dtype=np.float32)
    b = np.zeros_like(a)
    _run('A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", "m"), "float32")', """
         for i in T.parallel(n):
             for j in range(m):
                 B[i, j] = A[i, j] * T.float32(2)
         """, a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_rows_of_a_flat_buffer_and_a_scratch_of_each_iteration_are_apart():
    a = np.random.default_rng(1).random(37 * 6, dtype=np.float32)
    b = np.zeros_like(a)
    _run('A: T.Buffer(("m",), "float32"), B: T.Buffer(("m",), "float32")', """
         for i in T.parallel(m // 6):
             tmp = T.alloc_buffer((6,), "float32", scope="local")
             for j in range(6):
                 tmp[j] = A[i * 6 + j]
             for j in range(6):
                 B[i * 6 + j] = tmp[5 - j]
         """, a, b)
    np.testing.assert_array_equal(b, a.reshape(37, 6)[:, ::-1].ravel())


def test_panels_packed_across_parallel_rows_are_apart():
    """What the packing of B does: each row ``i`` writes its 32 columns of every panel."""
    n = 70
    b = np.random.default_rng(2).random((n, n), dtype=np.float32)
    p = np.full((n + 31) // 32 * n * 32, -1, np.float32)
    _run('B: T.Buffer(("n", "n"), "float32"), P: T.Buffer(("(n + 31) // 32 * n * 32",), '
         '"float32")', """
         for i in T.parallel(n):
             for j0 in range((n + 31) // 32):
                 for j1 in range(32):
                     if j0 * 32 + j1 < n:
                         P[j0 * n * 32 + i * 32 + j1] = B[i, j0 * 32 + j1]
         """, b, p)
    padded = np.full((n, (n + 31) // 32 * 32), -1, np.float32)
    padded[:, :n] = b
    np.testing.assert_array_equal(p, padded.reshape(n, -1, 32).transpose(1, 0, 2).ravel())


def test_a_fused_loop_over_both_dimensions_is_apart():
    b = np.zeros((9, 4), np.float32)
    _run('B: T.Buffer(("n", 4), "float32")', """
         for f in T.parallel(n * 4):
             B[f // 4, f % 4] = T.cast(f, "float32")
         """, b)
    np.testing.assert_array_equal(b, np.arange(36, dtype=np.float32).reshape(9, 4))


def test_elements_of_two_formulas_within_one_iteration_are_apart():
    a = np.zeros(40, np.float32)
    _run('A: T.Buffer(("m",), "float32")', """
         for i in T.parallel(m // 2):
             A[2 * i] = T.cast(i, "float32")
             A[2 * i + 1] = A[2 * i] + T.float32(0.5)
         """, a)
    np.testing.assert_array_equal(a[0::2], np.arange(20))
    np.testing.assert_array_equal(a[1::2], np.arange(20) + 0.5)


def test_a_serial_loop_of_the_sum_is_accepted():
    a = np.arange(10, dtype=np.float32)
    s = np.zeros(1, np.float32)
    _run('A: T.Buffer(("n",), "float32"), s: T.Buffer((1,), "float32")', """
         for i in range(n):
             s[0] = s[0] + A[i]
         """, a, s)
    assert s[0] == 45


def _spread(a, b):
    b[1:17:2] = b[2:18:2] = 2 * a   # B[i * 2 + 1] and B[i * 2 + 2]
    return b


GUARDED = {
    "inner loop bounded": ('A: T.Buffer((8,), "float32"), B: T.Buffer((11,), "float32")', """
     for i in T.parallel(8):
         for j in range(4):
             if j < 1:
                 B[i + j] = A[i] * T.float32(2)
     """, 8, 11, lambda a, b: np.r_[2 * a, b[8:]]),
    "inner loop bounded twice": ('A: T.Buffer((8,), "float32"), B: T.Buffer((20,), "float32")', """
     for i in T.parallel(8):
         for j in range(4):
             if j < 3:
                 if j >= 1:
                     B[i * 2 + j] = A[i] * T.float32(2)
     """, 8, 20, _spread),
    "tail by hand": ('A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")', """
     for i_0 in T.parallel(3):
         if i_0 < 2:
             for i_1 in range(4):
                 B[i_0 * 4 + i_1] = A[i_0 * 4 + i_1] * T.float32(2)
         else:
             for i_1 in range(2):
                 B[8 + i_1] = A[8 + i_1] * T.float32(2)
     """, 10, 10, lambda a, b: 2 * a),
}


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_conditions_narrow_the_loops_they_bound(name):
    """The conditions around an access were not read: under ``if j < 1`` iteration i
    writes B[i] alone, not B[i:i + 4]; the else of ``if i_0 < 2`` is the last iteration,
    whose elements follow all those of the others. Each was refused as a race."""
    params, body, na, nb, want = GUARDED[name]
    a, b = np.arange(1, na + 1, dtype=np.float32), np.full(nb, -1, np.float32)
    expected = want(a, b.copy())
    _run(params, body, a, b)
    np.testing.assert_array_equal(b, expected)


@pytest.mark.parametrize("params, body, why", [
    ('A: T.Buffer((8,), "float32"), B: T.Buffer((11,), "float32")', """
     for i in T.parallel(8):
         for j in range(4):
             if j < 2:
                 B[i + j] = A[i]
     """, f"the statements below it write B[i + j], {ACROSS}"),
    ('A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")', """
     for i in T.parallel(3):
         if i < 2:
             for k in range(4):
                 B[i * 4 + k] = A[i * 4 + k]
         else:
             for k in range(3):
                 B[7 + k] = A[7 + k]
     """, f"the statements below it write B[i * 4 + k] and access B[k + 7], {ACROSS}"),
    ('A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")', """
     for i in T.parallel(3):
         if i < 2 and i >= 0:
             for k in range(4):
                 B[i * 4 + k] = A[i * 4 + k]
         else:
             for k in range(2):
                 B[8 + k] = A[8 + k]
     """, f"the statements below it write B[i * 4 + k] and access B[k + 8], {ACROSS}"),
    ('B: T.Buffer((10,), "float32")', """
     for i in T.parallel(3):
         if i >= 2:
             B[0] = T.float32(1)
         else:
             B[0] = T.float32(2)
     """, f"the statements below it write B[0], {ACROSS}"),
], ids=["still shared", "tail overlaps", "else of two conditions", "one element"])
def test_conditions_that_leave_iterations_sharing_elements_are_refused(params, body, why):
    """The last tile overlapping the one before it; the else of ``a and b``, where either
    may fail (nothing is narrowed); iterations of two ranges writing one element."""
    err = _refused(params, body)
    assert (err.line, err.message) == (5, why)


LOWERED_KERNEL_LOOP = """
    ATTRS
    for i in T.parallel(n):
        T.call_extern("test.bump_somewhere", X, i, dtype="void")
    """


@pytest.mark.parametrize("attrs", ['T.func_attr({"lowered": True})',
                                   'T.func_attr({"param_shapes": ((n,),)})'])
def test_the_loops_of_a_function_pyir_lowered_are_trusted(attrs):
    """A block declaring ``T.writes(X[vi])`` around a kernel call lowers to the call alone
    under the parallel loop; without the block's regions nothing says how far the kernel
    reaches, and the printed function did not read back. The loops of a function
    `pyir.transform.lower_blocks` made ("lowered") or whose buffers pyir flattened
    ("param_shapes") were proven before; those of the same text without either are checked."""
    params = 'X: T.Buffer(("n",), "float32")'
    func = from_source(_func(params, LOWERED_KERNEL_LOOP.replace("ATTRS", attrs)))
    assert func.body.kind == "parallel"
    err = _refused(params, LOWERED_KERNEL_LOOP.replace("ATTRS", ""))
    assert err.line == 5 and err.message.startswith(
        "a kernel called below it is passed X, which the kernel may write, and how far the "
        "kernel reaches into it is not known")


def test_a_lowered_function_says_so_and_reads_back():
    @T.prim_func
    def twice(X: T.Buffer(("n",), "float32")):
        for i in T.parallel(n):
            with T.block("first"):
                vi = T.axis.spatial(n, i)
                T.reads(X[vi])
                T.writes(X[vi])
                T.call_extern("test.bump_somewhere", X, vi, dtype="void")

    low = pyir.transform.lower_blocks(pyir.ir.IRModule.from_dict({"twice": twice}))["twice"]
    assert low.attr("lowered") is True
    pyir.ir.assert_structural_equal(from_source(low.script()), low)
