"""Each primitive on at least three kernels: printed IR against golden files, the print ->
parse round trip, trace replay, and built results equal to the unscheduled build."""

import pytest

from sched_helpers import check_results, check_roundtrip, fresh


def loops(s, block):
    return s.get_loops(s.get_block(block))


def split_matmul(s):
    i, j, k = loops(s, "C")
    s.split(i, factors=[None, 32])


def split_chain(s):
    i, j = loops(s, "C")
    s.split(j, factors=[None, 4])


def split_rowsum(s):
    i, k = loops(s, "S")
    s.split(k, factors=[4, None, 8])


def split_conv(s):
    i, r = loops(s, "Y")
    s.split(i, factors=[3, None])


def fuse_chain(s):
    s.fuse(*loops(s, "B"))


def fuse_matmul(s):
    i, j, k = loops(s, "C")
    s.fuse(i, j)


def fuse_static(s):
    s.fuse(*loops(s, "C"))


def reorder_matmul(s):
    i, j, k = loops(s, "C")
    s.reorder(k, i)


def reorder_chain(s):
    i, j = loops(s, "C")
    s.reorder(j, i)


def reorder_rowsum(s):
    i, k = loops(s, "S")
    s.reorder(k, i)


def tile_static(s):
    i, j, k = loops(s, "C")
    i0, i1 = s.split(i, factors=[None, 8])
    j0, j1 = s.split(j, factors=[None, 16])
    s.reorder(i0, j0, k, i1, j1)


def parallel_matmul(s):
    s.parallel(loops(s, "C")[0])


def parallel_chain(s):
    s.parallel(loops(s, "B")[0])
    s.parallel(loops(s, "C")[1])


def parallel_fused(s):
    s.parallel(s.fuse(*loops(s, "D")))


def compute_at_packed_layout(s):
    # The cache of A in a packed layout, computed per row of C: its column iterator comes
    # back from A_global's vk // 4 and vk % 4.
    cache = s.cache_read(s.get_block("C"), "A", "global")
    s.transform_layout(cache, ("write", 0), "i, j -> j // 4, i, j % 4")
    s.compute_at(cache, loops(s, "C")[0])


def cache_write_fused(s):
    # The bindings of a fused loop (f // m, f % m) are not affine but one-to-one: the block
    # writes all of C, and each iteration of f produces one point of it.
    c = s.get_block("C")
    i, j, k = loops(s, "C")
    f = s.fuse(i, j)
    s.reverse_compute_at(s.cache_write(c, 0, "local"), f)
    s.parallel(f)


def compute_at_fused(s):
    c = s.get_block("C")
    cache = s.cache_read(c, "A", "local")
    i, j, k = loops(s, "C")
    s.compute_at(cache, s.fuse(i, j))


def cache_write_split_by_one(s):
    # A split by 1 binds k_0 * 1 + k_1 (k_1 always 0): still one-to-one.
    c = s.get_block("C")
    i, j, k = loops(s, "C")
    i0, i1 = s.split(i, factors=[None, 1])
    s.reorder(i0, j, k, i1)
    s.reverse_compute_at(s.cache_write(c, 0, "local"), j)


def parallel_split_of_fused(s):
    # Iteration f_0 writes the elements at row-major offsets [f_0 * 5, f_0 * 5 + 5).
    f0, _ = s.split(s.fuse(*loops(s, "C")), factors=[None, 5])
    s.parallel(f0)


def parallel_fused_tiles(s):
    # Tiles with tails in both dimensions, their loops fused: one tile per fused iteration.
    i, j, k = loops(s, "C")
    i0, i1 = s.split(i, factors=[None, 4])
    j0, j1 = s.split(j, factors=[None, 8])
    s.reorder(i0, j0, k, i1, j1)
    s.parallel(s.fuse(i0, j0))


def vectorize_chain(s):
    s.vectorize(loops(s, "C")[1])


