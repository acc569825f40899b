"""Arguments a primitive cannot use: handles of another schedule, tile factors that are not
positive ints, index maps that do not build index expressions. Each is refused with a
ScheduleError naming the primitive and the argument, and the schedule, its trace and its
random generator are exactly as before. sweep names the candidates or evaluate it cannot
use."""

import numpy as np
import pytest

import pyir
from pyir.schedule import Schedule, ScheduleError, Trace, sweep
from pyir.script import from_source

from sched_helpers import check_roundtrip, fresh


def refused(sch, step, *words):
    """Run ``step`` (which must fail) and check the message and the unchanged schedule."""
    mod, text, data = sch.mod, str(sch.trace), sch.trace.to_json()
    rng = sch._rng.getstate()
    with pytest.raises(ScheduleError) as info:
        step()
    for word in words:
        assert word in str(info.value), f"{word!r} not in:\n{info.value}"
    assert sch.mod is mod and str(sch.trace) == text and sch.trace.to_json() == data
    assert sch._rng.getstate() == rng


def loops(sch, block="C"):
    return sch.get_loops(sch.get_block(block))


# ------------------------------------------------------------------ handles
def test_a_handle_made_after_a_fork_is_refused_by_the_other_copy():
    sch = fresh("static_mm")
    side = sch.fork()
    i = loops(sch)[0]
    refused(side, lambda: side.split(i, factors=[None, 8]),
            "split: loop i: this handle comes from another schedule", "sch.fork()",
            "sch.get_block / sch.get_loops")
    i0, _ = side.split(loops(side)[0], factors=[None, 8])
    refused(sch, lambda: sch.parallel(i0), "parallel: loop i_0", "another schedule")


def test_a_handle_of_another_schedule_of_the_same_module_is_refused():
    one, other = fresh("static_mm"), fresh("static_mm")
    block = one.get_block("C")
    refused(other, lambda: other.get_loops(block),
            "get_loops: block \"C\": this handle comes from another schedule")


def test_handles_made_before_a_fork_work_on_both_and_replay():
    sch = fresh("static_mm")
    i, j, _ = loops(sch)
    side = sch.fork()
    side.split(i, factors=[None, 8])
    sch.split(j, factors=[None, 16])
    for s in (sch, side):
        check_roundtrip(s, "static_mm")
        replayed = Trace.from_json(s.trace.to_json()).apply_to(fresh("static_mm"))
        assert str(replayed.trace) == str(s.trace)


def test_a_handle_of_an_undone_step_is_refused_even_where_its_block_still_is():
    sch = fresh("chain")
    sch.parallel(loops(sch, "B")[0])
    block = sch.get_block("C")   # recorded after the parallel step, dropped by the undo
    sch.undo()
    refused(sch, lambda: sch.get_loops(block),
            "get_loops: block \"C\": this handle is stale", "undone")
    sch.parallel(loops(sch, "C")[0])
    check_roundtrip(sch, "chain")


def test_undo_refuses_the_handles_of_the_steps_it_drops_and_keeps_the_others():
    sch = fresh("chain")
    i, j = loops(sch, "B")
    sch.unroll(i)
    c = sch.get_block("C")
    j0, _ = sch.split(j, factors=[None, 4])
    sch.undo()
    sch.undo()
    refused(sch, lambda: sch.get_loops(c), "get_loops: block \"C\": this handle is stale",
            "undone")
    refused(sch, lambda: sch.parallel(j0), "parallel: loop j_0: this handle is stale", "undone")
    sch.split(j, factors=[None, 2])
    sch.parallel(i)
    check_roundtrip(sch, "chain")


@pytest.mark.parametrize("step", ["annotate", "get_child_blocks", "tensorize"])
def test_a_step_taking_a_block_or_a_loop_says_so_of_anything_else(step):
    """They said "expected a loop handle" of a block name or a sampled tile factor, though
    a block handle does as well."""
    sch = fresh("static_mm")
    tile = sch.sample_perfect_tile(loops(sch)[0], n=2)[0]
    extra = {"annotate": ("k", 1), "get_child_blocks": (), "tensorize": ("x",)}[step]
    for wrong in ("C", tile):
        refused(sch, lambda: getattr(sch, step)(wrong, *extra),
                f"{step}: {wrong!r}: expected a block or loop handle (from get_block, get_loops")


