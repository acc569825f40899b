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