def vectorize_matmul(s):
    s.vectorize(loops(s, "C")[1])


def vectorize_rowsum(s):
    s.vectorize(loops(s, "S")[0])


def unroll_conv(s):
    s.unroll(loops(s, "Y")[1])


def unroll_rowsum(s):
    s.unroll(loops(s, "S")[1])


def unroll_matmul(s):
    s.unroll(loops(s, "C")[1])


def annotate_matmul(s):
    s.annotate(loops(s, "C")[2], "pragma_unroll", 4)


def annotate_chain(s):
    s.annotate(s.get_block("B"), "note", "elementwise")


def annotate_rowsum(s):
    s.annotate(loops(s, "S")[0], "hint", True)


def compute_at_chain(s):
    s.compute_at(s.get_block("B"), loops(s, "C")[0])


def compute_at_bias(s):
    s.compute_at(s.get_block("C"), loops(s, "D")[1])
    s.compute_at(s.get_block("B"), loops(s, "D")[1])


def compute_at_conv(s):
    i, r = loops(s, "Y")
    i0, i1 = s.split(i, factors=[None, 5])
    s.compute_at(s.get_block("P"), i0)


def compute_at_mm_relu(s):
    i, j = loops(s, "D")
    s.compute_at(s.get_block("Y"), j)


def rca_chain(s):
    s.reverse_compute_at(s.get_block("C"), loops(s, "B")[1])


def rca_bias(s):
    s.reverse_compute_at(s.get_block("C"), loops(s, "B")[0])
    s.reverse_compute_at(s.get_block("D"), loops(s, "B")[0])


def rca_mm_relu(s):
    i, j, r = loops(s, "Y")
    i0, i1 = s.split(i, factors=[None, 4])
    s.reverse_compute_at(s.get_block("D"), i0)


def inline_chain(s):
    s.compute_inline(s.get_block("B"))


def inline_bias(s):
    s.compute_inline(s.get_block("B"))
    s.compute_inline(s.get_block("C"))


def inline_conv(s):
    s.compute_inline(s.get_block("P"))


def rinline_chain(s):
    s.reverse_compute_inline(s.get_block("C"))


def rinline_bias(s):
    s.reverse_compute_inline(s.get_block("D"))
    s.reverse_compute_inline(s.get_block("C"))


def rinline_split(s):
    s.split(loops(s, "B")[1], factors=[None, 16])
    s.reverse_compute_inline(s.get_block("C"))


def cache_read_matmul(s):
    s.cache_read(s.get_block("C"), "A", "local")


def cache_read_chain(s):
    s.cache_read(s.get_block("C"), 0, "global")


def cache_read_conv(s):
    s.cache_read(s.get_block("Y"), "W", "local")


def cache_read_at(s):
    c = s.cache_read(s.get_block("C"), "B", "local")
    s.compute_at(c, loops(s, "C")[2])


def cache_write_matmul(s):
    s.cache_write(s.get_block("C"), 0, "local")


def cache_write_chain(s):
    s.cache_write(s.get_block("B"), "B", "local")


def cache_write_rowsum(s):
    s.cache_write(s.get_block("S"), "S", "local")


def decompose_matmul(s):
    c = s.get_block("C")
    s.decompose_reduction(c, s.get_loops(c)[2])


def decompose_outer(s):
    c = s.get_block("Y")
    s.decompose_reduction(c, s.get_loops(c)[0])


def decompose_rowsum(s):
    b = s.get_block("S")
    i, k = s.get_loops(b)
    k0, k1 = s.split(k, factors=[None, 16])
    s.decompose_reduction(b, k0)


def decompose_conv(s):
    b = s.get_block("Y")
    s.decompose_reduction(b, s.get_loops(b)[1])


def rfactor_rowsum(s):
    i, k = loops(s, "S")
    k0, k1 = s.split(k, factors=[None, 32])
    s.rfactor(k1, 0)