# ------------------------------------------------------------------ split factors
@pytest.mark.parametrize("factors, bad", [
    ([2.7, None], "2.7"), ([2.0, None], "2.0"), ([True, None], "True"), (["4", None], "'4'"),
    ([None, 0], "0"), ([-8, None], "-8"),
])
def test_split_factors_must_be_positive_ints(factors, bad):
    sch = fresh("static_mm")
    i = loops(sch)[0]
    refused(sch, lambda: sch.split(i, factors=factors),
            "split: loop i", f"factor {bad} is not a positive int")


def test_split_factors_must_be_a_list():
    sch = fresh("static_mm")
    i = loops(sch)[0]
    refused(sch, lambda: sch.split(i, factors=8), "split: loop i", "factors must be a list")


def test_split_takes_numpy_integers_and_traces_them_as_ints():
    sch = fresh("static_mm")
    sch.split(loops(sch)[0], factors=[np.int64(4), None])
    assert "sch.split(l1, factors=[4, None])" in str(sch.trace)
    assert '"factors": [\n    4,' in sch.trace.to_json()
    check_roundtrip(sch, "static_mm")


# ------------------------------------------------------------------ sample_perfect_tile
@pytest.mark.parametrize("kwargs, words", [
    ({"n": 2, "decision": [128, 0.5]}, "decision factor 0.5 is not a positive int"),
    ({"n": 2, "decision": [-8, -8]}, "decision factor -8 is not a positive int"),
    ({"n": 2, "decision": 64}, "decision must be a list of 2 factors"),
    ({"n": 2, "max_innermost_factor": 4, "decision": [8, 8]},
     "innermost factor 8, more than max_innermost_factor 4"),
    ({"n": 1, "max_innermost_factor": 4}, "one tile is the whole extent 64, more than "
     "max_innermost_factor 4"),
    ({"n": 1, "max_innermost_factor": 4, "decision": [64]}, "one tile is the whole extent 64"),
    ({"n": 2, "max_innermost_factor": 0}, "max_innermost_factor must be a positive int"),
    ({"n": 2, "max_innermost_factor": -4}, "max_innermost_factor must be a positive int"),
    ({"n": 2, "max_innermost_factor": 2.5}, "max_innermost_factor must be a positive int"),
    ({"n": 0}, "n (the number of tiles) must be an int from 1 to 64, got 0"),
    ({"n": -1}, "n (the number of tiles) must be an int from 1 to 64, got -1"),
    ({"n": 2.0}, "n (the number of tiles) must be an int from 1 to 64, got 2.0"),
    ({"n": 10 ** 8}, "n (the number of tiles) must be an int from 1 to 64, got 100000000"),
    ({"n": True}, "n (the number of tiles) must be an int from 1 to 64, got True"),
])
def test_sample_perfect_tile_arguments(kwargs, words):
    """n=1 with a max_innermost_factor below the extent gave [extent] and traced it with the
    cap, a decision the replay refused."""
    sch = fresh("static_mm")
    i = loops(sch)[0]
    refused(sch, lambda: sch.sample_perfect_tile(i, **kwargs), "sample_perfect_tile: loop i",
            words)


def test_sample_perfect_tile_of_an_empty_loop_is_refused():
    sch = Schedule(from_source('''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((0,), "float32")):
    for i in range(0):
        with T.block("B"):
            vi = T.axis.spatial(0, i)
            A[vi] = T.float32(1)
'''))
    i = loops(sch, "B")[0]
    refused(sch, lambda: sch.sample_perfect_tile(i, n=2), "sample_perfect_tile: loop i",
            "extent is 0")


def test_sample_perfect_tile_of_a_huge_loop_is_refused():
    """Its divisors were found by trying every number up to the extent: 2**40 never ended."""
    sch = Schedule(from_source('''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((1,), "float32")):
    for i in range(1099511627776):
        with T.block("B"):
            vi = T.axis.spatial(1099511627776, i)
            A[0] = T.float32(1)
'''))
    i = loops(sch, "B")[0]
    refused(sch, lambda: sch.sample_perfect_tile(i, n=2), "sample_perfect_tile: loop i",
            "the loop's extent 1099511627776 is past 2**32")


def test_sample_perfect_tile_finds_every_divisor():
    from pyir.schedule.sampling import _divisors
    for extent in (1, 7, 49, 96, 360, 1 << 20):
        assert _divisors(extent) == [d for d in range(1, extent + 1) if extent % d == 0]


def test_sample_perfect_tile_takes_numpy_integers():
    sch = fresh("static_mm")
    i = loops(sch)[0]
    tiles = sch.sample_perfect_tile(i, n=np.int64(2), max_innermost_factor=np.int64(8),
                                    decision=[np.int64(8), np.int64(8)])
    assert tiles == [8, 8]
    assert "n=2, max_innermost_factor=8, decision=[8, 8]" in str(sch.trace)
    sch.split(i, factors=tiles)
    check_roundtrip(sch, "static_mm")


