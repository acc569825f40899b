"""Long straight-line programs (generated code has thousands of statements, and each
``x = expr`` nests the rest of its block in a let) parse, print, round-trip, schedule, build
and run; genuinely deep nesting is a clear pyir.Error, never a RecursionError.

By default the long programs have 1,500 statements (200 were too many before) and 600
graph bindings; PYIR_FULL_TESTS=1 selects 5,000 and 2,000."""

import dataclasses
import os
import textwrap

import numpy as np
import pytest

import pyir
from pyir.ir import (Binary, For, IntImm, assert_structural_equal, rewrite, structural_hash,
                     verify)
from pyir.schedule import Schedule, ScheduleError
from pyir.script import ParseError, from_source

FULL = os.environ.get("PYIR_FULL_TESTS") == "1"
STATEMENTS, BINDINGS = (5000, 2000) if FULL else (1500, 600)


def long_prim(count, looped=False):
    """(script text, numpy reference, name of the last block) of a prim function with
    ``count`` statements in its body: scalar lets used later, stores, ifs, short loops with
    and without blocks, T.evaluate. ``looped``: an allocation wraps them, and they are the
    body of a loop."""
    body, ref, last, lets, block = [], [], None, 0, None
    for k in range(count):
        a, b = (k * 7) % 60, (k * 13) % 248
        kind = k % 6
        if kind == 0:
            tail = f" + {last} * T.float32(0.25)" if last else ""
            last, lets = f"x{lets}", lets + 1
            body.append(f"{last} = A[{a}] * T.float32(0.5){tail}")
            ref.append(f"{last} = A[{a}] * f32(0.5){tail.replace('T.float32', 'f32')}")
        elif kind == 1:
            body.append(f"B[{b}] = B[{b}] + {last}")
            ref.append(body[-1])
        elif kind == 2:
            body += [f"if A[{a}] > T.float32(0.5):", f"    B[{b}] = B[{b}] - A[{a + 1}]",
                     "else:", f"    B[{b}] = B[{b}] * T.float32(0.5)"]
            ref += [f"if A[{a}] > f32(0.5):", f"    B[{b}] = B[{b}] - A[{a + 1}]",
                    "else:", f"    B[{b}] = B[{b}] * f32(0.5)"]
        elif kind == 3:
            block = f"b{k}"
            body += ["for i in range(4):", f"    with T.block(\"{block}\"):",
                     "        vi = T.axis.spatial(4, i)",
                     f"        B[{b} + vi] = B[{b} + vi] + A[{a} + vi]"]
            ref += ["for i in range(4):", f"    B[{b} + i] = B[{b} + i] + A[{a} + i]"]
        elif kind == 4:
            body.append("T.evaluate(0)")
            ref.append("pass")
        else:
            body += ["for j in range(3):", f"    B[{b} + j] = B[{b} + j] + {last} * A[{a} + j]"]
            ref += body[-2:]
    head = rhead = []
    if looped:
        body = ["X[t] = X[t] + B[t]"] + body + ["B[t] = B[t] + X[t + 1]"]
        ref = ["X[t] = X[t] + B[t]"] + ref + ["B[t] = B[t] + X[t + 1]"]
        head = ['X = T.alloc_buffer((8,), "float32")', "for q in range(8):", "    X[q] = A[q]",
                "for t in range(2):"]
        rhead = ["X = np.zeros(8, np.float32)", "for q in range(8):", "    X[q] = A[q]",
                 "for t in range(2):"]
        body, ref = ["    " + line for line in body], ["    " + line for line in ref]
    text = ("from pyir.script import tensor as T\n\n@T.prim_func\n"
            'def long(A: T.Buffer((64,), "float32"), B: T.Buffer((256,), "float32")):\n'
            + "".join(f"    {line}\n" for line in head + body))
    source = "def reference(A, B):\n" + "".join(f"    {line}\n" for line in rhead + ref)
    scope = {"np": np, "f32": np.float32}
    exec(source, scope)
    return text, scope["reference"], block


def run_against_numpy(lib, reference):
    rng = np.random.default_rng(0)
    A = rng.random(64, dtype=np.float32)
    B = rng.random(256, dtype=np.float32)
    expected = B.copy()
    reference(A, expected)
    lib["long"](A, B)
    np.testing.assert_allclose(B, expected, rtol=1e-5)


@pytest.mark.parametrize("looped", [False, True], ids=["flat", "in_a_loop"])
def test_a_prim_function_of_thousands_of_statements_round_trips_schedules_and_runs(looped):
    """About 200 statements (in a loop, 100) were too deep for the parser; the printer,
    the verifier, structural equality and hashing, the passes and codegen each recursed once
    per let too."""
    text, reference, last_block = long_prim(STATEMENTS, looped)
    func = from_source(text)
    printed = func.script()
    again = from_source(printed)
    assert_structural_equal(again, func)
    assert structural_hash(again) == structural_hash(func)
    assert again.script() == printed
    verify(func)
    sch = Schedule(func)
    block = sch.get_block(last_block)
    loops = sch.get_loops(block)
    assert len(loops) == (2 if looped else 1)
    sch.split(loops[-1], factors=[2, None])
    assert len(sch.get_loops(block)) == len(loops) + 1
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    # The scheduled function, or (in the loop) the default schedule's; "fast": LLVM's O3
    # pipeline alone takes 10-20 s on 5,000 statements.
    run_against_numpy(pyir.build(func if looped else sch.mod, opt_level="fast"), reference)