def rfactor_rowsum_outer(s):
    i, k = loops(s, "S")
    k0, k1 = s.split(k, factors=[None, 32])
    s.rfactor(k0, 1)


def rfactor_static(s):
    i, j, k = loops(s, "C")
    k0, k1 = s.split(k, factors=[None, 8])
    s.rfactor(k1, 2)


def rfactor_conv(s):
    s.rfactor(loops(s, "Y")[1], 0)


def layout_bias(s):
    s.transform_layout(s.get_block("B"), "B", "i, j -> j // 16, i, j % 16")


def layout_chain(s):
    s.transform_layout(s.get_block("B"), ("write", 0), lambda i, j: (j, i))


def layout_mm_relu(s):
    s.transform_layout(s.get_block("D"), ("read", 0), "i, j -> j // 8, i, j % 8")


def layout_conv(s):
    s.transform_layout(s.get_block("P"), "P", "i -> i // 4, i % 4")


def layout_cache(s):
    c = s.cache_read(s.get_block("C"), "B", "global")
    s.transform_layout(c, ("write", 0), "k, j -> j // 16, k, j % 16")


def blockize_static(s):
    i, j, k = loops(s, "C")
    i0, i1 = s.split(i, factors=[None, 8])
    s.blockize(i1)


def blockize_chain(s):
    i, j = loops(s, "B")
    s.blockize(j)


def blockize_rowsum(s):
    i, k = loops(s, "S")
    k0, k1 = s.split(k, factors=[None, 16])
    s.blockize(k1)


def sample_static(s):
    i, j, k = loops(s, "C")
    s.split(j, factors=s.sample_perfect_tile(j, n=3, max_innermost_factor=16))


def sample_rowsum(s):
    i, k = loops(s, "S")
    s.split(k, factors=s.sample_perfect_tile(k, n=2, max_innermost_factor=8))


def sample_bias(s):
    i, j = loops(s, "D")
    s.split(j, factors=s.sample_perfect_tile(j, n=2))