# ------------------------------------------------------------------ transform_layout
def test_an_index_map_over_names_past_ascii_replays():
    """The map of lambda α, β: (β, α) was traced as "α, β -> β, α", which the replay could not
    read: the text notation took ASCII names only, a lambda any Python name."""
    sch = fresh("bias_relu")
    sch.transform_layout(sch.get_block("B"), "B", lambda α, β: (β // 16, α, β % 16))
    assert "\"α, β -> β // 16, α, β % 16\"" in str(sch.trace)
    check_roundtrip(sch, "bias_relu")


def test_a_negative_literal_in_an_index_map_reads_back_as_itself():
    """"-1" was read as 0 - 1: the error quoted the map as 'i, j -> i, j, 0 - 1', and the map
    of a lambda giving -1, traced as text, read back as another expression."""
    from pyir.ir import structural_equal
    from pyir.schedule import IndexMap
    text = "i, j -> i, j, -1"
    from_lambda = IndexMap.parse(lambda i, j: (i, j, -1))
    assert from_lambda.text() == text and IndexMap.parse(text).text() == text
    assert structural_equal(IndexMap.parse(text).outputs[2], from_lambda.outputs[2])
    sch = fresh("bias_relu")
    block = sch.get_block("B")
    refused(sch, lambda: sch.transform_layout(block, "B", text),
            f"cannot bound output '-1' of the index map '{text}'")


@pytest.mark.parametrize("index_map, detail", [
    (lambda i, j: "x", "cannot use str 'x'"),
    (lambda i, j: (j, "x"), "cannot use str 'x'"),
    (lambda i, j: (j, None), "cannot use NoneType None"),
    (lambda i, j: (j, [i]), "cannot use list"),
    (lambda i, j: (j, i, 1.5), "T.float32(1.5) is not one"),
    (lambda i, j: (j, i / 2), "use // for floor division"),
])
def test_transform_layout_index_map_must_give_index_expressions(index_map, detail):
    sch = fresh("chain")
    block = sch.get_block("B")
    refused(sch, lambda: sch.transform_layout(block, "B", index_map),
            "transform_layout: block \"B\": the index map must give index expressions", detail)


@pytest.mark.parametrize("name", [["C"], 3, None])
def test_get_block_takes_a_name(name):
    """A list was a raw TypeError (unhashable) from the block search."""
    sch = fresh("static_mm")
    refused(sch, lambda: sch.get_block(name), f"get_block: {name!r}: a block is named by a "
            "string")


@pytest.mark.parametrize("text, words", [
    ("not json", "Trace.from_json: the text: it is not JSON"),
    ("{}", "a trace is a JSON list of instructions, not dict"),
    ("[1]", "an instruction is an object with \"kind\""),
    ('[{"kind": "split", "args": [], "outputs": []}]', "an instruction is an object"),
    ('[{"kind": "get_block", "args": ["C"], "kwargs": {}, "outputs": ["def"]}]',
     "an instruction is an object"),
    ('[{"kind": "get_block", "args": ["C"], "kwargs": {"1": 2}, "outputs": []}]',
     "an instruction is an object"),
    ('[{"kind": "get_loops", "args": [{"rv": ["b0"]}], "kwargs": {}, "outputs": []}]',
     r"argument \{'rv': \['b0'\]\} is neither a handle"),
    ('[{"kind": "annotate", "args": [{"rv": "l1"}, "k", NaN], "kwargs": {}, "outputs": []}]',
     "argument nan is neither a handle"),
])
def test_a_trace_text_that_is_no_trace_is_refused(text, words):
    """Raw JSONDecodeError, TypeError or KeyError; {} was taken as an empty trace. A handle
    named by a list was a TypeError when printed or replayed; an output named "def", a keyword
    argument named "1" or a NaN printed as trace text that is no Python."""
    from pyir.schedule.trace import Trace
    with pytest.raises(ScheduleError, match=words):
        Trace.from_json(text)


@pytest.mark.parametrize("step, words", [
    ({"kind": "undo", "args": [], "kwargs": {}, "outputs": []},
     r"step 1, sch.undo: not a schedule primitive"),
    ({"kind": "get_loops", "args": [{"rv": "b9"}], "kwargs": {}, "outputs": []},
     "step 1, sch.get_loops: handle b9 is used before any step gives it"),
    ({"kind": "get_block", "args": ["C"], "kwargs": {"bogus": 1}, "outputs": ["b0"],
      "single": True}, "step 1, sch.get_block: cannot take these arguments"),
    ({"kind": "get_block", "args": ["C"], "kwargs": {}, "outputs": ["b0"]},
     "step 1, sch.get_block: returned one handle where the trace recorded a list"),
    ({"kind": "get_block", "args": ["C"], "kwargs": {}, "outputs": ["b0", "b1"],
      "single": True}, "step 1, sch.get_block: returned 1 handle"),
])
def test_a_trace_replays_only_schedule_steps(step, words):
    """getattr(sch, kind) ran anything: "undo" undid a step of the replay; an unknown handle
    was a KeyError; a single handle where the trace says a list was a TypeError (BlockRV
    is not iterable)."""
    import json

    from pyir.schedule.trace import Trace
    trace = Trace.from_json(json.dumps([step]))
    with pytest.raises(ScheduleError, match=words):
        trace.apply_to(fresh("static_mm"))
    with pytest.raises(ScheduleError, match="a trace replays on a Schedule, not a NoneType"):
        trace.apply_to(None)


@pytest.mark.parametrize("value, plain", [(np.float64(1.5), 1.5), ("😀", "😀")])
def test_an_annotation_prints_and_traces_as_a_plain_value(value, plain):
    """np.float64(1.5) printed as itself, which the parser and the trace text cannot read;
    a character past U+FFFF printed as two escapes that read back as two lone surrogates."""
    from pyir.ir import For, structural_equal, walk
    sch = fresh("static_mm")
    sch.annotate(loops(sch)[0], "k", value)
    assert structural_equal(from_source(sch.mod.script()), sch.mod)
    scope = {}
    exec(str(sch.trace), scope)
    again = fresh("static_mm")
    scope["apply"](again)
    assert structural_equal(again.mod, sch.mod)
    loop = next(n for n in walk(sch.mod["static_mm"].body) if isinstance(n, For))
    value = dict(loop.annotations)["k"]
    assert value == plain and type(value) is type(plain)


def test_numpy_integer_indices_are_traced_as_ints_and_bools_are_refused():
    """cache_read(b, np.int64(1)) said the block reads no buffer np.int64(1); rfactor(k, True)
    was taken as axis 1 and traced as True; a list seed was a raw TypeError."""
    sch = fresh("static_mm")
    sch.cache_read(sch.get_block("C"), np.int64(1), "local")
    assert "sch.cache_read(b" in str(sch.trace) and ", 1, \"local\")" in str(sch.trace)
    check_roundtrip(sch, "static_mm")
    sch = fresh("rowsum")
    k = loops(sch, "S")[1]
    refused(sch, lambda: sch.rfactor(k, True), "rfactor", "factor_axis must be in [0, 1], got "
            "True")
    sch = fresh("chain")
    b = sch.get_block("B")
    refused(sch, lambda: sch.transform_layout(b, ("write", True), "i, j -> j, i"),
            "transform_layout", "name the buffer by name or as")
    with pytest.raises(ScheduleError, match=r"Schedule: \[1\]: seed must be an int of at least "
                       r"0, or None"):
        fresh("chain", seed=[1])
    with pytest.raises(ScheduleError, match=r"Schedule: -1: seed must be an int of at least 0, "
                       r"or None"):     # random.Random(-1) draws what random.Random(1) does
        fresh("chain", seed=-1)


def test_an_annotation_string_with_a_lone_surrogate_round_trips():
    """Quoted as a Python literal, not JSON: the character stays one escape."""
    from pyir.ir import structural_equal
    sch = fresh("static_mm")
    sch.annotate(loops(sch)[0], "k", "a\udcffb\n")
    assert '"a\\udcffb\\n"' in sch.mod.script()
    assert structural_equal(from_source(sch.mod.script()), sch.mod)


@pytest.mark.parametrize("args, words", [
    ((5, abs), "sweep: candidates must be iterable (a list, a range, ...), got int 5"),
    (([1, 2], None), "sweep: evaluate must be a function of one candidate, got None")])
def test_sweep_arguments_it_cannot_use_are_named(args, words):
    """sweep(5, f) raised Python's "'int' object is not iterable" and sweep([1, 2], None)
    "'NoneType' object is not callable" from inside the progress loop."""
    with pytest.raises(pyir.ArgumentTypeError) as info:
        sweep(*args, show_progress=False)
    assert words in str(info.value)
