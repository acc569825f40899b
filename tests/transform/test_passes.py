"""Each lowering pass: the structure of its output, and `verify` after every pass."""

import importlib
import re

import numpy as np
import pytest

import kernels as K
import sched_kernels
import pyir
from pyir import ir, transform
from pyir.codegen.target import Target
from pyir.ir import expr as E
from pyir.ir import stmt as S
from pyir.ir.node import rewrite, walk
from pyir.schedule import Schedule, gemm
from pyir.script import from_source
from pyir.script import tensor as T
from pyir.transform import storage
from pyir.transform.default_schedule import matmul_block

ALL = [K.elementwise(shape=("n", "m")), K.matmul(), K.row_sum(), K.window_sum(),
       K.scaled_copy_via_temp(), K.clamp_if(), K.lowered_loop(), K.allocate_plain(8)]


def nodes(func, cls):
    return [n for n in walk(func.body) if isinstance(n, cls)]


def loops(func):
    return nodes(func, S.For)


@pytest.mark.parametrize("func", ALL, ids=lambda f: f.name)
def test_verify_after_every_pass(func):
    mod = ir.verify(K.module(func))
    for p in transform.PIPELINE:
        mod = ir.verify(p(mod))
    out = mod[func.name]
    assert not nodes(out, (S.Block, S.BlockRealize))
    assert all(len(b.shape) == 1 for b in out.buffer_params)


def test_pipeline_is_one_ordered_list():
    names = [p.__name__ for p in transform.PIPELINE]
    assert names == ["default_schedule", "lower_blocks", "entry_conditions", "compact_buffers",
                     "plan_storage", "split_tail_loops", "flatten_buffers", "simplify"]


def test_lower_blocks_places_reduction_init_under_first_reduce_value():
    out = transform.lower_blocks(K.module(K.matmul(8, 8, 8)))["matmul"]
    i, j, k = loops(out)
    body = k.body
    assert isinstance(body, S.SeqStmt)
    init, update = body.stmts
    assert isinstance(init, S.IfThenElse)
    assert init.condition == E.eq(k.loop_var, E.IntImm(0))
    assert isinstance(update, S.BufferStore)


def test_lower_blocks_runs_the_init_of_a_reduction_that_may_be_empty_first():
    """With a symbolic reduction extent the k loop may not run at all: the init goes
    before it, under the spatial loops (an `if k == 0` inside would never run)."""
    out = transform.lower_blocks(K.module(K.matmul()))["matmul"]
    i, j = loops(out)[:2]
    init, k = j.body.stmts
    assert isinstance(init, S.BufferStore) and isinstance(k, S.For)
    assert isinstance(k.body, S.BufferStore)


_SQUARE_SUM = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n", "n"), "float32"), S: T.Buffer(("n",), "float32")):
    for i, k in T.grid(n, n):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
