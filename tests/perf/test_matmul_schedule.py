"""Correctness of the bench/matmul.py schedule (its 7x32 register tile, packed B), of the
register-tile / split-tail lowering it relies on, and of tensorize. No timings here."""

import importlib.util
import pathlib
import re

import numpy as np
import pytest
from pyir.schedule import Schedule, ScheduleError, gemm
from pyir.script import from_source
from pyir.script import tensor as T

import pyir
from pyir import transform
from pyir.codegen import emit_stmt
from pyir.codegen.emit_stmt import TILE_LOOP_UNROLL
from pyir.ir import conjuncts, stmt as S
from pyir.ir import walk
from pyir.ir.structural import assert_structural_equal

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "matmul.py"
_spec = importlib.util.spec_from_file_location("bench_matmul", _PATH)
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)


def _check(lib, n):
    rng = np.random.default_rng(n)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("parallel", [True, False])
def test_symbolic_schedule_matches_numpy_with_and_without_tails(parallel):
    lib = pyir.build(M.schedule_matmul(M.matmul_func(None), parallel=parallel).mod,
                     opt_level="fast")
    for n in (64, 61, 7, 33, 1):
        _check(lib, n)


@pytest.mark.parametrize("parallel", [True, False])
@pytest.mark.parametrize("n", [64, 59, 96, 70, 6])
def test_static_schedule_matches_numpy(n, parallel):
    """Tails of rows only (64, 96), of columns only (70), of both (59), a matrix smaller
    than one tile (6)."""
    lib = pyir.build(M.schedule_matmul(M.matmul_func(n), parallel=parallel).mod,
                     opt_level="fast")
    _check(lib, n)


def _lowered(mod):
    return transform.lower(mod).functions[0][1]


def test_register_tile_is_compacted_to_one_stack_tile():
    func = _lowered(M.schedule_matmul(M.matmul_func(None)).mod)
    tiles = [n.buffer for n in walk(func.body)
             if isinstance(n, S.Allocate) and n.buffer.name.startswith("C_local")]
    assert tiles and all(tuple(s.value for s in b.shape) == (224,) for b in tiles)
    assert all(kind == "stack" for name, kind in func.attr("storage") if name.startswith("C_local"))


def test_split_tails_give_a_guard_free_main_path():
    func = _lowered(M.schedule_matmul(M.matmul_func(None)).mod)
    # Groups of 4 column panels outside (`gemm.PANEL_GROUP`), the row tiles, then the
    # panels of a group: one test per tile for its row and its panel (i_0 * 7 + 6 < n and
    # j_0 * 128 + j_1 * 32 + 31 < n), inside all three loops. Its first branch holds the
    # hot k loop, with no `if` inside it; the other is the one copy of the partial tiles
    # (the last row of tiles, the last panel), under the test that the panel has a column
    # at all: a partial last group skips its panels past the last column.
    j0 = next(n for n in walk(func.body) if isinstance(n, S.For) and n.loop_var.name == "j_0")
    assert j0.kind == "parallel"
    i0 = j0.body
    assert isinstance(i0, S.For) and i0.loop_var.name == "i_0"
    j1 = i0.body
    assert isinstance(j1, S.For) and j1.loop_var.name == "j_1" and j1.extent.value == 4
    tile = j1.body
    assert isinstance(tile, S.IfThenElse)
    tested = [{v.name for v in pyir.arith.vars_of(c)} for c in conjuncts(tile.condition)]
    assert sorted(tested, key=len) == [{"i_0", "n"}, {"j_0", "j_1", "n"}]
    main = tile.then_case
    assert not any(isinstance(n, S.IfThenElse) for n in walk(main))
    assert any(isinstance(n, S.For) and n.kind == "vectorized" for n in walk(main))
    live = tile.else_case
    assert isinstance(live, S.IfThenElse) and live.else_case is None
    assert {v.name for v in pyir.arith.vars_of(live.condition)} == {"j_0", "j_1", "n"}
    assert sum(isinstance(n, S.IfThenElse) for n in walk(j0)) == 2


@pytest.mark.parametrize("n, parallel", [(None, "j_0"), (1024, "j_0"), (256, "j_0"),
                                         (224, "i_0"), (64, "i_0")])
def test_the_column_panels_run_in_parallel_when_there_are_enough(n, parallel):
    """The panel loop (or the loop over groups of panels) is outside the row tiles (one
    panel of packed B stays in L2 while the row tiles read it); it is the parallel loop
    with 8 panels or groups or more, or a number known only when called, and the row tiles
    are with fewer (224 columns: 7 panels)."""
    func = M.schedule_matmul(M.matmul_func(n)).mod["matmul"]
    loops = {x.loop_var.name: x for x in walk(func.body) if isinstance(x, S.For)}
    j0, i0 = loops["j_0"], loops["i_0"]
    assert i0 in list(walk(j0.body))
    assert [x.loop_var.name for x in (j0, i0) if x.kind == "parallel"] == [parallel]


@pytest.mark.parametrize("n, grouped", [(1024, True), (1100, True), (1050, True),
                                        (None, True), (896, False), (256, False)])