def long_graph(count):
    """A module whose graph function binds ``count`` values in one dataflow block."""
    lines = ["@R.function",
             'def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):',
             "    with R.dataflow():"]
    prev = "x"
    for k in range(count):
        value = (f'R.call_tir(cls.step, ({prev},), out_sinfo=R.Tensor((4,), "float32"))',
                 f"R.add({prev}, x)", f"R.multiply({prev}, x)")[k % 3]
        lines.append(f"        v{k} = {value}")
        prev = f"v{k}"
    lines += [f"        R.output({prev})", f"    return {prev}"]
    return ("from pyir.script import ir as I, tensor as T, graph as R\n\n@I.ir_module\n"
            "class Module:\n" + textwrap.indent(textwrap.dedent('''
                @T.prim_func
                def step(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
                    for i in range(4):
                        with T.block("Y"):
                            vi = T.axis.spatial(4, i)
                            Y[vi] = X[vi] * T.float32(0.5) + T.float32(1)
                ''') + "\n".join(lines) + "\n", "    "))


def test_a_graph_function_of_thousands_of_bindings_round_trips_and_runs():
    count = BINDINGS
    mod = from_source(long_graph(count))
    printed = mod.script()
    assert_structural_equal(from_source(printed), mod)
    verify(mod)
    x = np.random.default_rng(1).random(4, dtype=np.float32) * 0.5
    expected = x.copy()
    for k in range(count):
        expected = (expected * np.float32(0.5) + np.float32(1), expected + x,
                    expected * x)[k % 3]
    np.testing.assert_allclose(pyir.build(mod, opt_level="fast")["main"](x), expected,
                               rtol=1e-4)


def deep_loops(depth):
    names = ", ".join(f"i{k}" for k in range(depth))
    return from_source(
        "from pyir.script import tensor as T\n\n@T.prim_func\n"
        'def deep(A: T.Buffer((4,), "float32")):\n'
        f"    for {names} in T.grid({', '.join(['1'] * depth)}):\n"
        '        with T.block("b"):\n'
        "            A[0] = A[0] + T.float32(1)\n")


TOO_DEEP = ("an expression in it, or its loops, ifs and blocks inside one another, nest deeper "
            "than Python's recursion limit")


def test_loops_nested_3000_deep_print_and_schedule_and_fail_to_build_clearly():
    """The schedule's block search recursed once per loop (a raw RecursionError from
    reorder, fuse, parallel, blockize, get_child_blocks); the build named no function."""
    func = deep_loops(3000)
    assert_structural_equal(from_source(func.script()), func)
    sch = Schedule(func)
    loops = sch.get_loops(sch.get_block("b"))
    sch.reorder(loops[-1], loops[0])
    assert len(sch.get_child_blocks(loops[1])) == 1
    with pytest.raises(pyir.Error, match=r"prim function deep \(pass \w+\): " + TOO_DEEP):
        pyir.build(func)


def test_a_schedule_step_too_deep_is_a_schedule_error_and_changes_nothing():
    func = from_source(textwrap.dedent('''
        from pyir.script import tensor as T

        @T.prim_func
        def f(A: T.Buffer(("n",), "float32")):
            for i in range(n):
                with T.block("b"):
                    vi = T.axis.spatial(n, i)
                    A[vi] = A[vi] + T.float32(1)
        '''))

    def deepen(s):
        if isinstance(s, For):
            extent = s.extent
            for _ in range(3000):
                extent = Binary("add", extent, IntImm(0))
            return dataclasses.replace(s, extent=extent)
    func = rewrite(func, deepen)
    sch = Schedule(func)
    loop, = sch.get_loops(sch.get_block("b"))
    before = sch.mod
    with pytest.raises(ScheduleError, match="split: prim function f: " + TOO_DEEP):
        sch.split(loop, factors=[None, 4])
    assert sch.mod is before


def test_an_expression_too_deep_for_the_parser_names_the_function():
    text = ("from pyir.script import tensor as T\n\n@T.prim_func\n"
            'def f(B: T.Buffer((4,), "float32"), x: T.float32):\n'
            "    B[0] = " + " + ".join(["x"] * 2000) + "\n")
    with pytest.raises(ParseError, match="this is nested too deeply for the parser "
                       r"\(Python's recursion limit\) in function 'f'") as info:
        from_source(text)
    assert info.value.line == 5