'''


def test_the_init_run_first_keeps_the_tail_guard_of_its_rows():
    """i split by 4 and k by [2, None] over the same n: the init, run before the k loops,
    lost the guard ``i_0 * 4 + i_1 < n`` because n is in k's binding (k_0 * ((n + 1) // 2)
    + k_1) and the guard was taken for one of the reduction loops. S[0:4] was written for
    n = 1, and the call refused by the entry condition ``n >= (n + 3) // 4 * 4``. Only the
    loops driving k now count."""
    sch = Schedule(from_source(_SQUARE_SUM))
    i, k = sch.get_loops(sch.get_block("S"))
    sch.split(i, factors=[None, 4])
    sch.split(k, factors=[2, None])
    func = transform.lower(sch.mod, default_schedule=False)["f"]
    assert func.attr("entry_conditions") == ()
    lib = pyir.build(sch.mod, default_schedule=False)
    for n in (0, 1, 2, 3, 4, 5, 9):
        a = np.random.default_rng(n).random((n, n), dtype=np.float32)
        s = np.full(n, -1, np.float32)
        lib["f"](a, s)
        np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)


def test_a_reduction_over_an_empty_axis_gives_the_init_value():
    @T.prim_func
    def rowsum(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n",), "float32")):
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vj]

    for default_schedule in (True, False):
        lib = pyir.build(rowsum, default_schedule=default_schedule)
        out = np.full(3, 99, "float32")
        lib["rowsum"](np.zeros((3, 0), "float32"), out)
        np.testing.assert_array_equal(out, [0, 0, 0])
        a = np.random.default_rng(0).random((5, 37), dtype=np.float32)
        lib["rowsum"](a, out := np.zeros(5, "float32"))
        np.testing.assert_allclose(out, a.sum(1), rtol=1e-5)


@T.prim_func
def _reversed_sum(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 5):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(5, 4 - k)
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * T.float32(vk + 1)


@T.prim_func
def _reversed_under_where(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(5, 7 - k)
            T.where(7 - k < 5)
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * T.float32(vk + 1)


@T.prim_func
def _from_a_later_start(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        for k in range(3, 8):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(8, k)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk - 3] * T.float32(vk - 2)


@T.prim_func
def _init_in_a_block(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 5):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(5, 4 - k)
            with T.init():
                for j in range(1):
                    with T.block("C_init"):
                        vj = T.axis.spatial(1, j)
                        C[vi + vj] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * T.float32(vk + 1)


def _reordered_fused(sch):
    i, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)
    sch.fuse(k, i)


def _split_reordered(sch):
    i, k = sch.get_loops(sch.get_block("C"))
    k0, k1 = sch.split(k, [None, 2])
    sch.reorder(k1, i, k0)


@pytest.mark.parametrize("func, step", [
    (_reversed_sum, None),
    (_reversed_sum, lambda sch: sch.reorder(*sch.get_loops(sch.get_block("C"))[::-1])),
    (_reversed_sum, lambda sch: sch.split(sch.get_loops(sch.get_block("C"))[1], [None, 3])),
    (_reversed_sum, _split_reordered),
    (_reversed_sum, lambda sch: sch.fuse(*sch.get_loops(sch.get_block("C")))),
    (_reversed_sum, _reordered_fused),
    (_reversed_sum, lambda sch: sch.decompose_reduction(sch.get_block("C"),
                                                         sch.get_loops(sch.get_block("C"))[1])),
    (_reversed_under_where, None),
    (_from_a_later_start, None),
    (_init_in_a_block, None),
], ids=["reversed", "reordered", "split", "split_reordered", "fused", "reordered_fused",
        "decomposed",
        "reversed_under_where", "from_a_later_start", "init_in_a_block"])
def test_a_reduction_init_runs_at_the_first_iteration_of_its_loops(func, step):
    """The init runs where the loops first reach a point of the reduction, not where its
    iterators are 0 (``vk = 4 - k`` is 0 at the last k: the updates before were lost)."""
    sch = Schedule(func)
    if step is not None:
        step(sch)
    a = np.random.default_rng(0).random((4, 8), dtype=np.float32)
    expected = (a[:, :5] * np.arange(1, 6, dtype=np.float32)).sum(1)
    for default_schedule in (True, False):
        out = np.full(4, 99, "float32")
        pyir.build(sch.mod, default_schedule=default_schedule)[func.name](a, out)
        np.testing.assert_allclose(out, expected, rtol=1e-5)


@T.prim_func
def _window_sums(A: T.Buffer((11,), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(11, i + k)
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vk]


@pytest.mark.parametrize("step", [
    None,
    lambda sch: sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 2]),
], ids=["plain", "spatial_split"])
def test_a_reduce_binding_that_uses_a_spatial_loop_starts_each_point_at_its_first_value(step):
    """``vk = i + k``: each row's first update has ``vk == i``; the init ran where ``vk == 0``,
    in row 0 only, and the other rows added to what the output held."""
    sch = Schedule(_window_sums)
    if step is not None:
        step(sch)
    a = np.random.default_rng(1).random(11, dtype=np.float32)
    for default_schedule in (True, False):
        out = np.full(4, 99, "float32")
        pyir.build(sch.mod, default_schedule=default_schedule)["_window_sums"](a, out)
        np.testing.assert_allclose(out, [a[i:i + 8].sum() for i in range(4)], rtol=1e-5)


def test_lower_blocks_turns_predicate_into_if():
    f = K.elementwise(shape=(10,))
    realize = nodes(f, S.BlockRealize)[0]
    guarded = S.BlockRealize(realize.iter_values, E.lt(realize.iter_values[0], 7),
                             realize.block)
    f = S.PrimFunc(f.name, f.params, S.For(f.body.loop_var, 0, 10, "serial", guarded))
    out = transform.lower_blocks(K.module(f))["ew"]
    assert isinstance(out.body.body, S.IfThenElse)


def test_root_block_allocations_become_allocate():
    out = transform.lower_blocks(K.module(K.scaled_copy_via_temp()))["via_temp"]
    assert isinstance(out.body, S.Allocate) and out.body.buffer.name == "T"


def test_default_schedule_parallel_outer_vectorized_inner():
    out = transform.default_schedule(K.module(K.elementwise(shape=("n", "m"))))["ew"]
    assert [lp.kind for lp in loops(out)] == ["parallel", "vectorized"]


def test_default_schedule_one_loop_is_parallel_and_vectorized_chunks():
    out = transform.default_schedule(K.module(K.elementwise(shape=("n",))))["ew"]
    (lp,) = loops(out)
    assert lp.kind == "parallel" and dict(lp.annotations)["vectorize"] == 1


_BLOCK_AND_STATEMENT = """
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((100000,), "float32"), B: T.Buffer((100000,), "float32"),
      s: T.Buffer((1,), "float32")):
    for i in range(100000):
        with T.block("B"):
            vi = T.axis.spatial(100000, i)
            B[vi] = A[vi] * T.float32(2)
        {statement}
"""


@pytest.mark.parametrize("statement", ["s[0] = s[0] + T.float32(1)",
                                       'T.call_extern("test.none", s, dtype="void")'])
def test_default_schedule_keeps_loops_of_statements_outside_blocks(statement):
    """The rules read what blocks declare: the loop, also holding a statement outside the
    block, was made parallel (the count came out 65,089 of 100,000)."""
    f = from_source(_BLOCK_AND_STATEMENT.format(statement=statement))
    assert transform.default_schedule(ir.IRModule.from_dict({"f": f}))["f"] is f
    if statement.startswith("s[0]"):
        a, b = np.ones(100000, "float32"), np.zeros(100000, "float32")
        total = np.zeros(1, "float32")
        pyir.build(f)["f"](a, b, total)
        assert total[0] == 100000
        np.testing.assert_array_equal(b, 2)


def test_default_schedule_never_parallelizes_reductions():
    # i, k, j: the reduction loop moves out of the innermost place, where it read B down a
    # column, so that j vectorizes along rows of B and C; it stays serial. (An int32 matmul:
    # a float one gets the register tile.)
    out = transform.default_schedule(K.module(K.matmul(dtype="int32")))["matmul"]
    assert [(lp.loop_var.name, lp.kind) for lp in loops(out)] == [
        ("i", "parallel"), ("k", "serial"), ("j", "vectorized")]
    lib = pyir.build(K.module(K.matmul(dtype="int32")))
    rng = np.random.default_rng(0)
    for n, k, m in ((5, 0, 7), (1, 1, 1), (13, 9, 37)):   # k = 0: C is all zeros
        a = rng.integers(-9, 9, (n, k), dtype=np.int32)
        b = rng.integers(-9, 9, (k, m), dtype=np.int32)
        c = np.full((n, m), 5, np.int32)
        lib["matmul"](a, b, c)
        np.testing.assert_array_equal(c, a @ b)


_MATMUL = """
from pyir.script import tensor as T

@T.prim_func
def mm(A: T.Buffer(({n}, {k}), "{dtype}"), B: T.Buffer(({k}, {m}), "{dtype}"),
       C: T.Buffer(({n}, {m}), "{dtype}")):
    for i, j, r in T.grid({ln}, {lm}, {lk}):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.{dtype}(0)
            C[vi, vj] = C[vi, vj] + {update}
"""


def _matmul(dtype="float32", n='"n"', k='"k"', m='"m"', update="A[vi, vr] * B[vr, vj]"):
    return from_source(_MATMUL.format(dtype=dtype, n=n, k=k, m=m, update=update,
                                      ln=n.strip('"'), lk=k.strip('"'), lm=m.strip('"')))


#: Targets whose register tiles the default-schedule tests pin (whatever the host has):
#: 32 vector registers of 512 bits, and 16 of 256.
AVX512 = "llvm -mattr=+avx512f"
AVX2 = "llvm -mcpu=haswell"


def _scheduled(func, target=AVX512):
    """``func`` under the default schedule for ``target``."""
    return transform.default_schedule(ir.IRModule.from_dict({func.name: func}),
                                      target=target)[func.name]


def _blocks(func):
    return {n.name for n in walk(func.body) if isinstance(n, S.Block)}


@pytest.mark.parametrize("dtype, shape, pack_b, pack_a", [
    ("float32", None, None, False), ("float64", None, None, False),
    ("float32", (37, 19, 45), True, False), ("float32", (29, 3, 40), True, False),
    ("float32", (28, 3, 40), False, False), ("float32", (15, 3, 40), False, False),
    ("float32", (14, 3, 40), False, False), ("float32", (8, 3, 2), False, False),
    ("float64", (8, 0, 5), False, False), ("float32", (14, 1024, 40), False, True),
    ("float32", (28, 1024, 33), False, True), ("float64", (9, 512, 33), False, True),
    ("float32", (8, 1024, 40), False, False)])
def test_default_schedule_gives_a_float_matmul_the_register_tile(dtype, shape, pack_b, pack_a):
    """An unscheduled float matmul gets the register-tile schedule of pyir.schedule.gemm
    (2.5-7x the speed of the generic rules). With the rows known, B is read in place by up
    to two tiles as tall as the registers allow (14 rows each), where packing it cost more,
    and packed for more rows; A is copied k-major first where more than 8 rows of a tile
    would share one L1 cache set (rows a multiple of 4 KiB apart). With rows known only
    when called, both nests under a test of the rows (3 tiles of 7 rows or more pack B),
    the one for few rows with blocks of their own names. Its results stay those of numpy
    at every size, tails and empty extents included. (The structure is that of an
    AVX-512 target; the build is for the host.)"""
    f = _matmul(dtype) if shape is None else _matmul(dtype, *map(str, shape))
    out = _scheduled(f)

    def tiled(pack):
        tile = gemm.register_tile(dtype, AVX512) if pack or shape is None \
            else gemm.few_rows_tile(shape[0], dtype, AVX512)
        return gemm.schedule_matmul(Schedule(f), "C", tile, pack_b=pack,
                                    pack_a=pack_a).mod["mm"]

    if shape is None:
        assert isinstance(out.body, S.IfThenElse) and out.body.condition.script() == "n >= 15"
        ir.assert_structural_equal(out.body.then_case, tiled(True).body)
        assert out.attrs == tiled(True).attrs
        few = {n.name for n in walk(out.body.else_case) if isinstance(n, S.Block)}
        assert few == {b + "_few_rows" for b in ("C", "C_init", "C_local")}
    else:
        ir.assert_structural_equal(out, tiled(pack_b))
    lib = pyir.build(f)
    rng = np.random.default_rng(0)
    sizes = [shape] if shape else [(0, 4, 3), (5, 0, 7), (1, 1, 1), (7, 9, 33), (8, 33, 31),
                                   (14, 5, 40), (15, 5, 40), (37, 19, 45), (100, 64, 70)]
    for n, k, m in sizes:
        a, b = rng.random((n, k)).astype(dtype), rng.random((k, m)).astype(dtype)
        c = np.full((n, m), 5, dtype)
        lib["mm"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_a_matmul_is_found_by_what_its_buffers_do_not_by_their_names():
    """Parameters named x, w, y (and listed output first) are the matmul's A, B and C: the
    function gets the register tile, B (here w) packed."""
    src = _MATMUL.format(dtype="float32", n='"n"', k='"k"', m='"m"', ln="n", lk="k", lm="m",
                         update="x[vi, vr] * w[vr, vj]")
    src = src.replace("C[", "y[").replace(
        'A: T.Buffer(("n", "k"), "float32"), B: T.Buffer(("k", "m"), "float32"),\n'
        '       C: T.Buffer(("n", "m"), "float32")',
        'y: T.Buffer(("n", "m"), "float32"), x: T.Buffer(("n", "k"), "float32"),\n'
        '       w: T.Buffer(("k", "m"), "float32")')
    f = from_source(src)
    assert [p.name for p in f.params] == ["y", "x", "w"] and matmul_block(f) == "C"
    lib = pyir.build(f)
    assert "w_global" in lib.source("llvm")
    rng = np.random.default_rng(3)
    for n, k, m in ((20, 9, 40), (3, 5, 7)):
        x, w = rng.random((n, k), np.float32), rng.random((k, m), np.float32)
        y = np.full((n, m), 5, np.float32)
        lib["mm"](y, x, w)
        np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)


_BATCH_MATMUL = """
from pyir.script import tensor as T

@T.prim_func
def bmm(A: T.Buffer(("b", "n", "k"), "float32"), B: T.Buffer(("k", "m"), "float32"),
        C: T.Buffer(("b", "n", "m"), "float32")):
    for h, i, j, r in T.grid(b, n, m, k):
        with T.block("C"):
            vh, vi, vj, vr = T.axis.remap("SSSR", [h, i, j, r])
            with T.init():
                C[vh, vi, vj] = T.float32(0)
            C[vh, vi, vj] = C[vh, vi, vj] + A[vh, vi, vr] * B[vr, vj]
"""


def test_default_schedule_tiles_a_batch_of_rows_times_one_matrix():
    """C[b] = A[b] @ B (activations times weights) gets the register tile in each batch, the
    batch and the row tiles one parallel loop; tails in every batch and empty extents
    run right."""
    f = from_source(_BATCH_MATMUL)
    assert matmul_block(f) == "C"
    out = transform.default_schedule(ir.IRModule.from_dict({"bmm": f}))["bmm"]
    assert out.attr("scheduled") and [lp.kind for lp in loops(out)][0] == "parallel"
    lib = pyir.build(f)
    assert "B_global" in lib.source("llvm")
    rng = np.random.default_rng(2)
    for b, n, k, m in ((3, 9, 20, 35), (2, 1, 5, 3), (0, 4, 4, 4), (2, 0, 3, 3), (1, 8, 0, 40),
                       (4, 16, 33, 64), (1, 7, 9, 40), (2, 4, 9, 40)):
        a, w = rng.random((b, n, k), np.float32), rng.random((k, m), np.float32)
        c = np.full((b, n, m), 5, np.float32)
        lib["bmm"](a, w, c)
        np.testing.assert_allclose(c, a @ w, rtol=1e-5, atol=1e-5)


def test_a_batch_matmul_tests_a_partial_group_of_panels_per_tile():
    """With the columns known only when called, the batch loop sits between the groups of
    panels and the row tiles: the loop over a group's panels below both is still the one
    versioned per tile (`pyir.transform.split_tail_loops`)."""
    low = transform.lower(ir.IRModule.from_dict({"bmm": from_source(_BATCH_MATMUL)}))["bmm"]
    per_tile = [x for x in walk(low.body) if isinstance(x, S.For)
                and dict(x.annotations).get("pyir.versioned")]
    assert per_tile and all(x.extent.value == gemm.PANEL_GROUP for x in per_tile)
    batch = [x for x in walk(low.body) if isinstance(x, S.For) and x.loop_var.name == "h"]
    assert batch and all(any(p in walk(b.body) for b in batch) for p in per_tile)


def test_few_known_rows_of_a_length_known_only_when_called_read_a_packed():
    """14 rows whose length k is known only when called could share one L1 set: A is
    copied k-major; results are numpy's for every k, 0 included."""
    f = _matmul(n="14")
    assert {"A_global", "B_global"} & _blocks(_scheduled(f)) == {"A_global"}
    lib = pyir.build(f)
    rng = np.random.default_rng(6)
    for k, m in ((1024, 40), (5, 33), (0, 7), (3, 1)):
        a, b = rng.random((14, k), np.float32), rng.random((k, m), np.float32)
        c = np.full((14, m), 5, np.float32)
        lib["mm"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_the_build_gives_a_matmul_the_register_tile_of_its_target():
    """14 known rows are one tile with AVX-512's 32 vector registers (B read in place) and
    three with AVX2's 16 (B packed): `pyir.build` schedules for the target it builds for
    (here AVX2, which the host runs), and results are numpy's."""
    f = _matmul(n="14", k="64")
    assert "B_global" not in _blocks(_scheduled(f, AVX512))
    assert "B_global" in _blocks(_scheduled(f, AVX2))
    if not Target.from_string("llvm").has_feature("avx2"):
        pytest.skip("the host cannot run AVX2 code")
    lib = pyir.build(f, target=AVX2)
    assert "B_global" in lib.source("llvm") and "<8 x float>" in lib.source("llvm")
    rng = np.random.default_rng(7)
    a, b = rng.random((14, 64), np.float32), rng.random((64, 33), np.float32)
    c = np.full((14, 33), 5, np.float32)
    lib["mm"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_a_known_batch_of_few_rows_reads_b_in_place_and_a_packed():
    """Two batches of 14 rows of 1024 elements are two tiles: B in place, A copied k-major
    (the 14 rows of a tile, 4 KiB apart, would share one L1 set); results are numpy's."""
    src = _BATCH_MATMUL.replace('("b", "n", "k")', "(2, 14, 1024)").replace(
        '("k", "m")', "(1024, 40)").replace('("b", "n", "m")', "(2, 14, 40)").replace(
        "T.grid(b, n, m, k)", "T.grid(2, 14, 40, 1024)")
    f = from_source(src)
    assert {"A_global", "B_global"} & _blocks(_scheduled(f)) == {"A_global"}
    lib = pyir.build(f)
    rng = np.random.default_rng(5)
    a, w = rng.random((2, 14, 1024), np.float32), rng.random((1024, 40), np.float32)
    c = np.full((2, 14, 40), 5, np.float32)
    lib["bmm"](a, w, c)
    np.testing.assert_allclose(c, a @ w, rtol=1e-5, atol=1e-5)


def test_a_batch_of_few_rows_reads_a_packed_k_major_when_asked():
    """gemm.schedule_matmul(pack_a=True) on a batch of rows times one matrix copies A to
    A_global[b, k, i] before the tiles, which read it there; results are numpy's, tails
    and empty extents included."""
    sch = gemm.schedule_matmul(Schedule(from_source(_BATCH_MATMUL)), "C", (7, 32),
                               pack_b=False, pack_a=True)
    copy = sch.get(sch.get_block("A_global"))
    assert copy.body.script().strip().splitlines()[-1].strip() == \
        "A_global[v0, v2, v1] = A[v0, v1, v2]"
    lib = pyir.build(sch.mod)
    rng = np.random.default_rng(4)
    for b, n, k, m in ((3, 9, 20, 35), (2, 1, 5, 3), (0, 4, 4, 4), (1, 8, 0, 40),
                       (2, 14, 64, 40)):
        a, w = rng.random((b, n, k), np.float32), rng.random((k, m), np.float32)
        c = np.full((b, n, m), 5, np.float32)
        lib["bmm"](a, w, c)
        np.testing.assert_allclose(c, a @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("func", [
    lambda: _matmul("int32"),
    lambda: _matmul(update="A[vi, vr] * B[vj, vr]"),
    lambda: _matmul(update="B[vr, vj] * A[vi, vr]"),
    lambda: _matmul(update="A[vi, vr] * B[vr, vj] * T.float32(2)"),
    lambda: from_source(_BATCH_MATMUL.replace('B: T.Buffer(("k", "m")',
                                              'B: T.Buffer(("b", "k", "m")')
                        .replace("B[vr, vj]", "B[vh, vr, vj]")),
], ids=["int32", "transposed B", "operands swapped", "scaled", "batch of B"])
def test_default_schedule_keeps_its_rules_for_what_is_not_a_plain_matmul(func):
    f = func()
    assert matmul_block(f) is None
    out = transform.default_schedule(ir.IRModule.from_dict({f.name: f}))[f.name]
    assert not out.attr("scheduled") and [lp.kind for lp in loops(out)][0] == "parallel"


def test_a_build_imports_the_schedule_only_for_a_matmul():
    """The default schedule asks pyir.schedule for a matmul only (importing it cost 50-400
    ms), and the tile's layouts do not build the index-map grammar."""
    import subprocess
    import sys
    mm = _MATMUL.format(dtype="float32", n=3, k=4, m=5, update="A[vi, vr] * B[vr, vj]", ln=3,
                        lk=4, lm=5)
    add = mm.replace("A[vi, vr] * B[vr, vj]", "A[vi, vr] + B[vr, vj]")
    code = (f"import sys, pyir\nfrom pyir.script import from_source\n"
            f"pyir.build(from_source({add!r}))\n"
            "print('pyir.schedule' in sys.modules)\n"
            f"pyir.build(from_source({mm!r}))\n"
            "from pyir.schedule import index_map\n"
            "print('pyir.schedule' in sys.modules, index_map._parser.cache_info().currsize)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "0"]


@pytest.mark.parametrize("x_shape", [(45, 20), (3, 45, 20)])
def test_a_graph_matmul_gets_the_register_tile(x_shape):
    """R.matmul of a matrix, or a batch of them, times a matrix is legalized to a plain
    matmul, which the default schedule tiles (B packed into B_global)."""
    rows = ", ".join(f'"d{k}"' for k in range(len(x_shape) - 1))

    f = from_source(f"""
from pyir.script import graph as R

@R.function
def f(x: R.Tensor(({rows}, "k"), "float32"), w: R.Tensor(("k", "m"), "float32")):
    return R.matmul(x, w)
""")
    lib = pyir.build(f)
    assert "B_global" in lib.source("llvm")
    rng = np.random.default_rng(1)
    x, w = rng.random(x_shape, dtype=np.float32), rng.random((20, 70), dtype=np.float32)
    np.testing.assert_allclose(lib["f"](x, w), x @ w, rtol=1e-5)


def test_default_schedule_leaves_scheduled_functions_alone():
    f = K.elementwise().with_attr("scheduled", True)
    assert transform.default_schedule(K.module(f))["ew"] is f


def test_lower_without_default_schedule_keeps_serial_loops():
    out = transform.lower(K.module(K.elementwise(shape=("n", "m"))), default_schedule=False)
    assert {lp.kind for lp in loops(out["ew"])} == {"serial"}


def test_storage_classes():
    assert storage.storage_class(E.Buffer("t", (8, 8), "float32")) == "stack"
    assert storage.storage_class(E.Buffer("t", (1 << 20,), "float32")) == "heap"
    assert storage.storage_class(E.Buffer("t", (E.Var("n"),), "float32")) == "heap"
    out = transform.lower(K.module(K.scaled_copy_via_temp(), K.allocate_plain(8)),
                          default_schedule=False)
    assert out["via_temp"].attr("storage") == (("T", "heap"),)
    assert out["alloc_plain"].attr("storage") == (("T", "stack"),)


def test_entry_condition_of_window_read():
    out = transform.lower(K.module(K.window_sum()))["window"]
    ((cond, message),) = out.attr("entry_conditions")
    q, p = out.attr("param_shapes")[0][0], out.attr("param_shapes")[1][0]
    assert cond == E.or_(E.lt(p, 1), E.ge(q, p + 2))   # with p = 0 nothing is read
    assert "X" in message and "p + 1" in message


def test_entry_conditions_dropped_when_provable():
    for f in (K.elementwise(shape=("n", "m")), K.matmul(), K.row_sum()):
        assert transform.lower(K.module(f))[f.name].attr("entry_conditions") == ()


def test_entry_conditions_use_tail_guards():
    n = E.Var("n")
    A, B = E.Buffer("A", (n,), "float32"), E.Buffer("B", (n,), "float32")
    io, ii = E.Var("io"), E.Var("ii")
    idx = io * 8 + ii
    body = S.IfThenElse(E.lt(idx, n), S.BufferStore(B, A[idx], (idx,)))
    nest = S.For(io, 0, (n + 7) // 8, "serial", S.For(ii, 0, 8, "serial", body))
    out = transform.lower(K.module(S.PrimFunc("tail", (A, B), nest)))["tail"]
    assert out.attr("entry_conditions") == ()


def _record_relaxations(monkeypatch):
    """The list of the indices the entry conditions then bound by relaxing them over the
    loops and guards (`relaxed_bounds`, the expensive proof), as lowering asks."""
    module = importlib.import_module("pyir.transform.entry_conditions")
    relaxed, relax = [], module._Collector.relaxed_bounds
    monkeypatch.setattr(module._Collector, "relaxed_bounds",
                        lambda self, index, *a: relaxed.append(index) or relax(self, index, *a))
    return relaxed


def test_a_tile_row_index_is_in_bounds_by_its_loop_without_relaxing(monkeypatch):
    """``T[(io * 8 + ii) // 8]`` of a buffer of ``(n + 7) // 8`` rows (a layout in tiles) is
    ``T[io]`` with ``io`` in ``range((n + 7) // 8)``: no condition, and no symbolic
    relaxation asked (the cheap proof); results as numpy's."""
    n = E.Var("n")
    A, B = E.Buffer("A", (n,), "float32"), E.Buffer("B", ((n + 7) // 8,), "float32")
    io, ii = E.Var("io"), E.Var("ii")
    row = (io * 8 + ii) // 8
    body = S.IfThenElse(E.lt(io * 8 + ii, n),
                        S.BufferStore(B, B[row] + A[io * 8 + ii], (row,)))
    nest = S.For(io, 0, (n + 7) // 8, "serial", S.For(ii, 0, 8, "serial", body))
    func = S.PrimFunc("rows", (A, B), nest)
    relaxed = _record_relaxations(monkeypatch)
    out = transform.lower(K.module(func), default_schedule=False)["rows"]
    assert out.attr("entry_conditions") == ()
    assert all(not any(isinstance(x, E.Binary) and x.op == "floordiv" for x in walk(i))
               for i in relaxed), relaxed
    monkeypatch.undo()
    a = np.arange(21, dtype="float32")
    b = np.zeros(3, dtype="float32")
    pyir.build(func, default_schedule=False, use_cache=False)["rows"](a, b)
    np.testing.assert_allclose(b, np.add.reduceat(a, [0, 8, 16]))


@pytest.mark.parametrize("n", [21, 64, 100, 1])
def test_a_panel_index_is_in_bounds_by_its_columns_guard_without_relaxing(monkeypatch, n):
    """``P[x // 16]`` of a buffer of ``(n + 15) // 16`` panels under the guard ``x < n`` on
    its column ``x = g * 64 + p * 16 + e`` (groups of 4 panels, `pyir.schedule.gemm`): no
    condition, and no symbolic relaxation asked (the cheap proof, though the group's
    panels reach past the last one); results as numpy's."""
    nv = E.Var("n")
    A, P = E.Buffer("A", (nv,), "float32"), E.Buffer("P", ((nv + 15) // 16,), "float32")
    g, p, e = E.Var("g"), E.Var("p"), E.Var("e")
    col = g * 64 + p * 16 + e
    panel = col // 16
    body = S.IfThenElse(E.lt(col, nv), S.BufferStore(P, P[panel] + A[col], (panel,)))
    nest = S.For(g, 0, (nv + 63) // 64, "serial",
                 S.For(p, 0, 4, "serial", S.For(e, 0, 16, "serial", body)))
    func = S.PrimFunc("panels", (A, P), nest)
    relaxed = _record_relaxations(monkeypatch)
    out = transform.lower(K.module(func), default_schedule=False)["panels"]
    assert out.attr("entry_conditions") == ()
    assert not relaxed, relaxed
    monkeypatch.undo()
    a = np.arange(n, dtype="float32")
    b = np.zeros(-(-n // 16), dtype="float32")
    pyir.build(func, default_schedule=False, use_cache=False)["panels"](a, b)
    np.testing.assert_allclose(b, np.add.reduceat(a, list(range(0, n, 16))))


def test_flatten_records_declared_shapes():
    out = transform.lower(K.module(K.matmul()))["matmul"]
    A = out.params[0]
    assert len(A.shape) == 1
    n, k = out.attr("param_shapes")[0]
    assert isinstance(n, E.Var) and isinstance(k, E.Var)
    store = nodes(out, S.BufferStore)[-1]
    assert len(store.indices) == 1


def test_simplify_drops_dead_code():
    n = E.Var("n")
    A = E.Buffer("A", (n,), "float32")
    i = E.Var("i")
    body = S.seq(S.For(i, 0, 0, "serial", S.BufferStore(A, E.FloatImm(1.0), (i,))),
                 S.IfThenElse(E.lt(E.IntImm(1), E.IntImm(2)),
                              S.BufferStore(A, E.FloatImm(2.0), (E.IntImm(0),))))
    out = transform.simplify(K.module(S.PrimFunc("dead", (A,), body)))["dead"]
    assert isinstance(out.body, S.BufferStore)


def test_simplify_knows_the_bounds_of_a_let():
    """``x = min(16, n - j)`` is at most 16, so under ``for t in range(x)`` the index
    ``t // 16 * n + t % 16`` is ``t`` (split tails of packed panels are written this way)."""
    n, j, t, x = E.Var("n"), E.Var("j"), E.Var("t"), E.Var("x")
    A = E.Buffer("A", (n,), "float32")
    index = E.Binary("add", E.Binary("mul", E.Binary("floordiv", t, E.IntImm(16)), n),
                     E.Binary("floormod", t, E.IntImm(16)))
    body = S.For(j, 0, n, "serial", S.LetStmt(
        x, E.Binary("min", E.IntImm(16), n - j),
        S.For(t, 0, x, "serial", S.BufferStore(A, E.FloatImm(1.0), (index,)))))
    out = transform.simplify(K.module(S.PrimFunc("tail", (A,), body)))["tail"]
    (store,) = nodes(out, S.BufferStore)
    assert store.indices == (t,)


@T.prim_func
def _int64_values(A: T.Buffer((3,), "int64"), O: T.Buffer((3,), "bool"),
                  P: T.Buffer((3,), "int64"), Q: T.Buffer((3,), "int64")):
    for i in range(3):
        with T.block("O"):
            vi = T.axis.spatial(3, i)
            O[vi] = A[vi + 1 - 1] + T.int64(1) > A[vi]
            P[vi] = A[vi] * T.int64(2) // T.int64(2)
            Q[vi] = T.max(A[vi], A[vi] + T.int64(1))


@pytest.mark.parametrize("default_schedule", [False, True])
def test_int64_values_read_from_memory_wrap_as_numpy_s(default_schedule):
    """The simplifier's rules are those of indices, which never overflow: A[i] + 1 > A[i]
    became True, A[i] * 2 // 2 became A[i], for int64 values that wrap at 2**63 - 1. The
    indices of the loads are still simplified (A[vi + 1 - 1] is A[vi])."""
    lowered = transform.lower(K.module(_int64_values), default_schedule=False)["_int64_values"]
    assert all(isinstance(load.indices[0], E.Var) for load in nodes(lowered, E.BufferLoad))
    a = np.array([2 ** 63 - 1, 2 ** 62, -2 ** 63], "int64")
    o, p, q = np.zeros(3, bool), np.zeros(3, "int64"), np.zeros(3, "int64")
    pyir.build(_int64_values, default_schedule=default_schedule)["_int64_values"](a, o, p, q)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(o, a + 1 > a)
        np.testing.assert_array_equal(p, a * 2 // 2)
        np.testing.assert_array_equal(q, np.maximum(a, a + 1))


def test_graph_functions_pass_through():
    from pyir.ir import Function, ObjectStructInfo, SeqExpr, Tuple
    g = Function("main", (), SeqExpr((), Tuple(())), ObjectStructInfo())
    mod = ir.IRModule((("main", g), ("ew", K.elementwise())))
    assert transform.lower(mod)["main"] is g


def test_already_lowered_functions_pass_through_block_passes():
    f = K.lowered_loop()
    assert transform.lower_blocks(K.module(f))["plain"] is f
    assert transform.default_schedule(K.module(f))["plain"] is f


def test_lower_blocks_splices_block_sequence_into_enclosing_sequence():
    x, out = E.Buffer("x", (4,), "float32"), E.Buffer("out", (4,), "float32")
    inner = S.seq(S.Evaluate(E.IntImm(1)), S.BufferStore(out, x[0], (E.IntImm(0),)))
    block = S.BlockRealize((), E.IntImm(1, "bool"), S.Block("b", (), (), (), inner))
    f = S.PrimFunc("spl", (x, out), S.seq(S.Evaluate(E.IntImm(0)), block))
    body = transform.lower_blocks(K.module(f))["spl"].body
    assert isinstance(body, S.SeqStmt) and len(body.stmts) == 3
    assert not any(isinstance(s, S.SeqStmt) for s in body.stmts)


@pytest.mark.parametrize("factors", [([None, 1], [None, 2]), ([None, 4], [None, 3])])
def test_entry_conditions_of_nested_splits_accept_every_size(factors):
    sch = Schedule(K.elementwise(shape=("n",)))
    (i,) = sch.get_loops(sch.get_block("C"))
    _, inner = sch.split(i, factors[0])
    sch.split(inner, factors[1])
    assert transform.lower(sch.mod)["ew"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod)
    for n in (1, 5, 8, 13):
        a, b, out = np.arange(n, dtype="float32"), np.ones(n, "float32"), np.zeros(n, "float32")
        lib["ew"](a, b, out)
        np.testing.assert_array_equal(out, a + b)


@T.prim_func
def mirror_sum(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + A[n - 1 - vi]


@pytest.mark.parametrize("factors", [([None, 4], [3, 2]), ([None, 8], [4, 2])])
def test_entry_conditions_read_a_tail_guard_on_a_subtracted_index(factors):
    """A mirrored read split twice: ``A[n - 1 - x]`` under the tail guard ``x < n`` reads
    from index 0. The guard was read only as a bound on ``x`` added to the index, so the
    index's lower bound came from the loop ranges, and calls at most sizes (n = 5) were
    refused with "A is read at index (n + 7) % 8 - ... in dimension 0 of A"."""
    sch = Schedule(mirror_sum)
    (i,) = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, factors[0])
    sch.split(inner, factors[1])
    assert transform.lower(sch.mod)["mirror_sum"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod)
    for n in (0, 1, 3, 5, 7, 8, 13):
        a, out = np.arange(n, dtype="float32") ** 2, np.zeros(n, "float32")
        lib["mirror_sum"](a, out)
        np.testing.assert_array_equal(out, a + a[::-1])


def test_entry_conditions_read_a_fused_tail_guard_on_a_subtracted_index():
    """The same read split by [None, 4] and [3, None], then the loops fused: the guard on
    ``x`` (divisions and remainders of the fused loop, not linear in it) was not read as a
    bound on ``n - 1 - x``, and every call was refused ("requires False")."""
    sch = Schedule(mirror_sum)
    (i,) = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, [None, 4])
    sch.split(inner, [3, None])
    sch.fuse(*sch.get_loops(sch.get_block("B")))
    assert transform.lower(sch.mod)["mirror_sum"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod)
    for n in (0, 1, 3, 5, 8):
        a, out = np.arange(n, dtype="float32") ** 2, np.zeros(n, "float32")
        lib["mirror_sum"](a, out)
        np.testing.assert_array_equal(out, a + a[::-1])


@T.prim_func
def _reversed_through_a_buffer(A: T.Buffer(("n",), "float32"), C: T.Buffer(("n",), "float32")):
    B = T.alloc_buffer((n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = B[n - 1 - vi] + A[vi]


def test_entry_conditions_read_a_tail_guard_through_two_divisions():
    """The mirrored read of B split by [None, 4], B laid out twice (i -> i // 7, i % 7, then
    i, j -> i // 3, j, i % 3): its first index ((n - x + 6) // 7 + 2) // 3 - 1 is at least 0
    under the tail guard x < n, but the guard's bound on the inner quotient was dropped with
    its loose upper side, and calls at n = 7 and 13 were refused ("B is read at index
    ((n + 3) % 4 - min(4, n) + 1) // 21 in dimension 0 of B")."""
    sch = Schedule(_reversed_through_a_buffer)
    sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 4])
    sch.transform_layout(sch.get_block("B"), "B", "i -> i // 7, i % 7")
    sch.transform_layout(sch.get_block("B"), "B", "i, j -> i // 3, j, i % 3")
    lowered = transform.lower(sch.mod)["_reversed_through_a_buffer"]
    assert not any("is read" in message for _, message in lowered.attr("entry_conditions"))
    lib = pyir.build(sch.mod)
    for n in (0, 1, 4, 7, 13, 100):
        a, c = np.arange(n, dtype="float32"), np.zeros(n, "float32")
        lib["_reversed_through_a_buffer"](a, c)
        np.testing.assert_array_equal(c, a[::-1] * 3 + a)


@T.prim_func
def _quarter_back(A: T.Buffer(("n",), "float32"), B: T.Buffer(("m",), "float32")):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            B[vi] = T.if_then_else(vi >= 1, A[(vi + 3) // 4 - 1], T.float32(0))


def test_entry_conditions_start_a_loop_where_a_guard_does():
    """``A[(vi + 3) // 4 - 1]`` under ``vi >= 1`` reads from index 0: the guard starts the
    loop at 1. Only guards bounding a loop from above narrowed it, so every call with
    m >= 1 was refused ("A is read at index -1 ...: requires m < 1 or False")."""
    conds = transform.lower(K.module(_quarter_back))["_quarter_back"].attr("entry_conditions")
    assert [msg for _, msg in conds] == ["A is read up to index (m + 2) // 4 - 1 in dimension "
                                         "0 of A"]
    lib = pyir.build(_quarter_back)
    for n, m in [(0, 0), (0, 1), (1, 5), (3, 9), (5, 9)]:
        a, out = np.arange(1, n + 1, dtype="float32"), np.full(m, -1, "float32")
        lib["_quarter_back"](a, out)
        want = [a[(i + 3) // 4 - 1] if i >= 1 else 0 for i in range(m)]
        np.testing.assert_array_equal(out, np.array(want, "float32"))
    with pytest.raises(pyir.Error, match=r"A is read up to index \(m \+ 2\) // 4 - 1"):
        lib["_quarter_back"](np.zeros(1, "float32"), np.zeros(9, "float32"))


@T.prim_func
def _one_ahead(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi + 1]


def test_an_access_out_of_bounds_whenever_it_runs_requires_that_it_never_runs():
    """A[vi + 1] over all of A is out of bounds for every n but 0; the condition read
    "requires n < 1 or False"."""
    conds = transform.lower(K.module(_one_ahead))["_one_ahead"].attr("entry_conditions")
    assert [(cond.script(), msg) for cond, msg in conds] == [
        ("n < 1", "A is read up to index n in dimension 0 of A")]
    lib = pyir.build(_one_ahead)
    lib["_one_ahead"](np.zeros(0, "float32"), np.zeros(0, "float32"))
    with pytest.raises(pyir.ArgumentValueError, match=r"^_one_ahead: A is read up to index n "
                       r"in dimension 0 of A: requires n < 1, but n = 4$"):
        lib["_one_ahead"](np.zeros(4, "float32"), np.zeros(4, "float32"))


@T.prim_func
def _quads(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n // 4):
        with T.block("B"):
            vi = T.axis.spatial(n // 4, i)
            B[vi] = A[4 * vi + 3]


def test_entry_conditions_know_a_quarter_of_a_shape_is_within_it():
    """``B[i]`` for ``i < n // 4`` stays below n: it was an entry condition
    ``n // 4 < 1 or n >= n // 4``, checked at every call."""
    assert transform.lower(K.module(_quads))["_quads"].attr("entry_conditions") == ()
    lib = pyir.build(_quads)
    for n in (0, 3, 4, 9, 16):
        a, out = np.arange(n, dtype="float32"), np.full(n, -1, "float32")
        lib["_quads"](a, out)
        want = np.full(n, -1, "float32")
        want[:n // 4] = a[3::4][:n // 4]
        np.testing.assert_array_equal(out, want)


def test_entry_conditions_narrow_loops_by_their_guards():
    """Split by [1, None], then the outer loop (extent 1) by [None, 2]: the index is
    ``(i_0_0 * 2 + i_0_1) * n + i_1`` under ``if i_0_0 * 2 + i_0_1 < 1``, which keeps
    ``i_0_1`` at 0, so the index stays below n (it used to demand ``n >= 2 * n``)."""
    sch = Schedule(K.elementwise(shape=("n",)))
    (i,) = sch.get_loops(sch.get_block("C"))
    outer, _ = sch.split(i, [1, None])
    sch.split(outer, [None, 2])
    assert transform.lower(sch.mod)["ew"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod)
    for n in (1, 5):
        a, b, out = np.arange(n, dtype="float32"), np.ones(n, "float32"), np.zeros(n, "float32")
        lib["ew"](a, b, out)
        np.testing.assert_array_equal(out, a + b)


@T.prim_func
def _empty_rows(A: T.Buffer((2, 5), "float32"), B: T.Buffer(("n", 5), "float32")):
    for i, j in T.grid(0, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi + 3, vj] = A[vi, vj] * T.float32(2)


@pytest.mark.parametrize("factors", [None, [None, 4], [4, None], [2, 2], [4, 1]])
def test_an_access_that_never_runs_needs_no_entry_condition(factors):
    """A loop of extent 0, split by factors multiplying to more: its tail guard
    ``i_0 * 2 + i_1 < 0`` never holds, and nothing is accessed (entry conditions
    required B to have 6 rows and A ``False``, refusing every call); unsplit, the loop
    never runs either (B[vi + 3] past the end of B needs nothing)."""
    sch = Schedule(_empty_rows)
    if factors is not None:
        sch.split(sch.get_loops(sch.get_block("B"))[0], factors)
    assert transform.lower(sch.mod)["_empty_rows"].attr("entry_conditions") == ()
    for default_schedule in (True, False):
        out = np.ones((1, 5), "float32")
        pyir.build(sch.mod, default_schedule=default_schedule)["_empty_rows"](
            np.zeros((2, 5), "float32"), out)
        np.testing.assert_array_equal(out, 1)


def test_entry_conditions_read_guards_of_fused_loops():
    """The same splits with the three loops fused: the guard reads ``f // 64 < 1``, a bound
    on the fused variable ``f`` itself."""
    sch = Schedule(K.elementwise(shape=(64,)))
    (i,) = sch.get_loops(sch.get_block("C"))
    outer, _ = sch.split(i, [1, None])
    sch.split(outer, [None, 2])
    sch.fuse(*sch.get_loops(sch.get_block("C")))
    assert transform.lower(sch.mod)["ew"].attr("entry_conditions") == ()
    a, b, out = np.arange(64, dtype="float32"), np.ones(64, "float32"), np.zeros(64, "float32")
    pyir.build(sch.mod)["ew"](a, b, out)
    np.testing.assert_array_equal(out, a + b)


def _map_1d(a_shape, value):
    """f(A, B): ``B[vi] = value`` for vi in range(n), A of shape ``(a_shape,)``."""
    return from_source(f'''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("{a_shape}",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = {value}
''')


@pytest.mark.parametrize("factor", [5, 34])
def test_entry_conditions_take_the_tightest_of_two_guards_on_the_index(factor):
    """i split by 7, fused and split again: the index x = (i * f + j) // 7 * 7 + ... is
    guarded by both ``x < n`` and ``x < (n + 6) // 7 * 7``. The last guard read won, so
    A[vi + 2] was taken to read up to (n + 6) // 7 * 7 + 1 and every n but multiples of 7
    refused. The tighter one now stays."""
    sch = Schedule(_map_1d("n + 2", "A[vi] + A[vi + 2]"))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(sch.fuse(*sch.split(i, [None, 7])), [None, factor])
    assert transform.lower(sch.mod)["f"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod, opt_level="fast")
    for n in (0, 1, 6, 8, 13):
        a, b = np.arange(n + 2, dtype="float32"), np.zeros(n, "float32")
        lib["f"](a, b)
        np.testing.assert_array_equal(b, a[:n] + a[2:])


def test_entry_conditions_read_a_guard_on_half_of_a_fused_index():
    """i split by [None, 8, 3], fused and split by [8, None]: A[x * 2 + 1] under the guard
    ``x < n``, with x not linear in the loops (divisions of the fused loop). Only the
    scale 1 was tried (x * 2 + 1 = x + (x + 1)), so it read up to (n + 23) // 24 * 24 +
    n - 1 and every n but multiples of 24 was refused. The factor of a term ``t * 2`` of
    the index is now tried too."""
    sch = Schedule(_map_1d("n * 2", "A[vi * 2] + A[vi * 2 + 1]"))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(sch.fuse(*sch.split(i, [None, 8, 3])), [8, None])
    assert transform.lower(sch.mod)["f"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod, opt_level="fast")
    for n in (0, 1, 5, 24, 25):
        a, b = np.arange(2 * n, dtype="float32"), np.zeros(n, "float32")
        lib["f"](a, b)
        np.testing.assert_array_equal(b, a[0::2] + a[1::2])


_ADD_ONE_7x13 = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((7, 13), "float32"), C: T.Buffer((7, 13), "float32")):
    for i, j in T.grid(7, 13):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + T.float32(1)
'''


def test_entry_conditions_read_a_divided_term_times_one():
    """i split by [7, 1], fused with j and split by 8: row index x // 13 * 1 + 0 under the
    guard x < 91. The division under ``* 1`` was not seen, so the row was taken to reach 7
    and every call refused (entry condition False). A term ``t * 1`` is now ``t``."""
    sch = Schedule(from_source(_ADD_ONE_7x13))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [7, 1])
    sch.split(sch.fuse(i0, i1, j), [None, 8])
    assert transform.lower(sch.mod)["f"].attr("entry_conditions") == ()
    a, c = np.arange(91, dtype="float32").reshape(7, 13), np.zeros((7, 13), "float32")
    pyir.build(sch.mod, opt_level="fast")["f"](a, c)
    np.testing.assert_array_equal(c, a + 1)