def test_panels_are_grouped_when_there_are_enough(n, grouped):
    """With the columns known only when called or at least 8 groups of `gemm.PANEL_GROUP`
    panels, each row tile runs over the panels of one group (``j_0, i_0, j_1, k``: a
    partial last group too, 1100 and 1050 columns) and its accumulator lives under the
    group's panel loop; 896 columns (7 groups) and 256 keep one panel per outer iteration.
    A partial last group is versioned per tile on the group's panel loop, also when the
    rows need no tail (1050 = 150 x 7)."""
    func = M.schedule_matmul(M.matmul_func(n)).mod["matmul"]
    loops = {x.loop_var.name: x for x in walk(func.body) if isinstance(x, S.For)}
    outer, i0 = loops["j_0"], loops["i_0"]
    assert i0 in list(walk(outer.body))
    assert ("j_2" in loops) == grouped
    if grouped:
        panel = loops["j_1"]
        assert panel.extent.value == gemm.PANEL_GROUP
        assert panel in list(walk(i0.body)) and loops["k"] in list(walk(panel.body))
        if n is not None:
            assert outer.extent.value == -(-n // (32 * gemm.PANEL_GROUP))
    lowered = _lowered(M.schedule_matmul(M.matmul_func(n)).mod)
    alloc = next(a for a in walk(lowered.body)
                 if isinstance(a, S.Allocate) and a.buffer.name.startswith("C_local"))
    around = [x for x in walk(lowered.body) if isinstance(x, S.For) and alloc in walk(x.body)]
    innermost = min(around, key=lambda x: sum(1 for _ in walk(x)))
    assert innermost.loop_var.name == ("j_1" if grouped else "i_0")
    per_tile = [x.loop_var.name for x in walk(lowered.body) if isinstance(x, S.For)
                and dict(x.annotations).get("pyir.versioned")]
    assert per_tile == (["j_1"] if grouped and (n is None or n % 128) else [])


@pytest.mark.parametrize("parallel", [True, False])
@pytest.mark.parametrize("n", [1024, 1100, 1050])
def test_grouped_panels_match_numpy(n, parallel):
    """Whole groups (1024 columns) and a partial last group (1100: 8 groups and 76
    columns, the last panel partial, the last one past the matrix; 1050: 26 columns, whole
    row tiles)."""
    lib = pyir.build(M.schedule_matmul(M.matmul_func(n), parallel=parallel).mod,
                     opt_level="fast")
    _check(lib, n)


@pytest.mark.parametrize("n, rows", [(1024, 2), (64, 1)])
def test_a_static_last_tile_is_a_smaller_register_tile(n, rows):
    """With n known, the partial tile is the last iteration of i_0 (146 when n = 1024): i_0
    is that constant there, and the tile's rows are an unrolled loop of constant extent
    (1024 - 146 * 7 = 2), as the whole tile's are: no guard, no clamped bound."""
    func = _lowered(M.schedule_matmul(M.matmul_func(n)).mod)
    i0 = next(x for x in walk(func.body) if isinstance(x, S.For) and x.loop_var.name == "i_0")
    tile = i0.body
    assert isinstance(tile, S.IfThenElse) and tile.condition.b.value == n // 7
    last = tile.else_case
    assert i0.loop_var not in pyir.arith.vars_of(last)
    assert not any(isinstance(x, (S.IfThenElse, S.LetStmt)) for x in walk(last))
    rows_loops = [x for x in walk(last) if isinstance(x, S.For)
                  and x.loop_var.name in ("i_1", "ax0")]
    assert len(rows_loops) == 3     # initialize, accumulate, copy out
    assert all(x.kind == "unroll" and x.extent.value == rows for x in rows_loops)


@pytest.mark.parametrize("target, rows, tile", [
    ("llvm -mattr=+avx512f", 8, (8, 32)), ("llvm -mattr=+avx512f", 14, (14, 32)),
    ("llvm -mattr=+avx512f", 1, (1, 32)), ("llvm -mattr=+avx512f", 0, (1, 32)),
    ("llvm -mattr=+avx512f", 20, (10, 32)), ("llvm -mcpu=haswell", 6, (6, 16)),
    ("llvm -mcpu=haswell", 12, (6, 16)), ("llvm -mcpu=haswell", 7, (4, 16))])
def test_few_rows_take_as_few_register_tiles_as_the_registers_allow(target, rows, tile):
    """Two accumulators a row beside two vectors of B and one of A: 14 rows in 32 vector
    registers, 6 in 16; more rows are cut into tiles of equal rows."""
    assert gemm.few_rows_tile(rows, "float32", target) == tile


@pytest.mark.parametrize("target, batches, rows, in_place", [
    ("llvm -mattr=+avx512f", 1, 28, True), ("llvm -mattr=+avx512f", 1, 29, False),
    ("llvm -mattr=+avx512f", 2, 14, True), ("llvm -mattr=+avx512f", 3, 5, False),
    ("llvm -mattr=+avx512f", 1, 15, True), ("llvm -mattr=+avx512f", 0, 0, True),
    ("llvm -mcpu=haswell", 1, 12, True), ("llvm -mcpu=haswell", 1, 13, False)])
def test_known_rows_read_b_in_place_in_at_most_two_tiles(target, batches, rows, in_place):
    """Up to two of the tallest tiles the registers allow read B in place (each streams all
    of B); more pack it."""
    assert gemm.reads_b_in_place(batches, rows, "float32", target) is in_place


@pytest.mark.parametrize("rows, k, dtype, packs", [
    (14, 4096, "float32", True), (9, 1024, "float32", True), (9, 512, "float64", True),
    (14, 2048, "float32", True), (14, None, "float32", True), (8, 4096, "float32", False),
    (8, None, "float32", False), (14, 784, "float32", False), (14, 512, "float32", False),
    (14, 1025, "float32", False)])
def test_a_tile_packs_a_when_its_rows_would_share_one_l1_set(rows, k, dtype, packs):
    """More rows than the 8 ways of an L1 set, a multiple of 4 KiB apart (or apart by k
    known only when called), read A packed; rows 2 KiB apart spread over two sets."""
    assert gemm.packs_a(rows, k, dtype) is packs


@pytest.mark.parametrize("target, tile", [("llvm -mcpu=znver4", (7, 32)),
                                          ("llvm -mcpu=haswell", (6, 16))])
def test_the_symbolic_main_tile_keeps_its_addresses_in_registers(target, tile):
    """The k loop of the symbolic matmul's main tile, unrolled four times
    (`pyir.codegen.emit_stmt.TILE_LOOP_UNROLL`), and its remainder loop read and write no
    stack slot, and the tile as a whole spills at most three values (kept across the loops;
    it also reads its seventh argument there): its write-back addresses are computed after
    the k loop, not before it (where they lived across the loop and were spilled: 12
    stack accesses with the AVX-512 tile, 4 with the AVX2 one, before the unrolling)."""
    lib = pyir.build(M.schedule_matmul(M.matmul_func(None), tile=tile).mod, target=target,
                     opt_level="fast")
    asm = lib.source("asm")
    main = asm[asm.index("matmul.split0.main:"):]
    main = main[:main.index(".Lfunc_end")]
    fma = re.compile(r"\bvfmadd\d+ps\b")
    k_loops = [b for b in re.split(r"\n(?=\.LBB)", main) if fma.search(b)]
    assert sorted(len(fma.findall(b)) for b in k_loops) == [
        tile[0] * 2, TILE_LOOP_UNROLL * tile[0] * 2]
    stack = re.compile(r"^\s+\S+\s.*\(%rsp\)", re.MULTILINE)
    assert not any(stack.findall(b) for b in k_loops)
    assert len(set(re.findall(r"^\s+mov\S*\s+%\w+, (-?\d*\(%rsp\))", main, re.MULTILINE))) <= 3


def test_the_tile_loop_asks_llvm_to_unroll_it(monkeypatch):
    """The k loop of the symbolic matmul's tile -- vector code that updates a stack buffer --
    carries LLVM's hint to unroll it `TILE_LOOP_UNROLL` times (the packing loop, which
    updates no tile, does not), and the remainder loop gets each n right; a body of more
    than `MAX_TILE_LOOP_BODY` instructions is left a plain loop."""
    hint = f'!"llvm.loop.unroll.count", i32 {TILE_LOOP_UNROLL}'
    lib = pyir.build(M.schedule_matmul(M.matmul_func(None)).mod, opt_level="fast",
                     use_cache=False)
    text = lib.source("llvm")
    (option,) = re.findall(rf"^(!\d+) = !\{{ {re.escape(hint)} \}}$", text, re.MULTILINE)
    (loop_id,) = re.findall(rf"^(!\d+) = !\{{ \1, {option} \}}$", text, re.MULTILINE)
    assert len(re.findall(rf"!llvm\.loop {loop_id}\b", text)) == 1
    for n in (1, 2, 3, 4, 5, 9, 70):
        M.check(lib, "matmul", n, seed=n)
    monkeypatch.setattr(emit_stmt, "MAX_TILE_LOOP_BODY", 20)
    small = pyir.build(M.schedule_matmul(M.matmul_func(None)).mod, opt_level="fast",
                       use_cache=False)
    assert "llvm.loop.unroll.count" not in small.source("llvm")


def test_a_split_reduction_loop_keeps_the_symbolic_tile_in_registers():
    """k split by 4 and its inner loop unrolled in the symbolic matmul's 7 x 32 tiles: the
    versions of the k_0 loop stay in the tile's function (outlined, they took the tile by
    address and the kernel ran 2.5x slower), the last, partial step of k_0 keeps the tile's
    rows unrolled (made a loop, they put the tile in memory: 2.3x slower), so no k loop
    stores a vector; the results are right for each remainder of n by 4."""
    sch = Schedule(M.matmul_func(None))
    gemm.schedule_matmul(sch, "C", (7, 32))
    c = sch.get_block("C")
    k = next(lp for lp in sch.get_loops(c) if sch.get(lp).loop_var.name == "k")
    _, k1 = sch.split(k, factors=[None, 4])
    sch.unroll(k1)
    lib = pyir.build(sch.mod, target="llvm -mcpu=znver4", opt_level="fast")
    asm = lib.source("asm")
    assert "matmul.split1" not in asm
    main = asm[asm.index("matmul.split0.main:"):]
    main = main[:main.index(".Lfunc_end")]
    fma = re.compile(r"\bvfmadd\d+ps\b")
    k_loops = [b for b in re.split(r"\n(?=\.LBB)", main) if fma.search(b)]
    assert len(fma.findall(main)) >= 4 * 7 * 2     # the 4 steps of k_1, here
    vector_store = re.compile(r"^\s+vmov\w*\s+%[xyz]mm\d+, [^%\n]*\(", re.MULTILINE)
    assert not any(vector_store.search(b) for b in k_loops)
    host = pyir.build(sch.mod, opt_level="fast")
    for n in (33, 34, 35, 36, 71):
        M.check(host, "matmul", n, seed=n)


def test_the_bench_compares_two_kernels_in_pairs_of_calls():
    """`paired_ratio` is the median ratio of back-to-back calls: a busy spell that slows
    every call threefold through the second half (on a clock the calls advance) leaves it
    at the kernels' own ratio; timing one kernel's calls and then the other's would read
    4.5x."""
    clock, calls = [0.0], []

    def kernel(cost):
        def run():
            calls.append(cost)
            clock[0] += cost * (3.0 if len(calls) > 44 else 1.0)
        return run

    assert M.paired_ratio(kernel(1.0), kernel(1.5), (), clock=lambda: clock[0]) == \
        pytest.approx(1.5)
    assert len(calls) == 2 + 2 * 41


@pytest.mark.parametrize("tile", [(7, 32), (3, 16)])
def test_the_tile_probe_computes_the_tiles_products(tile):
    """`TileProbe` runs the register tile's inner loop for real: after ``reps`` runs over
    its panels, C holds ``reps`` times A's rows times B's panel."""
    probe = M.TileProbe(tile, reps=3)
    rng = np.random.default_rng(0)
    probe._a[:] = rng.integers(0, 4, probe._a.size)
    probe._b[:] = rng.integers(0, 4, probe._b.size)
    probe.runs(repeats=1)
    a = probe._a.reshape(tile[0], probe.K)
    b = probe._b.reshape(probe.K, tile[1])
    np.testing.assert_array_equal(probe._c.reshape(tile), 3 * (a @ b))
    assert probe.flop == 2 * tile[0] * tile[1] * probe.K * 3


def test_split_tail_main_path_is_the_likely_branch():
    """Codegen weights the main side of every split loop's test 1000:1, so that register
    allocation keeps the hot tile in registers (with symbolic n, values live only in the
    tails used to push an accumulator onto the stack)."""
    from pyir.codegen.llvm import codegen
    text, _ = codegen(transform.lower(M.schedule_matmul(M.matmul_func(None)).mod))
    weights = re.findall(r'^(!\d+) = !{ !"branch_weights", i32 1000, i32 1 }', text, re.MULTILINE)
    assert len(weights) == 1
    # the packing test and the tile test (rows and columns together)
    assert len(re.findall(rf"br i1 .*, !prof {weights[0]}$", text, re.MULTILINE)) == 2


def test_split_tails_run_as_masked_vectors():
    """The column tail of a tile (fewer than 32 columns left) is masked vector code, not a
    vector loop plus a scalar loop; the numbers are checked at odd sizes above."""
    from pyir.codegen.llvm import codegen
    text, _ = codegen(transform.lower(M.schedule_matmul(M.matmul_func(None)).mod))
    assert '@"llvm.masked.load.' in text and '@"llvm.masked.store.' in text


def test_shape_variables_divide_without_a_floor_correction():
    """n is an array dimension, never negative: the packed panels' size, (n + 31) // 32
    panels, is a plain signed division, without the remainder test that floors it for a
    negative dividend."""
    from pyir.codegen.llvm import codegen
    text, _ = codegen(transform.lower(M.schedule_matmul(M.matmul_func(None)).mod))
    assert re.search(r"= sdiv i64 %\S+, 32$", text, re.MULTILINE)
    assert "srem" not in text


def test_split_tail_loops_is_exact_for_a_small_kernel():
    src = '''
from pyir.script import tensor as T

@T.prim_func
def add1(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)
'''
    sch = Schedule(from_source(src))
    i, = sch.get_loops(sch.get_block("B"))
    _, i1 = sch.split(i, factors=[None, 16])
    sch.vectorize(i1)
    lib = pyir.build(sch.mod)
    for n in (0, 1, 15, 16, 17, 100):
        a = np.arange(n, dtype=np.float32)
        b = np.full(n, -7, np.float32)
        lib["add1"](a, b)
        np.testing.assert_array_equal(b, a + 1)


# ---------------------------------------------------------------- tensorize
@pytest.fixture(scope="module")
def intrin():
    return M.register_ukernel()


def _tensorized(n=None, parallel=False, intrin_name=M.INTRIN):
    return M.schedule_matmul(M.matmul_func(n), parallel=parallel, tensorize=intrin_name)


@pytest.mark.parametrize("parallel", [False, True])
def test_tensorize_result_matches_numpy(intrin, parallel):
    lib = pyir.build(_tensorized(parallel=parallel).mod, opt_level="fast")
    for n in (64, 61, 13):
        _check(lib, n)


@pytest.mark.parametrize("n", [45, 64, 70])
def test_tensorize_static_matches_numpy(intrin, n):
    lib = pyir.build(_tensorized(n=n).mod, opt_level="fast")
    _check(lib, n)


def test_tensorize_inserts_the_kernel_call(intrin):
    text = _tensorized().mod.script()
    assert 'T.call_extern("bench.ukernel_7x32.impl"' in text


def test_tensorize_leaves_partial_tiles_as_scheduled(intrin):
    """Whole tiles call the kernel; the partial tile keeps the loops as they were scheduled
    before tensorize (i1 unrolled, j1 vectorized), so it runs as vector code."""
    func = _tensorized().mod.functions[0][1]
    branch = next(n for n in walk(func.body) if isinstance(n, S.IfThenElse)
                  and any(isinstance(c, S.Evaluate) for c in walk(n.then_case)))
    kinds = [n.kind for n in walk(branch.else_case) if isinstance(n, S.For)]
    assert kinds == ["unroll", "vectorized"]


@pytest.mark.parametrize("n, sizes", [(None, (64, 61, 13, 1)), (45, (45,))])
def test_tensorize_reads_a_packed_k_major(intrin, n, sizes):
    """With ``pack_a`` the kernel takes its 7 rows of A from the k-major copy, where they
    lie one element apart: the call passes row stride 1, and the results stay numpy's."""
    sch = gemm.schedule_matmul(Schedule(M.matmul_func(n)), "C", M.TILE, parallel=False,
                               tensorize=intrin, pack_a=True)
    call = next(line.strip() for line in sch.mod.script().splitlines()
                if "T.call_extern" in line)
    assert call == ('T.call_extern("bench.ukernel_7x32.impl", C_local[vi_o, vj_o, 0, 0], '
                    'A_global[vk_o, vi_o * 7], B_global[vj_o, vk_o, 0], 1, dtype="void")')
    lib = pyir.build(sch.mod, opt_level="fast")
    for size in sizes:
        _check(lib, size)


def test_the_lowered_partial_tile_calls_no_kernel(intrin):
    """The kernel call's guard (the whole 7x32 tile fits) is false in the partial-tile
    copy that split_tail_loops makes: that copy is only loops, and LLVM gets no inlined
    micro-kernel to compile in it."""
    func = _lowered(_tensorized().mod)
    i0 = next(n for n in walk(func.body) if isinstance(n, S.For) and n.loop_var.name == "i_0")
    tile = i0.body
    calls = lambda s: [n for n in walk(s) if isinstance(n, S.Evaluate)]  # noqa: E731
    assert len(calls(tile.then_case)) == 1
    assert calls(tile.else_case) == []


def test_the_micro_kernel_writes_only_its_accumulator(intrin):
    """LLVM proves that the LLVM IR micro-kernel only reads A and packed B, so the tensorized
    matmul takes read-only A and B; C, which it writes, must be writeable."""
    kernel = pyir.ffi.get_global_func(f"{intrin}.impl")
    assert kernel.writes == {"C"} and not kernel.writes_declared
    lib = pyir.build(_tensorized().mod, opt_level="fast")
    values = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    a = np.frombuffer(values.tobytes(), np.float32).reshape(64, 64)   # read-only
    c = np.zeros((64, 64), np.float32)
    lib["matmul"](a, a, c)
    np.testing.assert_allclose(c, values @ values, rtol=1e-4, atol=1e-4)
    with pytest.raises(pyir.ArgumentValueError, match="'C' is written by the function but "
                       "the array passed is read-only"):
        lib["matmul"](a, a, a)


C_UKERNEL = r"""
#include <stdint.h>
void ukernel_7x32(float *c, const float *a, const float *b, int64_t lda) {
    for (int r = 0; r < 7; r++)
        for (int j = 0; j < 32; j++)
            c[r * 32 + j] += a[r * lda] * b[j];
}
"""


@pytest.fixture(scope="module")
def c_intrin(c_library):
    """The 7x32 update as a C function in a shared library built here, registered as the
    tensor intrinsic "test.c_ukernel_7x32" (the description is the bench's)."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin
    from pyir.script import tensor as T
    lib = c_library(C_UKERNEL)

    @extern("test.c_ukernel_7x32.impl", symbol=lib.ukernel_7x32, override=True)
    def ukernel(C: T.Buffer((7, 32), "float32"), A: T.Buffer((7, "lda"), "float32"),
                B: T.Buffer((1, 32), "float32"), lda: T.int64): ...

    register_tensor_intrin("test.c_ukernel_7x32",
                           from_source(M.UKERNEL_DESC_SRC.format(rows=7, cols=32)),
                           "test.c_ukernel_7x32.impl", override=True)
    return "test.c_ukernel_7x32"


@pytest.mark.parametrize("parallel", [False, True])
def test_tensorize_with_a_c_kernel_matches_numpy_built_and_exported(c_intrin, parallel,
                                                                    tmp_path):
    lib = pyir.build(_tensorized(parallel=parallel, intrin_name=c_intrin).mod)
    assert 'T.call_extern("test.c_ukernel_7x32.impl"' in _tensorized(
        intrin_name=c_intrin).mod.script()
    for n in (64, 61, 13):
        _check(lib, n)
    lib.export_library(tmp_path / "mm.so")
    _check(pyir.load_module(tmp_path / "mm.so"), 61)


def test_tensorize_is_recorded_and_replays(intrin):
    sch = _tensorized()
    assert any(inst.kind == "tensorize" for inst in sch.trace)
    assert "sch.tensorize(" in str(sch.trace)
    replayed = Schedule(M.matmul_func(None))
    sch.trace.apply_to(replayed)
    assert_structural_equal(replayed.mod, sch.mod)


def test_tensorize_round_trips_through_print_and_parse(intrin):
    mod = _tensorized().mod
    assert_structural_equal(from_source(mod.script()), mod)


def _before_tensorize(split_j=32):
    sch = Schedule(M.matmul_func(None))
    c = sch.get_block("C")
    bp = sch.cache_read(c, "B", "global")
    sch.transform_layout(bp, ("write", 0), "k, j -> j // 32, k, j % 32")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 7])
    j0, j1 = sch.split(j, factors=[None, split_j])
    sch.reorder(i0, j0, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j0)
    sch.decompose_reduction(c, k)
    sch.transform_layout(cw, ("read", 0), "i, j -> i // 7, j // 32, i % 7, j % 32")
    return sch, i1


def test_tensorize_mismatched_extent_says_what_differs(intrin):
    sch, i1 = _before_tensorize(split_j=16)
    before = sch.mod
    with pytest.raises(ScheduleError, match="extent 16 but the description's loop"):
        sch.tensorize(i1, M.INTRIN)
    assert sch.mod is before


def test_tensorize_mismatched_computation_says_what_differs(intrin):
    desc = from_source(M.UKERNEL_DESC_SRC.format(rows=7, cols=32).replace(
        "C[vi, vj] + A[vi, 0] * B[0, vj]", "C[vi, vj] - A[vi, 0] * B[0, vj]"))
    from pyir.schedule import register_tensor_intrin
    register_tensor_intrin("test.sub_7x32", desc, "bench.ukernel_7x32.impl", override=True)
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match="operator sub where the block has add"):
        sch.tensorize(i1, "test.sub_7x32")


def test_tensorize_mismatched_layout_says_what_differs(intrin):
    sch = Schedule(M.matmul_func(None))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 7])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(i0, j0, k, i1, j1)
    sch.decompose_reduction(c, k)
    # C is n wide, not 32: its rows are not where the kernel writes them.
    with pytest.raises(ScheduleError, match="moves by n elements per step of loop i_1"):
        sch.tensorize(i1, M.INTRIN)


def test_tensorize_refuses_an_access_that_is_not_linear_in_the_tile(intrin):
    """B packed in 16-wide panels: j_1's 32 columns are two runs a panel apart. The stride
    of one step (1) matches the kernel's, and was once all that was compared: the kernel
    then read 32 contiguous floats."""
    sch = Schedule(M.matmul_func(None))
    c = sch.get_block("C")
    bp = sch.cache_read(c, "B", "global")
    sch.transform_layout(bp, ("write", 0), "k, j -> j // 16, k, j % 16")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 7])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(i0, j0, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j0)
    sch.decompose_reduction(c, k)
    sch.transform_layout(cw, ("read", 0), "i, j -> i // 7, j // 32, i % 7, j % 32")
    before = sch.mod
    with pytest.raises(ScheduleError, match="B_global is not accessed linearly in loop j_1"):
        sch.tensorize(i1, M.INTRIN)
    assert sch.mod is before


SHIFTED_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def shifted(A: T.Buffer((7, 5), "float32"), B: T.Buffer((5, 32), "float32"),
            C: T.Buffer((14, 32), "float32")):
    for r, i, j in T.grid(5, 7, 32):
        with T.block("C"):
            vr = T.axis.reduce(5, r)
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C[vi + 7, vj] + A[vi, vr] * B[vr, vj]
'''


def test_tensorize_refuses_a_buffer_read_and_written_at_different_places(intrin):
    """The description reads and writes C at one place; this block reads it 7 rows below
    where it writes (only one of the two bases could be passed)."""
    sch = Schedule(from_source(SHIFTED_SRC))
    r, i, j = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="the block accesses C at -?224 elements from its "
                       "first access where the description's C is at 0"):
        sch.tensorize(i, M.INTRIN)


def _declare_kernel(name, c_dtype="float32", extra=False, c_shape=(7, 32)):
    from pyir.ffi import extern
    from pyir.script import tensor as T
    ir = M.ukernel_ir(7, 32, M.vector_lanes())

    if extra:   # the same kernel, taking a pointer it does not use
        ir = ir.replace("@pyir_ukernel_7x32", "@test_ukernel_extra").replace(
            "ptr noalias %b, i64 %lda", "ptr noalias %b, ptr %d, i64 %lda")

        def kernel(C: T.Buffer(c_shape, c_dtype), A: T.Buffer((7, "lda"), "float32"),
                   B: T.Buffer((1, 32), "float32"), D: T.Buffer((4,), "float32"),
                   lda: T.int64): ...
    else:
        def kernel(C: T.Buffer(c_shape, c_dtype), A: T.Buffer((7, "lda"), "float32"),
                   B: T.Buffer((1, 32), "float32"), lda: T.int64): ...
    extern(name, llvm_ir=ir, override=True)(kernel)


def test_tensorize_refuses_a_kernel_of_another_dtype(intrin):
    from pyir.schedule import register_tensor_intrin
    _declare_kernel("test.f64_kernel", c_dtype="float64")
    register_tensor_intrin("test.f64", from_source(M.UKERNEL_DESC_SRC.format(rows=7, cols=32)),
                           "test.f64_kernel", override=True)
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match="the kernel's buffer C is float64, the "
                       "description's C is float32"):
        sch.tensorize(i1, "test.f64")


def test_tensorize_refuses_a_kernel_whose_buffer_shape_differs(intrin):
    """A kernel declared over 8 x 32 elements of C where the description has 7 x 32 would
    write a row past the tile."""
    from pyir.schedule import register_tensor_intrin
    _declare_kernel("test.tall_kernel", c_shape=(8, 32))
    register_tensor_intrin("test.tall", from_source(M.UKERNEL_DESC_SRC.format(rows=7, cols=32)),
                           "test.tall_kernel", override=True)
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match=r"the kernel's buffer C has shape \(8, 32\), the "
                       r"description's C \(7, 32\): the kernel would touch other memory"):
        sch.tensorize(i1, "test.tall")


def test_tensorize_refuses_a_kernel_taking_another_number_of_buffers(intrin):
    from pyir.schedule import register_tensor_intrin
    _declare_kernel("test.extra_kernel", extra=True)
    register_tensor_intrin("test.extra_only_kernel", from_source(M.UKERNEL_DESC_SRC.format(
        rows=7, cols=32)), "test.extra_kernel", override=True)
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match=r"the kernel takes 4 buffer\(s\), the "
                       "description 3"):
        sch.tensorize(i1, "test.extra_only_kernel")


def test_tensorize_refuses_loops_of_another_count(intrin):
    """From k down there are three loops (k, i_1, j_1); the description has two. A block
    under one loop has fewer than the description."""
    sch, i1 = _before_tensorize()
    k = sch.get_loops(sch.get_block("C"))[-3]
    with pytest.raises(ScheduleError, match=r"the description has 2 loop\(s\), the schedule "
                       "has 3 from k down"):
        sch.tensorize(k, M.INTRIN)

    @T.prim_func
    def one_loop(A: T.Buffer((32,), "float32")):
        for i in range(32):
            with T.block("A"):
                vi = T.axis.spatial(32, i)
                A[vi] = A[vi] + T.float32(1)

    sch = Schedule(one_loop)
    with pytest.raises(ScheduleError, match=r"block \"A\": the block has 1 loop\(s\), the "
                       "description 2"):
        sch.tensorize(sch.get_block("A"), M.INTRIN)


def test_tensorize_refuses_kernel_buffers_in_another_order(intrin):
    """Matched by position, a kernel taking (A, C, B) against a description (C, A, B) would
    write the tile into A."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin

    @extern("test.reordered_kernel", llvm_ir=M.ukernel_ir(7, 32, M.vector_lanes()),
            override=True)
    def kernel(A: T.Buffer((7, 32), "float32"), C: T.Buffer((7, "lda"), "float32"),
               B: T.Buffer((1, 32), "float32"), lda: T.int64): ...

    register_tensor_intrin("test.reordered", from_source(M.UKERNEL_DESC_SRC.format(
        rows=7, cols=32)), "test.reordered_kernel", override=True)
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match="the kernel's buffer A stands where the "
                       "description has C: buffers are matched in order, name them alike"):
        sch.tensorize(i1, "test.reordered")