CASES = {
    "split_matmul": ("matmul", split_matmul), "split_chain": ("chain", split_chain),
    "split_rowsum": ("rowsum", split_rowsum), "split_conv": ("conv1d", split_conv),
    "fuse_chain": ("chain", fuse_chain), "fuse_matmul": ("matmul", fuse_matmul),
    "fuse_static": ("static_mm", fuse_static),
    "reorder_matmul": ("matmul", reorder_matmul), "reorder_chain": ("chain", reorder_chain),
    "reorder_rowsum": ("rowsum", reorder_rowsum), "tile_static": ("static_mm", tile_static),
    "parallel_matmul": ("matmul", parallel_matmul), "parallel_chain": ("chain", parallel_chain),
    "parallel_fused": ("bias_relu", parallel_fused),
    "parallel_split_of_fused": ("chain", parallel_split_of_fused),
    "compute_at_packed_layout": ("matmul", compute_at_packed_layout),
    "cache_write_fused": ("matmul", cache_write_fused),
    "cache_write_split_by_one": ("matmul", cache_write_split_by_one),
    "compute_at_fused": ("matmul", compute_at_fused),
    "parallel_fused_tiles": ("matmul", parallel_fused_tiles),
    "vectorize_chain": ("chain", vectorize_chain),
    "vectorize_matmul": ("matmul", vectorize_matmul),
    "vectorize_rowsum": ("rowsum", vectorize_rowsum),
    "unroll_conv": ("conv1d", unroll_conv), "unroll_rowsum": ("rowsum", unroll_rowsum),
    "unroll_matmul": ("matmul", unroll_matmul),
    "annotate_matmul": ("matmul", annotate_matmul), "annotate_chain": ("chain", annotate_chain),
    "annotate_rowsum": ("rowsum", annotate_rowsum),
    "compute_at_chain": ("chain", compute_at_chain),
    "compute_at_bias": ("bias_relu", compute_at_bias),
    "compute_at_conv": ("conv1d", compute_at_conv),
    "compute_at_mm_relu": ("mm_relu", compute_at_mm_relu),
    "rca_chain": ("chain", rca_chain), "rca_bias": ("bias_relu", rca_bias),
    "rca_mm_relu": ("mm_relu", rca_mm_relu),
    "inline_chain": ("chain", inline_chain), "inline_bias": ("bias_relu", inline_bias),
    "inline_conv": ("conv1d", inline_conv),
    "rinline_chain": ("chain", rinline_chain), "rinline_bias": ("bias_relu", rinline_bias),
    "rinline_split": ("bias_relu", rinline_split),
    "cache_read_matmul": ("matmul", cache_read_matmul),
    "cache_read_chain": ("chain", cache_read_chain),
    "cache_read_conv": ("conv1d", cache_read_conv), "cache_read_at": ("matmul", cache_read_at),
    "cache_write_matmul": ("matmul", cache_write_matmul),
    "cache_write_chain": ("chain", cache_write_chain),
    "cache_write_rowsum": ("rowsum", cache_write_rowsum),
    "decompose_matmul": ("matmul", decompose_matmul),
    "decompose_outer": ("mm_relu", decompose_outer),
    "decompose_rowsum": ("rowsum", decompose_rowsum), "decompose_conv": ("conv1d", decompose_conv),
    "rfactor_rowsum": ("rowsum", rfactor_rowsum),
    "rfactor_rowsum_outer": ("rowsum", rfactor_rowsum_outer),
    "rfactor_static": ("static_mm", rfactor_static), "rfactor_conv": ("conv1d", rfactor_conv),
    "layout_bias": ("bias_relu", layout_bias), "layout_chain": ("chain", layout_chain),
    "layout_mm_relu": ("mm_relu", layout_mm_relu), "layout_conv": ("conv1d", layout_conv),
    "layout_cache": ("matmul", layout_cache),
    "blockize_static": ("static_mm", blockize_static), "blockize_chain": ("chain", blockize_chain),
    "blockize_rowsum": ("rowsum", blockize_rowsum),
    "sample_static": ("static_mm", sample_static), "sample_rowsum": ("rowsum", sample_rowsum),
    "sample_bias": ("bias_relu", sample_bias),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_primitive(case, golden):
    kernel, steps = CASES[case]
    sch = fresh(kernel)
    steps(sch)
    assert sch.mod[kernel].attr("scheduled") is True
    golden(f"schedule/{case}.py", sch.mod.script())
    check_roundtrip(sch, kernel)
    check_results(sch, kernel)


@pytest.mark.parametrize("factors, at", [([None, 8], 1), ([8, None], 0)])
def test_rfactor_of_a_reduction_split_with_a_tail(factors, at):
    """k split by 8 for a symbolic m: the partial results the tail never updates are set to
    0 by an init block of their own, so the row sums are right for every m (0 included).
    Split [8, None], k_0 * ((m + 7) // 8) + k_1 was refused as not affine (a symbolic
    coefficient)."""
    import numpy as np

    import pyir
    from pyir.ir import assert_structural_equal
    from pyir.schedule import Schedule
    from pyir.script import from_source

    from sched_kernels import rowsum_symbolic
    sch = Schedule(rowsum_symbolic)
    i, k = sch.get_loops(sch.get_block("S"))
    sch.rfactor(sch.split(k, factors)[at], 0)
    assert all(sch.get_block(b) for b in ("S_rf_init", "S_rf", "S"))
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    assert_structural_equal(sch.trace.apply_to(Schedule(rowsum_symbolic)).mod, sch.mod)
    lib = pyir.build(sch.mod)
    rng = np.random.default_rng(0)
    for m in (0, 1, 5, 8, 13, 100):
        a = rng.random((3, m), dtype=np.float32)
        s = np.full(3, 7, "float32")
        lib["rowsum_symbolic"](a, s)
        np.testing.assert_allclose(s, a.sum(1), rtol=1e-5)


SUM2 = '''
from pyir.script import tensor as T


@T.prim_func
def sum2(A: T.Buffer(("n", "k", 3), "float32"), S: T.Buffer(("n",), "float32")):
    for i, k, l in T.grid(n, k, 3):
        with T.block("S"):
            vi, vk, vl = T.axis.remap("SRR", [i, k, l])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk, vl]
'''


def test_rfactor_of_fused_reduction_loops(golden):
    """A fused loop binds vk = f // 3 and vl = f % 3, not affine: rfactor refused it, though
    the loop binds the two iterators one-to-one; the partial results are indexed by f."""
    import numpy as np

    import pyir
    from pyir.ir import assert_structural_equal
    from pyir.schedule import Schedule
    from pyir.script import from_source

    sch = Schedule(from_source(SUM2))
    _, k, l = sch.get_loops(sch.get_block("S"))
    sch.rfactor(sch.fuse(k, l), 0)
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    golden("schedule/rfactor_fused.py", sch.mod.script())
    lib = pyir.build(sch.mod)
    for n, k in ((3, 5), (1, 0), (2, 1)):
        a = np.random.default_rng(k).random((n, k, 3), dtype=np.float32)
        s = np.full(n, 7, "float32")
        lib["sum2"](a, s)
        np.testing.assert_allclose(s, a.sum(axis=(1, 2)), rtol=1e-5)


ADD1 = '''
from pyir.script import tensor as T


@T.prim_func
def add1(A: T.Buffer({shape}, "float32"), C: T.Buffer({shape}, "float32")):
    for i, j in T.grid({extents}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + T.float32(1)
'''


@pytest.mark.parametrize("shape, sizes", [
    ((13, 7), [(13, 7)]),
    (("n", "m"), [(13, 7), (1, 1), (2, 3), (8, 4), (0, 5), (5, 9)])])
def test_cache_write_of_fused_loops_split_with_a_tail(shape, sizes):
    """The loops fused and split by 4 bind C[(f_0 * 4 + f_1) // m, (f_0 * 4 + f_1) % m]
    under T.where(f_0 * 4 + f_1 < n * m) (92 iterations for 91 elements at 13 x 7): the
    block writes every element of C, each once, though no index is a split of one loop.
    cache_write refused it as writing only part of C."""
    import numpy as np

    import pyir
    from pyir.ir import assert_structural_equal
    from pyir.schedule import Schedule
    from pyir.script import from_source

    extents = ", ".join(d if isinstance(d, str) else str(d) for d in shape)
    func = from_source(ADD1.format(shape=repr(shape), extents=extents))
    sch = Schedule(func)
    c = sch.get_block("C")
    sch.split(sch.fuse(*sch.get_loops(c)), factors=[None, 4])
    assert sch.cache_write(c, 0, "local").name == "C_local"
    assert "T.where(i_j_fused_0 * 4 + i_j_fused_1 < " in sch.mod.script()
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    assert_structural_equal(sch.trace.apply_to(Schedule(func)).mod, sch.mod)
    lib = pyir.build(sch.mod)
    rng = np.random.default_rng(0)
    for n, m in sizes:
        a = rng.random((n, m), dtype=np.float32)
        out = np.full((n, m), 7, "float32")
        lib["add1"](a, out)
        np.testing.assert_allclose(out, a + 1, rtol=1e-6)


def test_rfactor_inside_a_blockized_block_declares_the_partial_results_there():
    """The outer block of blockize holds the new blocks, so it reads and writes C_rf too
    (its printed T.reads / T.writes must cover its body to parse back)."""
    sch = fresh("matmul")
    i, _, r = sch.get_loops(sch.get_block("C"))
    sch.blockize(i)
    sch.rfactor(r, 0)
    text = sch.mod.script()
    assert "T.writes(C[0:n, 0:m], C_rf[0:k, 0:n, 0:m])" in text
    check_roundtrip(sch, "matmul")
    check_results(sch, "matmul")


TRIANGLE = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), O: T.Buffer((8, 4), "float32")):
    for i in range(8):
        for j in range((i + 1) // 2):
            with T.block("O"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(4, j)
                O[vi, vj] = A[vi, vj] + T.float32(1)
'''


@pytest.mark.parametrize("step", ["split", "fuse"])
def test_loops_whose_extent_depends_on_a_split_or_fused_loop_print_back(step):
    """j's extent (i + 1) // 2 with i split by 4 was (i_0 * 4 + i_1 + 1) // 2, which the
    parser reads as i_0 * 2 + (i_1 + 1) // 2 (it simplifies loop extents): the module did
    not parse back to itself. The extents the split or fuse changes are now in that form."""
    import numpy as np

    import pyir
    from pyir.ir import assert_structural_equal
    from pyir.schedule import Schedule
    from pyir.script import from_source

    sch = Schedule(from_source(TRIANGLE))
    i = sch.get_loops(sch.get_block("O"))[0]
    if step == "split":
        sch.split(i, factors=[None, 4])
    else:
        sch.fuse(*sch.split(i, factors=[None, 4]))
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    a, o = np.arange(32, dtype="float32").reshape(8, 4), np.zeros((8, 4), "float32")
    pyir.build(sch.mod)["f"](a, o)
    want = np.where(np.arange(4) < (np.arange(8)[:, None] + 1) // 2, a + 1, 0)
    np.testing.assert_array_equal(o, want)


SUM7 = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((4, 7), "float32"), S: T.Buffer((4,), "float32")):
    for i, r in T.grid(4, 7):
        with T.block("S"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vr]
'''


def test_split_cuts_factors_beyond_a_constant_extent():
    """r (7) split by [16, 100], its outer loop by [1000, 1000] and the inner loops fused
    looped 7 * 10**10 times per row, all but 7 of them skipped by the tail guard: the call
    did not finish. Each factor of a constant extent is now cut to what its loop can use."""
    import numpy as np

    import pyir
    from pyir.ir import For, assert_structural_equal
    from pyir.ir.node import walk
    from pyir.schedule import Schedule
    from pyir.script import from_source

    def extents():
        return [n.extent.value for n in walk(sch.mod["f"].body) if isinstance(n, For)]

    sch = Schedule(from_source(SUM7))
    r = sch.get_loops(sch.get_block("S"))[1]
    r0, r1 = sch.split(r, factors=[16, 100])
    assert extents() == [4, 1, 7]
    _, r01 = sch.split(r0, factors=[1000, 1000])
    sch.fuse(r01, r1)
    assert extents() == [4, 1, 7]
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    a, s = np.random.default_rng(0).random((4, 7), "float32"), np.zeros(4, "float32")
    pyir.build(sch.mod)["f"](a, s)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)


EMPTY_ROWS = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((2, 5), "float32"), B: T.Buffer((2, 5), "float32")):
    for i, j in T.grid(0, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
'''


def test_split_of_an_empty_loop_infers_a_factor_of_one():
    """[4, None] on an extent of 0 inferred an inner loop of 0: every iteration of the outer
    loop then bound the same point, and parallel refused it."""
    import numpy as np

    import pyir
    from pyir.ir import For
    from pyir.ir.node import walk
    from pyir.schedule import Schedule
    from pyir.script import from_source

    sch = Schedule(from_source(EMPTY_ROWS))
    i0, _ = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[4, None])
    sch.parallel(i0)
    assert [n.extent.value for n in walk(sch.mod["f"].body) if isinstance(n, For)] == [4, 1, 5]
    b = np.full((2, 5), 7, "float32")
    pyir.build(sch.mod)["f"](np.ones((2, 5), "float32"), b)
    assert (b == 7).all()


FLAT = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n * m",), "float32"), S: T.Buffer(("n", "m"), "float32"),
      B: T.Buffer(("n * m",), "float32")):
    for i in range(n * m):
        with T.block("B"):
            vi = T.axis.spatial(n * m, i)
            B[vi] = A[vi] + S[vi // m, vi % m]
'''


@pytest.mark.parametrize("prim", ["cache_read", "cache_write"])
def test_a_cache_stage_over_a_shape_expression_prints_back(prim):
    """The copy loop of a cache stage for A or B (n * m) took the iterator's extent n * m as it
    came, but the parser simplifies loop extents (to m * n): the module did not parse back
    to itself. The loop extents are now in the parser's form."""
    import numpy as np

    import pyir
    from pyir.ir import assert_structural_equal
    from pyir.schedule import Schedule
    from pyir.script import from_source

    sch = Schedule(from_source(FLAT))
    getattr(sch, prim)(sch.get_block("B"), 0, "global")
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    a, s, b = np.arange(6, dtype="float32"), np.ones((2, 3), "float32"), np.zeros(6, "float32")
    pyir.build(sch.mod)["f"](a, s, b)
    np.testing.assert_array_equal(b, a + 1)


ROW_STATISTIC = '''
from pyir.script import tensor as T


@T.prim_func
def f(X: T.Buffer(("n", 8), "float32"), Y: T.Buffer(("n", 8), "float32")):
    M = T.alloc_buffer((n, 2), "float32")
    for i, j in T.grid(n, 8):
        with T.block("M"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi, 0] = T.float32("-inf")
            M[vi, 0] = T.max(M[vi, 0], X[vi, vj])
    for i, j in T.grid(n, 8):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi, vj] - M[vi, 0]
'''


def test_softmax_row_statistics_kept_as_columns_compute_at_the_row_loop(golden):
    """Legalized softmax keeps the row maximum and sum as columns, M[v0, 0] of an (n, 1)
    buffer; compute_at refused them ("must be indexed by distinct block iterators")."""
    import numpy as np

    import pyir
    from pyir.ir import assert_structural_equal, verify
    from pyir.schedule import Schedule
    from pyir.script import from_source, graph as R, ir as I
    from pyir.transform.legalize import legalize

    @I.ir_module
    class Softmax:
        @R.function
        def main(x: R.Tensor(("n", 64), "float32")):
            y = R.nn.softmax(x, axis=-1)
            return y

    sch = Schedule(legalize(Softmax))
    for name in ("S", "M"):
        row = sch.get_loops(sch.get_block("Y", func_name="nn_softmax"))[0]
        sch.compute_at(sch.get_block(name, func_name="nn_softmax"), row)
    verify(sch.mod)
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    golden("schedule/compute_at_softmax_columns.py", sch.mod["nn_softmax"].script())
    lib = pyir.build(sch.mod)
    for n in (1, 7):
        x = np.random.default_rng(n).standard_normal((n, 64)).astype("float32")
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(lib["main"](x), e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_reverse_compute_at_of_a_reader_of_a_constant_column(golden):
    """The consumer reads M[vi, 0]: it moves under the row loop of the block writing that
    column (reverse_compute_at refused constant indices)."""
    import numpy as np

    import pyir
    from pyir.ir import assert_structural_equal
    from pyir.schedule import Schedule
    from pyir.script import from_source

    sch = Schedule(from_source(ROW_STATISTIC))
    sch.reverse_compute_at(sch.get_block("Y"), sch.get_loops(sch.get_block("M"))[0])
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    golden("schedule/rca_constant_column.py", sch.mod.script())
    x = np.random.default_rng(0).standard_normal((5, 8)).astype("float32")
    y = np.zeros_like(x)
    pyir.build(sch.mod)["f"](x, y)
    np.testing.assert_allclose(y, x - x.max(axis=1, keepdims=True))