_CONV3 = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n + 2",), "float32"), W: T.Buffer((3,), "float32"),
      B: T.Buffer(("n",), "float32")):
    for i, r in T.grid(n, 3):
        with T.block("B"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi + vr] * W[vr]
'''


def _check_conv3(sch):
    """``sch`` (of _CONV3) needs no entry condition and computes the convolution."""
    assert transform.lower(sch.mod)["f"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod, opt_level="fast")
    for n in (0, 1, 2, 7):
        a, w = np.arange(n + 2, dtype="float32"), np.array([1, 2, 3], "float32")
        b = np.full(n, -1, "float32")
        lib["f"](a, w, b)
        np.testing.assert_array_equal(b, a[:n] + 2 * a[1:n + 1] + 3 * a[2:])


def test_entry_conditions_read_a_loop_of_one_iteration_as_its_start():
    """r split by [2, 2, 1] and blockized at r_2: A[vi + vr] with vr = r_0 * 2 + r_1 (the
    outer block's binding) under the guards i_0 * 4 + i_1 < n and r_0 * 2 + r_1 + r_2 < 3.
    The second guard did not bound the index's part, which lacks r_2 (a loop of one
    iteration): A was taken to be read up to n + 2 and every call refused. Such a loop's
    variable now is its start, in indices and guards."""
    sch = Schedule(from_source(_CONV3))
    i, r = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 4])
    sch.blockize(sch.split(r, [2, 2, 1])[2])
    _check_conv3(sch)


def test_entry_conditions_read_a_guard_on_a_multiple_of_part_of_the_index():
    """j (96) split by [None, 2], its outer part by [None, 2, 16] (48 -> 2 x 2 x 16 with a
    tail): C's column is ``2 * (j00 * 32 + j01 * 16 + j02) + j1`` under ``j00 * 32 + j01 *
    16 + j02 < 48``, so it stays below 2 * 47 + 2 = 96 (it used to read the guard as a
    bound on the sum once, up to 111, and refuse every call; found by the full
    random-schedule profile)."""
    sch = Schedule(sched_kernels.static_mm)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    j0, _ = sch.split(j, [None, 2])
    sch.split(j0, [None, 2, 16])
    assert transform.lower(sch.mod)["static_mm"].attr("entry_conditions") == ()
    rng = np.random.default_rng(0)
    a = rng.random((64, 48), dtype=np.float32)
    b = rng.random((48, 96), dtype=np.float32)
    out = np.zeros((64, 96), "float32")
    pyir.build(sch.mod)["static_mm"](a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)


def test_entry_conditions_of_guard_on_part_of_index_bound_that_part():
    n, m = E.Var("n"), E.Var("m")
    A, B = E.Buffer("A", (m,), "float32"), E.Buffer("B", (n,), "float32")
    i, j = E.Var("i"), E.Var("j")
    body = S.IfThenElse(E.lt(j, 2), S.BufferStore(B, A[i + j + 1], (i,)))
    nest = S.For(i, 0, n, "serial", S.For(j, 0, 3, "serial", body))
    out = transform.lower(K.module(S.PrimFunc("part", (A, B), nest)), default_schedule=False)
    ((cond, _),) = out["part"].attr("entry_conditions")
    assert cond == E.or_(E.lt(n, 1), E.ge(m, n + 2))   # with no i there is no access


def _row_nests():
    @T.prim_func
    def rows(A: T.Buffer(("n", 8), "float32"), C: T.Buffer(("n", 8), "float32")):
        M = T.alloc_buffer(("n",), "float32")
        for i, k in T.grid(n, 8):
            with T.block("max"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    M[vi] = T.float32(0)
                M[vi] = T.max(M[vi], A[vi, vk])
        for i, j in T.grid(n, 8):
            with T.block("out"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.exp(A[vi, vj] - M[vi])
    return rows


def test_default_schedule_fuses_row_nests_into_one_parallel_loop():
    out = transform.default_schedule(K.module(_row_nests()))["rows"]
    (row,) = [lp for lp in loops(out) if lp.kind == "parallel"]
    assert [lp.kind for lp in loops(out)] == ["parallel", "serial", "vectorized"]
    assert len(row.body.stmts) == 2


def test_default_schedule_keeps_nests_apart_when_rows_depend_on_each_other():
    f = _row_nests()
    n = f.params[0].shape[0]

    # "out" reads M[n - 1 - vi]: row i needs what the first nest computes for row n - 1 - i
    out_block = next(b for b in nodes(f, S.Block) if b.name == "out")
    flipped = rewrite(out_block, lambda x: E.BufferLoad(x.buffer, (n - 1 - x.indices[0],))
                      if isinstance(x, E.BufferLoad) and x.buffer.name == "M" else None)
    f = rewrite(f, lambda x: flipped if x is out_block else None)
    out = transform.default_schedule(K.module(f))["rows"]
    assert [lp.kind for lp in loops(out)] == ["parallel", "serial", "parallel", "vectorized"]


@T.prim_func
def _after_a_loop(A: T.Buffer(("m",), "float32"), B: T.Buffer(("m",), "float32"),
                  C: T.Buffer((1,), "float32")):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            B[vi] = A[vi]
    with T.block("C"):
        C[0] = A[0]


def test_what_a_loop_implies_of_its_extent_ends_with_it():
    """Inside ``for i in range(m)``, m >= 1; after it, ``A[0]`` still needs m >= 1."""
    out = transform.lower(ir.IRModule.from_dict({"f": _after_a_loop}))["f"]
    assert [m for _, m in out.attr("entry_conditions")] == [
        "A is read up to index 0 in dimension 0 of A"]
    with pytest.raises(pyir.ArgumentValueError, match="requires m >= 1, but m = 0"):
        pyir.build(_after_a_loop)["_after_a_loop"](np.zeros(0, np.float32), np.zeros(0, np.float32),
                                       np.zeros(1, np.float32))


@T.prim_func
def _into_a_temporary(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    Tmp = T.alloc_buffer((16,), "float32")
    for i in range(n):
        with T.block("T"):
            vi = T.axis.spatial(n, i)
            Tmp[vi] = A[vi]
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = Tmp[vi] + T.float32(1)


def test_accesses_to_an_allocated_buffer_have_entry_conditions():
    lib = pyir.build(_into_a_temporary)
    a = np.arange(16, dtype=np.float32)
    b = np.zeros(16, np.float32)
    lib["_into_a_temporary"](a, b)
    np.testing.assert_array_equal(b, a + 1)
    with pytest.raises(pyir.ArgumentValueError, match="Tmp is written up to index n - 1 in "
                                                      "dimension 0 of Tmp: requires 16 >= n"):
        lib["_into_a_temporary"](np.zeros(17, np.float32), np.zeros(17, np.float32))


def test_a_split_fused_loop_is_bounded_through_its_tail_guard():
    """``(f0 * 3 + f1) // 64 + ax0`` under ``f0 * 3 + f1 < n * 64``: at most n - 1, so no
    condition (relaxing the division alone gave ((n * 64 + 2) // 3 * 3 + 63) // 64 - 1,
    which refused n = 1)."""
    sch = Schedule(sched_kernels.KERNELS["bias_relu"])
    i, j = sch.get_loops(sch.get_block("C"))
    fused = sch.fuse(i, j)
    sch.compute_at(sch.get_block("B"), fused)
    sch.split(fused, factors=[None, 3])
    out = transform.lower(sch.mod)["bias_relu"]
    assert out.attr("entry_conditions") == () and not out.attr("access_checks")
    a, bias = np.random.rand(1, 64).astype("float32"), np.random.rand(64).astype("float32")
    d = np.zeros((1, 64), np.float32)
    pyir.build(sch.mod)["bias_relu"](a, bias, d)
    np.testing.assert_allclose(d, np.maximum(a + bias, 0) * 3, rtol=1e-6)


@T.prim_func
def _max_after_a_loop(A: T.Buffer(("m",), "float32"), C: T.Buffer((1,), "int64")):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            A[vi] = T.float32(1)
    with T.block("C"):
        C[0] = T.max(m, T.int64(1))


def test_the_simplify_pass_does_not_carry_a_loop_fact_past_the_loop():
    """``max(m, 1)`` after ``for i in range(m)`` is 1 for m = 0 (it was simplified to m)."""
    c = np.zeros(1, np.int64)
    pyir.build(_max_after_a_loop)["_max_after_a_loop"](np.zeros(0, np.float32), c)
    assert c[0] == 1


@T.prim_func
def _transpose(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for j, i in T.grid(64, 64):
        with T.block("B"):
            vj, vi = T.axis.remap("SS", [j, i])
            B[vj, vi] = A[vi, vj]


@pytest.mark.parametrize("scope", ["global", "local"])
def test_a_cache_placed_by_compute_at_shrinks_to_its_tile(scope):
    """An 8 x 8 tile of A cached at the tile loop: one 64-element tile, whatever its scope
    (a global one too, since its tiles lie inside A's shape)."""
    sch = Schedule(_transpose)
    b = sch.get_block("B")
    j, i = sch.get_loops(b)
    j0, j1 = sch.split(j, [None, 8])
    i0, i1 = sch.split(i, [None, 8])
    sch.reorder(j0, i0, j1, i1)
    sch.compute_at(sch.cache_read(b, "A", scope), i0)
    out = transform.lower(sch.mod)["_transpose"]
    (alloc,) = [n for n in walk(out.body) if isinstance(n, S.Allocate)]
    assert [s.value for s in alloc.buffer.shape] == [64]
    a = np.random.rand(64, 64).astype("float32")
    b = np.zeros_like(a)
    pyir.build(sch.mod)["_transpose"](a, b)
    np.testing.assert_array_equal(b, a.T)


def test_default_schedule_lets_a_row_sum_be_reassociated():
    """The reduction loop is marked, its float additions carry "reassoc", and LLVM turns the
    row sum into vector partial sums (not one chain of scalar additions)."""
    row_sum = sched_kernels.rowsum_symbolic
    out = transform.default_schedule(ir.IRModule.from_dict({"s": row_sum}))["s"]
    assert [(lp.kind, dict(lp.annotations)) for lp in loops(out)] == [
        ("parallel", {}), ("serial", {"reassociate": 1})]
    lib = pyir.build(row_sum)
    assert "fadd contract reassoc float" in lib.source("llvm")
    assert re.search(r"fadd reassoc contract <\d+ x float>", lib.source("llvm-opt"))
    rng = np.random.default_rng(0)
    for shape in ((3, 0), (3, 1), (5, 7), (4, 1000)):
        a = rng.standard_normal(shape).astype("float32")
        s = np.full(shape[0], 9, "float32")
        lib["rowsum_symbolic"](a, s)
        np.testing.assert_allclose(s, a.sum(1), rtol=1e-5, atol=1e-5)


_ROW_EXTREME = """
from pyir.script import tensor as T

@T.prim_func
def row_{op}(A: T.Buffer(("n", "m"), "{dtype}"), S: T.Buffer(("n",), "{dtype}")):
    for i, k in T.grid(n, m):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = A[vi, 0]
            S[vi] = T.{op}(S[vi], A[vi, vk])
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_default_schedule_lets_a_float_row_max_be_vectorized(op, dtype):
    """In the reassociated loop a float max / min is LLVM's NaN-propagating intrinsic, whose
    reduction LLVM vectorizes (the NaN check of the select it was stayed one scalar chain:
    11x slower than numpy's row max). A NaN anywhere in the row is the result; equal zeros
    of either sign give +0.0 for max and -0.0 for min."""
    lib = pyir.build(from_source(_ROW_EXTREME.format(op=op, dtype=dtype)))
    suffix = "f32" if dtype == "float32" else "f64"
    name = "maximum" if op == "max" else "minimum"
    assert re.search(rf"@llvm\.{name}\.v\d+{suffix}\(", lib.source("llvm-opt"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 1000)).astype(dtype)
    a[1, 517] = np.nan
    a[2, :] = -0.0
    a[2, 900] = 0.0
    a[3, :3] = [np.inf, -np.inf, np.nan]
    s = np.zeros(6, dtype)
    lib[f"row_{op}"](a, s)
    want = getattr(np, op)(a, axis=1)
    want[2] = 0.0 if op == "max" else -0.0
    np.testing.assert_array_equal(s, want)
    assert np.signbit(s[2]) == (op == "min")


@T.prim_func
def _running_column_sum(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3, 4), "float32")):
    Tmp = T.alloc_buffer((4,), "float32")
    for i, j in T.grid(3, 4):
        with T.block("acc"):
            vi, vj = T.axis.remap("SS", [i, j])
            Tmp[vj] = T.if_then_else(vi == 0, A[vi, vj], Tmp[vj] + A[vi, vj])
        with T.block("out"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = Tmp[vj]


@T.prim_func
def _alternating(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
    Tmp = T.alloc_buffer((2,), "float32", scope="local")
    for i in range(6):
        with T.block("acc"):
            vi = T.axis.spatial(6, i)
            Tmp[vi % 2] = T.if_then_else(vi < 2, A[vi], Tmp[vi % 2] + A[vi])
        with T.block("out"):
            vi = T.axis.spatial(6, i)
            B[vi] = Tmp[vi % 2]


@pytest.mark.parametrize("default_schedule", [True, False])
def test_a_buffer_carrying_values_to_a_later_tile_visit_is_not_shrunk(default_schedule):
    """Tmp[j] under ``for i, j`` (tile j comes back after the others) and Tmp[i % 2] carry
    values from one visit of a tile to the next: one shared element would mix them."""
    a = np.arange(12, dtype="float32").reshape(3, 4)
    b = np.zeros_like(a)
    pyir.build(_running_column_sum, default_schedule=default_schedule)["_running_column_sum"](a, b)
    np.testing.assert_array_equal(b, np.cumsum(a, 0))
    x = np.arange(1, 7, dtype="float32")
    y = np.zeros_like(x)
    pyir.build(_alternating, default_schedule=default_schedule)["_alternating"](x, y)
    np.testing.assert_array_equal(y, [1, 2, 4, 6, 9, 12])


@T.prim_func
def _into_a_short_local(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    Tmp = T.alloc_buffer((4,), "float32", scope="local")
    for i in range(n):
        with T.block("T"):
            vi = T.axis.spatial(n, i)
            Tmp[vi] = A[vi]
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = Tmp[vi] + T.float32(1)


@pytest.mark.parametrize("default_schedule", [True, False])
def test_a_local_buffer_too_short_is_refused_even_when_it_could_shrink(default_schedule):
    """The default schedule fuses the two loops, so Tmp could shrink to one element per
    iteration; the entry conditions come from Tmp as declared either way."""
    lib = pyir.build(_into_a_short_local, default_schedule=default_schedule)
    with pytest.raises(pyir.ArgumentValueError, match="Tmp is written up to index n - 1 in "
                                                      "dimension 0 of Tmp: requires 4 >= n"):
        lib["_into_a_short_local"](np.zeros(5, np.float32), np.zeros(5, np.float32))


def _split_conv_i_twice(sch):
    i0, _ = sch.split(sch.get_loops(sch.get_block("Y"))[0], [None, 2])
    sch.split(i0, [None, 2])


def _split_conv_r_and_i(sch):
    i, r = sch.get_loops(sch.get_block("Y"))
    sch.split(r, [None, 2])
    sch.split(i, [None, 2])


@pytest.mark.parametrize("splits", [_split_conv_i_twice, _split_conv_r_and_i])
def test_a_sum_guarded_by_two_split_tails_needs_no_condition(splits):
    """The read P[vi + vr] (P has n + 2 elements) under two tail guards: i split by 2 and
    i_0 by 2 (``vi < n`` keeps it in P, ``i_0 < (n + 1) // 2`` does not for odd n, and
    neither is provably tighter: the one that keeps it in bounds is taken), or r and i each
    split by 2 (each guard bounds its own part of the sum). n = 1 was refused."""
    sch = Schedule(sched_kernels.KERNELS["conv1d"])
    splits(sch)
    assert transform.lower(sch.mod)["conv1d"].attr("entry_conditions") == ()
    lib, ref = pyir.build(sch.mod), pyir.build(sched_kernels.KERNELS["conv1d"])
    for n in (1, 2, 3, 7):
        got, want = sched_kernels.args_for("conv1d", n), sched_kernels.args_for("conv1d", n)
        lib["conv1d"](*got)
        ref["conv1d"](*want)
        np.testing.assert_allclose(got[-1], want[-1], rtol=1e-5)


@T.prim_func
def _add_one_and_guards(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for i in range(100):
        with T.block("B"):
            vi = T.axis.spatial(100, i)
            B[vi] = A[vi] + T.float32(1)
    for j in T.unroll(8):
        with T.block("never"):
            vj = T.axis.spatial(8, j)
            if vj + 10 < 5:
                B[vj] = T.float32(0)
    for j in T.vectorized(8):
        with T.block("first5"):
            vj = T.axis.spatial(8, j)
            if vj + 3 < 8:
                B[vj] = T.float32(7)


@pytest.mark.parametrize("kind", ["vectorize", "unroll"])
def test_a_constant_split_tail_is_its_last_iteration(kind, golden):
    """100 split by 16 (by 8): the tail branch is the one iteration i_0 = 6 (12), with the
    inner loop's guard as its constant extent 4, of the same kind (not a clamped serial
    loop, not a `min`). So do the function's other guards with a constant bound:
    ``if vj + 10 < 5`` makes an unrolled loop of extent 0 (gone after simplify), and
    ``if vj + 3 < 8`` a vectorized loop of extent 5."""
    sch = Schedule(_add_one_and_guards)
    _, inner = sch.split(sch.get_loops(sch.get_block("B"))[0],
                         [None, 16 if kind == "vectorize" else 8])
    getattr(sch, kind)(inner)
    golden(f"transform/constant_split_tail_{kind}.py", transform.lower(sch.mod).script())
    a = np.arange(100, dtype=np.float32)
    b = np.zeros_like(a)
    pyir.build(sch.mod)["_add_one_and_guards"](a, b)
    np.testing.assert_array_equal(b, np.concatenate([np.full(5, 7, np.float32), a[5:] + 1]))


@T.prim_func
def _tile_of_rows_read_at_half(A: T.Buffer((8,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i_0 in T.serial(3, annotations={"pyir.split_tail": 3}):
        for i_1 in range(3):
            if i_0 * 3 + i_1 < 8:
                B[i_0 * 3 + i_1] = A[i_0 * 3 + i_1] * T.float32(2)
        for ax0 in range((i_0 * 3 + 1) // 2 - i_0 * 3 // 2 + 1):
            C[i_0 * 3 // 2 + ax0] = B[(i_0 * 3 // 2 + ax0) * 2 + 1]


def test_the_loops_of_a_constant_split_tail_have_constant_bounds():
    """The last iteration i_0 = 2 put in the tail's loops left ``range((2 * 3 + 1) // 2 - 2
    * 3 // 2 + 1)``, which reads back as ``range(1)``: the printed IR was not the IR."""
    out = transform.split_tail_loops(ir.IRModule.from_dict(
        {"f": _tile_of_rows_read_at_half}))["f"]
    tail = out.body.body.body.else_case
    assert [(s.start, s.extent) for s in tail.stmts] == [(E.IntImm(0), E.IntImm(2)),
                                                         (E.IntImm(0), E.IntImm(1))]
    ir.assert_structural_equal(from_source(out.script()), out)


@T.prim_func
def _tiles_by_kind(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", "m"), "float32")):
    for i_0 in T.serial((n + 3) // 4, annotations={"pyir.split_tail": 4}):
        for j_0 in T.serial((m + 7) // 8, annotations={"pyir.split_tail": 8}):
            for i_1, j_1 in T.grid(4, 8):
                if i_0 * 4 + i_1 < n and j_0 * 8 + j_1 < m:
                    if i_0 * 4 + 3 < n and j_0 * 8 + 7 < m:
                        B[i_0 * 4 + i_1, j_0 * 8 + j_1] = A[i_0 * 4 + i_1, j_0 * 8 + j_1] + T.float32(1)
                    elif i_0 * 4 + 3 < n:
                        B[i_0 * 4 + i_1, j_0 * 8 + j_1] = A[i_0 * 4 + i_1, j_0 * 8 + j_1] + T.float32(2)
                    else:
                        B[i_0 * 4 + i_1, j_0 * 8 + j_1] = A[i_0 * 4 + i_1, j_0 * 8 + j_1] + T.float32(3)


def test_the_partial_tile_drops_what_only_whole_tiles_run():
    """A test that the whole 4x8 tile fits (``i_0 * 4 + 3 < n and j_0 * 8 + 7 < m``, as
    tensorize guards its micro-kernel call) is false in the partial-tile copy of the body:
    that copy runs its else branch only. A test of the rows alone stays: the partial tile
    also serves whole rows of a partial column."""
    func = transform.lower(K.module(_tiles_by_kind))["_tiles_by_kind"]
    tile = next(n for n in walk(func.body) if isinstance(n, S.IfThenElse))
    added = lambda s: {n.value for n in walk(s) if isinstance(n, E.FloatImm)}  # noqa: E731
    assert added(tile.then_case) == {1.0}
    assert added(tile.else_case) == {2.0, 3.0}
    lib = pyir.build(_tiles_by_kind)
    for n, m in [(0, 0), (3, 7), (4, 8), (5, 17), (9, 8), (8, 9), (12, 16)]:
        a = np.random.default_rng(n * 100 + m).random((n, m), dtype=np.float32)
        b = np.zeros_like(a)
        lib["_tiles_by_kind"](a, b)
        whole_rows, whole_cols = n // 4 * 4, m // 8 * 8
        want = a + 3
        want[:whole_rows] = a[:whole_rows] + 2
        want[:whole_rows, :whole_cols] = a[:whole_rows, :whole_cols] + 1
        np.testing.assert_array_equal(b, want)


@T.prim_func
def _panel_groups(A: T.Buffer(("m", "n"), "float32"), B: T.Buffer(("m", "n"), "float32"),
                  tiles: T.Buffer((1,), "float32")):
    for j_0 in T.serial((n + 63) // 64, annotations={"pyir.split_tail": 64}):
        for i_0 in T.serial((m + 1) // 2, annotations={"pyir.split_tail": 2}):
            for j_1 in range(4):
                for i_1, j_2 in T.grid(2, 16):
                    if i_0 * 2 + i_1 < m and j_0 * 64 + j_1 * 16 + j_2 < n:
                        B[i_0 * 2 + i_1, j_0 * 64 + j_1 * 16 + j_2] = A[i_0 * 2 + i_1, j_0 * 64 + j_1 * 16 + j_2] + T.float32(1)
                tiles[0] = tiles[0] + T.float32(1)


def test_groups_of_panels_are_versioned_per_tile():
    """Groups of 4 panels of 16 columns (``j_0`` split by 64) around the row tiles around
    the panels of a group: one test per tile, inside all three loops, for its row and its
    panel; the partial-tile copy runs where the tile has an element -- here always, as
    the count of tiles is under no guard (a group's panels past the last column count
    too)."""
    func = transform.lower(K.module(_panel_groups))["_panel_groups"]
    panels = next(x for x in walk(func.body) if isinstance(x, S.For)
                  and x.loop_var.name == "j_1")
    assert dict(panels.annotations) == {"pyir.versioned": 1}
    tile = panels.body
    assert isinstance(tile, S.IfThenElse)
    assert not any(isinstance(x, S.IfThenElse) for x in walk(tile.then_case))
    assert not (isinstance(tile.else_case, S.IfThenElse) and tile.else_case.else_case is None)
    lib = pyir.build(_panel_groups)
    for m, n in [(0, 0), (1, 16), (2, 64), (3, 70), (5, 150), (4, 128), (7, 17)]:
        a = np.random.default_rng(m * 1000 + n).random((m, n), dtype=np.float32)
        b = np.zeros_like(a)
        count = np.zeros(1, np.float32)
        lib["_panel_groups"](a, b, count)
        np.testing.assert_array_equal(b, a + 1)
        assert count[0] == -(-m // 2) * -(-n // 64) * 4


_ADD_ONE = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", "m"), "float32")):
    for i, j in T.grid(n, m):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
'''