def test_a_description_with_a_predicate_is_refused(intrin):
    """A kernel computes every element of its loops: a T.where in the description would be
    ignored, and the elements it excludes computed anyway."""
    from pyir.schedule import register_tensor_intrin
    desc = M.UKERNEL_DESC_SRC.format(rows=7, cols=32).replace(
        'vi, vj = T.axis.remap("SS", [i, j])',
        'vi, vj = T.axis.remap("SS", [i, j])\n            T.where(j < 16)')
    with pytest.raises(ScheduleError, match="register_tensor_intrin: test.where: the "
                       "description's block has a T.where"):
        register_tensor_intrin("test.where", from_source(desc), "bench.ukernel_7x32.impl")


def test_tensorize_refuses_a_description_buffer_its_computation_does_not_use(intrin):
    from pyir.schedule import register_tensor_intrin
    _declare_kernel("test.extra_kernel", extra=True)
    desc = from_source(M.UKERNEL_DESC_SRC.format(rows=7, cols=32).replace(
        'B: T.Buffer((1, 32), "float32")', 'B: T.Buffer((1, 32), "float32"), '
        'D: T.Buffer((4,), "float32")'))
    register_tensor_intrin("test.extra", desc, "test.extra_kernel", override=True)
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match="the description's buffer D is not accessed by "
                       "its computation"):
        sch.tensorize(i1, "test.extra")


