"""Each lowering pass: the structure of its output, and `verify` after every pass."""

import pytest

import kernels as K
from pyir import ir, transform
from pyir.ir import expr as E
from pyir.ir import stmt as S
from pyir.ir.node import walk
from pyir.transform import storage

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
    assert names == ["default_schedule", "lower_blocks", "plan_storage", "entry_conditions",
                     "flatten_buffers", "simplify"]


def test_lower_blocks_places_reduction_init_under_first_reduce_value():
    out = transform.lower_blocks(K.module(K.matmul()))["matmul"]
    i, j, k = loops(out)
    body = k.body
    assert isinstance(body, S.SeqStmt)
    init, update = body.stmts
    assert isinstance(init, S.IfThenElse)
    assert init.condition == E.eq(k.loop_var, E.IntImm(0))
    assert isinstance(update, S.BufferStore)


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


def test_default_schedule_never_parallelizes_reductions():
    out = transform.default_schedule(K.module(K.matmul()))["matmul"]
    assert [lp.kind for lp in loops(out)] == ["parallel", "serial", "serial"]


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
    out = transform.lower(K.module(K.scaled_copy_via_temp(), K.allocate_plain(8)))
    assert out["via_temp"].attr("storage") == (("T", "heap"),)
    assert out["alloc_plain"].attr("storage") == (("T", "stack"),)


def test_entry_condition_of_window_read():
    out = transform.lower(K.module(K.window_sum()))["window"]
    ((cond, message),) = out.attr("entry_conditions")
    q, p = out.attr("param_shapes")[0][0], out.attr("param_shapes")[1][0]
    assert cond == E.ge(q, p + 2)
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


def test_graph_functions_pass_through():
    from pyir.ir import Function, ObjectStructInfo, SeqExpr, Tuple
    g = Function("main", (), SeqExpr((), Tuple(())), ObjectStructInfo())
    mod = ir.IRModule((("main", g), ("ew", K.elementwise())))
    assert transform.lower(mod)["main"] is g


def test_already_lowered_functions_pass_through_block_passes():
    f = K.lowered_loop()
    assert transform.lower_blocks(K.module(f))["plain"] is f
    assert transform.default_schedule(K.module(f))["plain"] is f