def _split_inner_again(sch, i, j):
    _, i1 = sch.split(i, factors=[None, 8])
    sch.split(i1, factors=[None, 3])


def _parallel_under_a_tail(sch, i, j):
    sch.split(i, factors=[None, 4])
    sch.parallel(j)


def _fuse_large_factors(sch, i, j):
    _, i1, i2 = sch.split(i, factors=[None, 1000, 1000])
    sch.fuse(i1, i2)


@pytest.mark.parametrize("steps", [_split_inner_again, _parallel_under_a_tail,
                                   _fuse_large_factors])
def test_split_tails_become_loop_bounds(steps):
    """The last tile's guards become loop bounds. They stayed a test per iteration where the
    innermost loop had two tests (i_1 split by 3: ``i_1_0 * 3 + i_1_1 < 8 and i_0 * 8 +
    i_1_0 * 3 + i_1_1 < n``), where a parallel loop under the tail held the test of an outer
    loop, and where the test was not yet in the form ``i_1 + r < E`` (i_1 and i_2 of
    [None, 1000, 1000] fused: ``(i_0 * 1000 + f // 1000) * 1000 + f % 1000 < n``, a
    million tests for n = 1). No loop is left whose body is a test."""
    sch = Schedule(from_source(_ADD_ONE))
    steps(sch, *sch.get_loops(sch.get_block("B")))
    func = transform.lower(sch.mod, default_schedule=False)["f"]
    assert not [lp for lp in loops(func) if isinstance(lp.body, S.IfThenElse)
                and lp.body.else_case is None], func.script()
    lib = pyir.build(sch.mod, default_schedule=False)
    for n in (0, 1, 2, 7, 8, 9, 17):
        a = np.random.default_rng(n).random((n, 3), dtype=np.float32)
        b = np.zeros_like(a)
        lib["f"](a, b)
        np.testing.assert_array_equal(b, a + 1)