@pytest.mark.parametrize("a_access, words", [
    ("A[vi, 1]", "the description's first access of A is not its first element"),
    ("A[vi // 2, 0]", "the description's A is not accessed linearly in loop i"),
])
def test_tensorize_refuses_a_description_it_cannot_map(intrin, a_access, words):
    from pyir.schedule import register_tensor_intrin
    desc = from_source(M.UKERNEL_DESC_SRC.format(rows=7, cols=32).replace("A[vi, 0]", a_access))
    register_tensor_intrin("test.odd_desc", desc, "bench.ukernel_7x32.impl", override=True)
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match=words):
        sch.tensorize(i1, "test.odd_desc")


def test_tensorize_unknown_intrinsic(intrin):
    sch, i1 = _before_tensorize()
    with pytest.raises(ScheduleError, match="no tensor intrinsic"):
        sch.tensorize(i1, "no.such.intrin")
    with pytest.raises(ScheduleError, match=r"tensorize: intrinsic \['x'\]: no tensor "
                       "intrinsic of this name"):
        sch.tensorize(i1, ["x"])


def test_register_tensor_intrin_checks_its_name_and_loops():
    """A name that is no string broke list_tensor_intrins; a description without loops, an
    IndexError when tensorizing a block."""
    from pyir.schedule import register_tensor_intrin
    desc = from_source(M.UKERNEL_DESC_SRC.format(rows=7, cols=32))
    with pytest.raises(ScheduleError, match="register_tensor_intrin: 5: the name of a tensor "
                       "intrinsic is a non-empty string"):
        register_tensor_intrin(5, desc, "bench.ukernel_7x32.impl")

    @T.prim_func
    def loopless(C: T.Buffer((1,), "float32"), A: T.Buffer((1,), "float32")):
        with T.block("u"):
            C[0] = C[0] + A[0]

    with pytest.raises(ScheduleError, match="register_tensor_intrin: test.loopless: the "
                       "description has no loops"):
        register_tensor_intrin("test.loopless", loopless, "bench.ukernel_7x32.impl")