def test_a_reduction_s_init_and_update_share_their_loop_bounds():
    """The rows of a sum over m (which may be empty, so its init runs first) split by
    [None, 1000, 1000, 8]: the init and the k loop each sat under the same tail test, a
    sequence the last tile's innermost loop was not clamped through (a test in each of its
    iterations). The two tests are now one, and the loop clamped."""
    sch = Schedule(sched_kernels.rowsum_symbolic)
    i, _ = sch.get_loops(sch.get_block("S"))
    sch.split(i, factors=[None, 1000, 1000, 8])
    func = transform.lower(sch.mod, default_schedule=False)["rowsum_symbolic"]
    clamped = {lp.loop_var.name for lp in loops(func) if isinstance(lp.extent, E.Var)}
    assert "i_3" in clamped, func.script()
    lib = pyir.build(sch.mod, default_schedule=False)
    for n, m in ((0, 2), (1, 0), (1, 3), (9, 2)):
        a = np.random.default_rng(n).random((n, m), dtype=np.float32)
        s = np.full(n, -1, np.float32)
        lib["rowsum_symbolic"](a, s)
        np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)


def test_entry_conditions_read_a_guard_subtracted_from_the_shape():
    """i split by [2, 2, None], reordered and the inner two fused: A[n - 1 - x] under the
    guard x < n, with x not linear in the fused loop. The guard was tried as a bound on
    -x only where n - 1 - x + x left none of x's variables, and n is one of them (in the
    split's extent (n + 3) // 4): A was taken to be read from (n + 3) % 4 - 3 and n = 1
    refused. Only x's loop variables count."""
    sch = Schedule(_map_1d("n", "A[n - 1 - vi]"))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1, i2 = sch.split(i, [2, 2, None])
    sch.reorder(i2, i1, i0)
    sch.fuse(i2, i1)
    assert transform.lower(sch.mod)["f"].attr("entry_conditions") == ()
    lib = pyir.build(sch.mod, opt_level="fast")
    for n in (0, 1, 2, 5, 9):
        a, b = np.arange(n, dtype="float32"), np.zeros(n, "float32")
        lib["f"](a, b)
        np.testing.assert_array_equal(b, a[::-1])


def test_entry_conditions_read_a_guard_on_the_dividend_of_a_part():
    """r split by 2, i fused with r_0 (f = i * 2 + r_0) and split by [4, None]: A[f // 2 +
    f % 2 * 2 + r_1] under the guards f < 2 * n and f % 2 * 2 + r_1 < 3. The second bounds
    its part; the rest, f // 2, was bounded by the loops only (not by f < 2 * n), so A was
    taken to be read up to (n * 2 + 3) // 4 * 2 + 1 and n = 1 refused."""
    sch = Schedule(from_source(_CONV3))
    i, r = sch.get_loops(sch.get_block("B"))
    r0, _ = sch.split(r, [None, 2])
    sch.split(sch.fuse(i, r0), [4, None])
    _check_conv3(sch)


def test_entry_conditions_read_a_division_that_shows_once_simplified():
    """i split by 5, fused with r and split by 8: the spatial index of f is f // 15 * 5 +
    f // 3 % 5, which is f // 3, under the guard f < 3 * n. The division was looked for
    in the index as written only, so A[f // 3 + f % 3] was taken to be read up to about
    (n + 4) // 5 * 5 + 1 and n = 1 refused."""
    sch = Schedule(from_source(_CONV3))
    i, r = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 5])
    sch.split(sch.fuse(i0, i1, r), [None, 8])
    _check_conv3(sch)