ROWS_IR = """
define void @test_rows2x4(ptr %c, ptr %a, i64 %ldc, i64 %lda) {
  %a1 = getelementptr float, ptr %a, i64 %lda
  %c1 = getelementptr float, ptr %c, i64 %ldc
  %x0 = load <4 x float>, ptr %a, align 4
  %x1 = load <4 x float>, ptr %a1, align 4
  %y0 = fmul <4 x float> %x0, <float 2.0, float 2.0, float 2.0, float 2.0>
  %y1 = fmul <4 x float> %x1, <float 2.0, float 2.0, float 2.0, float 2.0>
  store <4 x float> %y0, ptr %c, align 4
  store <4 x float> %y1, ptr %c1, align 4
  ret void
}
"""

ROWS_DESC = '''
from pyir.script import tensor as T

@T.prim_func
def rows(C: T.Buffer((2, "ldc"), "float32"), A: T.Buffer((2, "lda"), "float32")):
    for i, j in T.grid(2, 4):
        with T.block("u"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
'''


@T.prim_func
def _scale(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)


@pytest.fixture(scope="module")
def rows_intrin():
    """"test.rows": two rows of 4 floats doubled, each buffer's rows a stride apart."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin

    @extern("test.rows2x4", llvm_ir=ROWS_IR, override=True)
    def rows2x4(C: T.Buffer((2, "ldc"), "float32"), A: T.Buffer((2, "lda"), "float32"),
                ldc: T.int64, lda: T.int64): ...

    register_tensor_intrin("test.rows", from_source(ROWS_DESC), "test.rows2x4", override=True)
    return "test.rows"


ROWS_C = r"""
#include <stdint.h>
void rows2x4(float *c, const float *a, int64_t ldc, int64_t lda) {
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            c[i * ldc + j] = a[i * lda + j] * 2;
}
"""


def test_tensorize_refuses_a_kernel_that_does_not_write_what_the_description_writes(
        c_library):
    """Declared with writes="A", the kernel was called for the tiles of C the description
    writes: the tensorized function, writing C through the kernel only, took a read-only C
    and the kernel wrote into it. Nor may LLVM IR that only reads C stand for the
    description."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin
    lib = c_library(ROWS_C)

    @extern("test.rows_writes_a", symbol=lib.rows2x4, writes="A", override=True)
    def declared(C: T.Buffer((2, "ldc"), "float32"), A: T.Buffer((2, "lda"), "float32"),
                 ldc: T.int64, lda: T.int64): ...

    @extern("test.rows_reads_c", override=True, llvm_ir="define void @test_rows_nop("
            "ptr %c, ptr %a, i64 %ldc, i64 %lda) {\n  ret void\n}\n")
    def reads(C: T.Buffer((2, "ldc"), "float32"), A: T.Buffer((2, "lda"), "float32"),
              ldc: T.int64, lda: T.int64): ...

    for impl, why in (("test.rows_writes_a", "the declaration of 'test.rows_writes_a' does "
                       "not name C in writes= \\(it names A\\)"),
                      ("test.rows_reads_c", "LLVM proves that @test_rows_nop only reads C")):
        register_tensor_intrin("test.rows_lying", from_source(ROWS_DESC), impl, override=True)
        sch = Schedule(_scale)
        i, j = sch.get_loops(sch.get_block("C"))
        i0, i1 = sch.split(i, factors=[None, 2])
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(i0, j0, i1, j1)
        with pytest.raises(ScheduleError, match="tensorize: intrinsic \"test.rows_lying\": the "
                           f"description writes C, but {why}: the calling function would take "
                           "a read-only array for it"):
            sch.tensorize(i1, "test.rows_lying")