def test_a_range_free_of_the_relaxed_loops_is_its_simplified_self(monkeypatch):
    """`relax_range` of a region free of the loops it relaxes asks no symbolic bound (a
    block's outer dimensions under blockize or a layout's tile index: half of tensorize's
    relaxations); where a relaxed loop appears it relaxes as before."""
    from pyir.arith import Analyzer
    from pyir.transform.dependence import relax_range
    n, i, k = E.Var("n"), E.Var("i"), E.Var("k")
    ana = Analyzer()
    ana.bind(i, ir.Range(E.IntImm(0), E.IntImm(7)))
    ana.bind(k, ir.Range(E.IntImm(0), n))
    asked = []
    monkeypatch.setattr(Analyzer, "symbolic_bound",
                        lambda self, e, vs=None: asked.append(e) or (None, None))
    r = relax_range(ir.Range(k * 32 + (n - n), E.IntImm(32)), ana, [i])
    assert ir.structural_equal(r, ir.Range(k * 32, E.IntImm(32))) and not asked
    monkeypatch.undo()
    r = relax_range(ir.Range(k * 32 + i, E.IntImm(1)), ana, [i])
    assert ir.structural_equal(r, ir.Range(k * 32, E.IntImm(7)))


def test_a_range_relaxes_what_a_substitution_brings_in():
    """A variable the analyzer substitutes by an expression of a relaxed loop (a let) is
    relaxed through it: the range is not taken as free of the loop."""
    from pyir.arith import Analyzer
    from pyir.transform.dependence import relax_range
    i, x = E.Var("i"), E.Var("x")
    ana = Analyzer()
    ana.bind(i, ir.Range(E.IntImm(0), E.IntImm(7)))
    ana.bind(x, i + 1)
    r = relax_range(ir.Range(x, E.IntImm(1)), ana, [i])
    assert ir.structural_equal(r, ir.Range(E.IntImm(1), E.IntImm(7)))