def test_tensorize_refuses_a_kernel_that_does_not_take_a_row_stride():
    """The kernel's A has rows lda apart, lda not among its parameters: tensorize called it
    with nothing saying what lda is, and only the build refused the call."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin

    @extern("test.rows_no_lda", llvm_ir="define void @test_rows_no_lda(ptr %c, ptr %a, "
            "i64 %ldc) {\n  ret void\n}\n", writes="C", override=True)
    def kernel(C: T.Buffer((2, "ldc"), "float32"), A: T.Buffer((2, "lda"), "float32"),
               ldc: T.int64): ...

    register_tensor_intrin("test.rows_no_lda", from_source(ROWS_DESC), "test.rows_no_lda",
                           override=True)
    sch = Schedule(_scale)
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 2])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, i1, j1)
    before = sch.mod
    with pytest.raises(ScheduleError, match="tensorize: intrinsic \"test.rows_no_lda\": the "
                       "kernel's buffer A has rows lda apart, but the kernel does not take lda: "
                       "declare lda: T.int64 as a parameter of 'test.rows_no_lda'"):
        sch.tensorize(i1, "test.rows_no_lda")
    assert sch.mod is before

#: ROWS_IR adding A's rows into C's, both rows of C loaded before either is stored.
ACC_ROWS_IR = ROWS_IR.replace("@test_rows2x4", "@test_acc_rows2x4")
for _r in "01":
    ACC_ROWS_IR = ACC_ROWS_IR.replace(
        f"%y{_r} = fmul <4 x float> %x{_r}, <float 2.0, float 2.0, float 2.0, float 2.0>",
        f"%o{_r} = load <4 x float>, ptr %c{_r if _r == '1' else ''}, align 4\n"
        f"  %y{_r} = fadd <4 x float> %o{_r}, %x{_r}")


@T.prim_func
def _col_sum(A: T.Buffer((8, 4), "float32"), C: T.Buffer((1, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("RS", [i, j])
            C[0, vj] = C[0, vj] + A[vi, vj]


@T.prim_func
def _add_into(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C[vi, vj] + A[vi, vj]


def test_tensorize_refuses_a_row_stride_that_overlaps_the_rows_it_writes():
    """C[vi, vj] += A[vi, vj] over 2 rows of 4, ldc apart, matched a column sum (a
    reduction over the rows): ldc was 0, and the kernel, loading both rows before storing
    them, added one row of A where the sum needs both. Rows ldc = 4 apart are fine."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin

    @extern("test.acc_rows2x4", llvm_ir=ACC_ROWS_IR, override=True)
    def acc_rows(C: T.Buffer((2, "ldc"), "float32"), A: T.Buffer((2, "lda"), "float32"),
                 ldc: T.int64, lda: T.int64): ...

    register_tensor_intrin("test.acc_rows", from_source(ROWS_DESC.replace(
        "A[vi, vj] * T.float32(2)", "C[vi, vj] + A[vi, vj]")), "test.acc_rows2x4",
        override=True)
    def two_row_tiles(func):
        sch = Schedule(func)
        i, _ = sch.get_loops(sch.get_block("C"))
        return sch, sch.split(i, factors=[None, 2])[1]

    sch, i1 = two_row_tiles(_col_sum)
    with pytest.raises(ScheduleError, match="the description writes 4 elements of each row of "
                       "C, ldc apart, but C's are 0 apart: its rows would overlap"):
        sch.tensorize(i1, "test.acc_rows")
    sch, i1 = two_row_tiles(_add_into)
    sch.tensorize(i1, "test.acc_rows")
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = a.copy()
    pyir.build(sch.mod)["_add_into"](a, out)
    np.testing.assert_array_equal(out, 2 * a)


def _rows_tensorized(func, block="C"):
    """``func``'s block ``block`` in 2 x 4 tiles, written through a local cache, each tile
    computed by "test.rows". Returns (schedule, the cache's write-back block)."""
    sch = Schedule(func)
    c = sch.get_block(block)
    cw = sch.cache_write(c, 0, "local")
    i, j = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 2])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, i1, j1)
    sch.reverse_compute_at(cw, j0)
    sch.tensorize(i1, "test.rows")
    return sch, cw


def test_a_buffer_a_kernel_steps_through_keeps_its_strides(rows_intrin):
    """The kernel writes C_local's two rows ``ldc`` = 16 elements apart. Shrunk to the 2 x 4
    tile its write-back reads, rows 4 apart, the kernel wrote its second row past the tile
    and the write-back read garbage: the buffer stays as it is."""
    sch, _ = _rows_tensorized(_scale)
    shapes = [n.buffer.shape for n in walk(transform.lower(sch.mod)["_scale"].body)
              if isinstance(n, S.Allocate)]
    assert [tuple(d.value for d in s) for s in shapes] == [(128,)]
    a = np.arange(128, dtype=np.float32).reshape(8, 16)
    out = np.zeros_like(a)
    pyir.build(sch.mod)["_scale"](a, out)
    np.testing.assert_array_equal(out, a * 2)


def test_the_layout_of_a_buffer_a_kernel_takes_stays(rows_intrin):
    sch, cw = _rows_tensorized(_scale)
    with pytest.raises(ScheduleError, match="transform_layout: block \"C_local\", buffer "
                       "C_local: C_local is passed by address to kernel 'test.rows2x4', which "
                       "steps through it as it is laid out"):
        sch.transform_layout(cw, ("read", 0), "i, j -> j, i")


@T.prim_func
def _scale_sum(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((8, 16), "float32")
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)


def test_a_buffer_a_kernel_takes_is_not_inlined(rows_intrin):
    """Inlined, B's loads in the kernel's call would become the value A[...] + 1, not an
    address."""
    sch, _ = _rows_tensorized(_scale_sum)
    with pytest.raises(ScheduleError, match="compute_inline: block \"B\": B is passed by "
                       "address to kernel 'test.rows2x4'; its values must stay in memory"):
        sch.compute_inline(sch.get_block("B"))
    a = np.arange(128, dtype=np.float32).reshape(8, 16)
    out = np.zeros_like(a)
    pyir.build(sch.mod)["_scale_sum"](a, out)
    np.testing.assert_array_equal(out, (a + 1) * 2)


_SCALE_WHERE_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def scale_where(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where({cond})
            C[vi, vj] = A[vi, vj] * T.float32(2)
'''


def _scale_where_tensorized(cond):
    sch = Schedule(from_source(_SCALE_WHERE_SRC.format(cond=cond)))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 2])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, i1, j1)
    sch.tensorize(i1, "test.rows")
    return sch


def test_tensorize_calls_the_kernel_where_the_predicate_holds_on_the_whole_tile(rows_intrin):
    a = np.arange(128, dtype=np.float32).reshape(8, 16)
    out = np.full_like(a, -1)
    pyir.build(_scale_where_tensorized("j < 14 and i < 7").mod)["scale_where"](a, out)
    want = np.where((np.arange(16) < 14) & (np.arange(8)[:, None] < 7), a * 2, -1)
    np.testing.assert_array_equal(out, want)


def test_tensorize_refuses_a_predicate_not_affine_in_the_tile(rows_intrin):
    """T.where(j // 2 < 3) over 4-column tiles: (j_0 * 4 + j_1) // 2 changes by 0 from j_1 = 0
    to 1, taken for its step over the tile: the kernel ran on the tile j = 4..7 whole,
    writing columns 6 and 7, which the predicate excludes."""
    with pytest.raises(ScheduleError, match=r"the block's predicate \(j_0 \* 4 \+ j_1\) // 2 "
                       "< 3 does not say which tiles are whole"):
        _scale_where_tensorized("j // 2 < 3")



@T.prim_func
def _scale_two_rows(A: T.Buffer(("n", 4), "float32"), C: T.Buffer(("n", 4), "float32")):
    for i, j in T.grid(2, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)


def test_the_rows_a_tensorized_kernel_reaches_are_checked_at_entry(rows_intrin):
    """The loops read and wrote rows 0 and 1 (n >= 2 at entry); the kernel's call that
    replaced them was checked at its first element only (C[0, 0], A[0, 0]), and n = 1
    ran it a row past both arrays."""
    sch = Schedule(_scale_two_rows)
    sch.tensorize(sch.get_loops(sch.get_block("C"))[0], "test.rows")
    lib = pyir.build(sch.mod)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = np.zeros_like(a)
    lib["_scale_two_rows"](a, out)
    np.testing.assert_array_equal(out, 2 * a)
    with pytest.raises(pyir.ArgumentValueError, match=r"_scale_two_rows: kernel 'test.rows2x4' "
                       r"reaches C up to element 7: requires n \* 4 >= 8, but n = 1"):
        lib["_scale_two_rows"](a[:1].copy(), out[:1].copy())


@pytest.mark.parametrize("access", ["A[vi + 1, vj]", "A[vi, vj - 1]"])
def test_register_tensor_intrin_refuses_a_description_reaching_outside_its_buffer(access):
    """What the description reaches is what tensorize's calls of the kernel are checked
    for: it must lie in the description's buffers."""
    from pyir.schedule import register_tensor_intrin
    desc = from_source(ROWS_DESC.replace("A[vi, vj]", access))
    with pytest.raises(ScheduleError, match=r"register_tensor_intrin: test.rows_outside: the "
                       r"description's index .* of A may fall outside the buffer"):
        register_tensor_intrin("test.rows_outside", desc, "test.rows2x4")


def _tiled(func, panels=None, decompose=True):
    """The bench schedule's 6 x 16 register tile, B not packed: C accumulates in a local tile
    under the innermost tile loop and is written back after the k loop; i_1 unrolled, j_1
    vectorized. ``panels``: the columns split twice (``panels`` tiles a block, the blocks
    outermost: the tile's column base is ``j_0 * panels * 16 + j_1 * 16``). Returns the
    schedule and the tile loops, outermost first."""
    sch = Schedule(func)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 6])
    if panels:
        jo, j0, j1 = sch.split(j, [None, panels, 16])
        outer = (jo, i0, j0)
    else:
        j0, j1 = sch.split(j, [None, 16])
        outer = (i0, j0)
    sch.reorder(*outer, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, outer[-1])
    if decompose:
        init = sch.decompose_reduction(c, k)
        for blk in (init, cw):
            a, b = sch.get_loops(blk)[-2:]
            sch.unroll(a)
            sch.vectorize(b)
    sch.unroll(i1)
    sch.vectorize(j1)
    return sch, outer


@pytest.mark.parametrize("n", [128, None])
def test_register_tile_under_a_twice_split_loop_is_one_stack_tile(n):
    """Two varying loops in the tile's column base (a cache-blocked order) still give one
    6 x 16 tile on the stack, not a heap buffer of the whole C."""
    sch, outer = _tiled(M.matmul_func(n), panels=4)
    sch.parallel(outer[0])
    func = _lowered(sch.mod)
    tiles = [n.buffer for n in walk(func.body)
             if isinstance(n, S.Allocate) and n.buffer.name.startswith("C_local")]
    assert tiles and all(tuple(s.value for s in b.shape) == (96,) for b in tiles)
    assert all(kind == "stack" for name, kind in func.attr("storage") if name.startswith("C_local"))
    lib = pyir.build(sch.mod, opt_level="fast")
    for size in ((128,) if n else (128, 64, 61)):
        _check(lib, size)


def test_init_hoisted_before_a_symbolic_reduction_keeps_unroll_and_vectorize():
    """Without decompose_reduction the init of C_local (k may be empty for symbolic n) runs
    before the k loop under copies of i_1 / j_1: they stay unrolled and vectorized, so the
    partial tiles' accumulator is not masked vector by vector."""
    from pyir.ir import FloatImm, IntImm
    sch, _ = _tiled(M.matmul_func(None), decompose=False)
    func = _lowered(sch.mod)

    def zero_store(n):
        return isinstance(n, S.BufferStore) and n.buffer.name.startswith("C_local") \
            and isinstance(n.value, FloatImm)

    init_loops = [n for n in walk(func.body) if isinstance(n, S.For)
                  and all(zero_store(s) for s in walk(n.body) if isinstance(s, S.BufferStore))
                  and any(zero_store(s) for s in walk(n.body))]
    # Innermost (j_1): vectorized in every tile; i_1 unrolled where its extent is 6 (the
    # partial tiles' i_1 runs to a bound computed at run time, a serial loop).
    assert {lp.kind for lp in init_loops if isinstance(lp.body, S.BufferStore)} == {"vectorized"}
    assert {lp.kind for lp in init_loops if isinstance(lp.body, S.For)
            and isinstance(lp.extent, IntImm)} == {"unroll"}
    lib = pyir.build(sch.mod, opt_level="fast")
    for n in (64, 61):
        _check(lib, n)


@pytest.mark.parametrize("n, parallel", [(None, True), (None, False), (61, True)])
def test_register_tile_under_a_fused_loop(n, parallel):
    """Fusing the tile loops keeps one 6 x 16 stack tile, tests the two tails' guards once
    per fused iteration (whole tiles run unrolled, unguarded, with no division by the
    symbolic number of column tiles) and may run in parallel."""
    from pyir.ir import Binary
    sch, (i0, j0) = _tiled(M.matmul_func(n))
    fused = sch.fuse(i0, j0)
    if parallel:
        sch.parallel(fused)
    func = _lowered(sch.mod)
    tiles = [b.buffer for b in walk(func.body)
             if isinstance(b, S.Allocate) and b.buffer.name.startswith("C_local")]
    assert tiles and all(tuple(s.value for s in b.shape) == (96,) for b in tiles)
    loop = next(lp for lp in walk(func.body) if isinstance(lp, S.For)
                and lp.loop_var.name == "i_0_j_0_fused")
    assert loop.kind == ("parallel" if parallel else "serial")
    # i_0 = f // J and j_0 = f % J computed once per iteration, then the whole-tile test.
    body, lets = loop.body, []
    while isinstance(body, S.LetStmt):
        lets.append(body.value)
        body = body.body
    assert [e.op for e in lets] == ["floordiv", "floormod"]
    assert isinstance(body, S.IfThenElse)
    main = body.then_case
    assert not any(isinstance(s, S.IfThenElse) for s in walk(main))
    assert not any(isinstance(e, Binary) and e.op in ("floordiv", "floormod")
                   for e in walk(main))
    assert {lp.kind for lp in walk(main) if isinstance(lp, S.For)
            and lp.loop_var.name.startswith("i_1")} == {"unroll"}
    lib = pyir.build(sch.mod, opt_level="fast")
    for size in ((61,) if n else (64, 61, 5)):
        _check(lib, size)


def test_b_packed_per_column_panel_by_compute_at():
    """B cached in the packed layout, then computed at the panel loop (columns outermost):
    each panel packs its 16 columns, the tails included (the packing loop's iterator comes
    back from the layout's j // 16 and j % 16)."""
    sch = Schedule(M.matmul_func(None))
    c = sch.get_block("C")
    bp = sch.cache_read(c, "B", "global")
    sch.transform_layout(bp, ("write", 0), "k, j -> j // 16, k, j % 16")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 6])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(j0, i0, k, i1, j1)
    sch.compute_at(bp, j0)
    sch.vectorize(sch.get_loops(bp)[-1])
    sch.parallel(j0)
    lib = pyir.build(sch.mod, opt_level="fast")
    for n in (64, 61, 5):
        _check(lib, n)
