"""End-to-end: lower, generate LLVM IR, JIT with MCJIT, run on numpy arrays."""

import math
import platform
import re

import numpy as np
import pytest

import kernels as K
from jit import Compiled, run
import pyir
from pyir import Error
from pyir.codegen.llvm import codegen
from pyir.codegen.target import Target, TargetError
from pyir.ir import Binary, Buffer, BufferStore, Call, For, IntImm, PrimFunc, StringImm, Var
from pyir.ir import Evaluate, LetStmt
from pyir.schedule import Schedule
from pyir.script import from_source
from pyir.script import tensor as T

DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64", "uint8", "bool"]
SIZES = [1, 13, 1031]
rng = np.random.default_rng(0)


def rand(shape, dtype):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_every_dtype(dtype):
    op = "or" if dtype == "bool" else "add"
    c = Compiled(K.module(K.elementwise(dtype, op=op)))
    for n in SIZES:
        a, b, out = rand(n, dtype), rand(n, dtype), np.zeros(n, dtype)
        assert c("ew", a, b, out) == 0
        np.testing.assert_array_equal(out, (a | b) if dtype == "bool" else (a + b).astype(dtype))


@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (3, 1031)])
@pytest.mark.parametrize("schedule", [True, False])
def test_elementwise_2d_symbolic(shape, schedule):
    c = Compiled(K.module(K.elementwise("float32", ("n", "m"), "mul")),
                 default_schedule=schedule)
    a, b, out = rand(shape, "float32"), rand(shape, "float32"), np.zeros(shape, "float32")
    assert c("ew", a, b, out) == 0
    np.testing.assert_allclose(out, a * b)


def test_parallel_and_vectorized_loops_in_llvm_ir():
    c = Compiled(K.module(K.elementwise("float32", ("n", "m"))))
    assert '@"pyir_parallel_for"' in c.llvm_ir and '@"ew.par0"' in c.llvm_ir
    lanes = Target.from_string("llvm").vector_bits // 32  # the host's widest vectors
    assert f"<{lanes} x float>" in c.llvm_ir
    one_d = Compiled(K.module(K.elementwise("float64", ("n",))))
    assert f"<{lanes // 2} x double>" in one_d.llvm_ir and "pyir_parallel_for" in one_d.llvm_ir
    a, b, out = rand(1031, "float64"), rand(1031, "float64"), np.zeros(1031)
    assert one_d("ew", a, b, out) == 0
    np.testing.assert_allclose(out, a + b)


@pytest.mark.parametrize("shape, pool, inline", [
    ((4, 1000), False, False),            # 4000 iterations: a plain loop, not outlined
    ((3, 4), False, False),
    ((8, 1000), True, False),             # 8000: on the pool
    (("n", "m"), True, True),             # decided at run time
])
def test_a_parallel_loop_with_little_work_runs_inline(shape, pool, inline):
    c = Compiled(K.module(K.elementwise("float32", shape)))
    text = c.llvm_ir
    assert ('call i32 @"pyir_parallel_for"' in text) == pool
    assert ('@"ew.par0"(i64 %' in text) == pool     # the outlined thunk is defined
    assert ('call i32 @"ew.par0"(i64 0' in text) == inline
    assert ("fcmp olt double" in text) == (pool and inline)
    dims = tuple(7 if isinstance(d, str) else d for d in shape)
    a, b, out = rand(dims, "float32"), rand(dims, "float32"), np.zeros(dims, "float32")
    assert c("ew", a, b, out) == 0
    np.testing.assert_array_equal(out, a + b)


TWO_ROWS_SRC = """
from pyir.script import tensor as T

@T.prim_func
def two_rows(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", 4), "float32")):
    for i in T.parallel(n):
        for j in range(m):
            A[i, j] = T.float32(1)
        for j in range(4):
            B[i, j] = T.float32(2)
"""


@pytest.mark.parametrize("source, maxima", [
    ("elementwise", 2),   # max(n, 1) * max(m, 1)
    ("two rows", 3),      # max(n, 1) * max(max(m, 1), 4)
])
def test_a_run_time_work_estimate_takes_no_needless_steps(source, maxima):
    """A count is at least 1 (each extent is), so the estimate of a parallel loop's
    iterations multiplies by no 1 and takes no maximum with 1 of a count (the path through a
    sequence of loops starts at 1); it is checked against the pool's threshold once."""
    func = K.elementwise("float32", ("n", "m")) if source == "elementwise" \
        else from_source(TWO_ROWS_SRC)
    text, _ = codegen(pyir.transform.lower(K.module(func)))
    lines = [ln for ln in text.splitlines() if "double" in ln]
    ops = [re.search(r"= (\w+)", ln).group(1) for ln in lines if " = " in ln]
    assert (ops.count("sitofp"), ops.count("select"), ops.count("fmul")) == (2, maxima, 1)
    assert not [ln for ln in lines if "fmul" in ln and "0x3ff0000000000000" in ln]
    assert sum("fcmp olt double" in ln and "0x40b0000000000000" in ln for ln in lines) == 1
    if source == "two rows":   # inline (3 * 5 iterations) and on the pool (100 * 100)
        c = Compiled(K.module(func))
        for n, m in ((3, 5), (100, 100)):
            a, b = np.zeros((n, m), "float32"), np.zeros((n, 4), "float32")
            assert c("two_rows", a, b) == 0
            assert (a == 1).all() and (b == 2).all()


def test_static_shape_vector_loop_with_tail():
    c = Compiled(K.module(K.elementwise("float32", (5, 37), "sub")))
    a, b, out = rand((5, 37), "float32"), rand((5, 37), "float32"), np.zeros((5, 37), "float32")
    assert c("ew", a, b, out) == 0
    np.testing.assert_allclose(out, a - b)


@pytest.mark.parametrize("n,m,k", [(1, 1, 1), (17, 5, 31), (64, 48, 1009)])
def test_matmul_symbolic(n, m, k):
    a, b, out = rand((n, k), "float32"), rand((k, m), "float32"), np.zeros((n, m), "float32")
    run(K.module(K.matmul()), "matmul", a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_static():
    a, b, out = rand((16, 8), "float64"), rand((8, 24), "float64"), np.zeros((16, 24))
    run(K.module(K.matmul(16, 24, 8, "float64")), "matmul", a, b, out)
    np.testing.assert_allclose(out, a @ b)


@pytest.mark.parametrize("dtype,acc", [("float32", "float32"), ("int8", "int32")])
def test_row_sum(dtype, acc):
    c = Compiled(K.module(K.row_sum(dtype, acc)))
    for shape in [(1, 1), (3, 13), (2, 1500)]:
        x, s = rand(shape, dtype), np.zeros(shape[0], acc)
        assert c("row_sum", x, s) == 0
        np.testing.assert_allclose(s, x.astype(acc).sum(1), rtol=1e-4)


def test_allocated_heap_buffer():
    # Unscheduled: the two loops stay apart, so T is not shrunk to the one element of a
    # fused iteration, and its symbolic size puts it on the heap.
    c = Compiled(K.module(K.scaled_copy_via_temp()), default_schedule=False)
    assert '@"pyir_alloc"' in c.llvm_ir and '@"pyir_free"' in c.llvm_ir
    for n in SIZES:
        a, b = rand(n, "float32"), np.zeros(n, "float32")
        assert c("via_temp", a, b) == 0
        np.testing.assert_allclose(b, a * 2 + 1)


def test_allocated_stack_buffer():
    c = Compiled(K.module(K.allocate_plain(8)))
    assert "alloca [8 x float]" in c.llvm_ir and "pyir_alloc" not in c.llvm_ir
    a, b = rand(29, "float32"), np.zeros(29, "float32")
    assert c("alloc_plain", a, b) == 0
    np.testing.assert_allclose(b, a + np.arange(29) % 8)


def test_if_else():
    a, b = rand(1031, "float32"), np.zeros(1031, "float32")
    run(K.module(K.clamp_if()), "clamp_if", a, b)
    np.testing.assert_allclose(b, np.where(a > 0, a, -3 * a))


def test_failed_entry_condition_returns_its_number():
    c = Compiled(K.module(K.window_sum()))
    (cond,) = c.infos["window"].conditions
    assert "X" in cond.message
    x, y = rand(12, "float32"), np.zeros(10, "float32")
    assert c("window", x, y) == 0
    np.testing.assert_allclose(y, x[:-2] + x[1:-1] + x[2:], rtol=1e-5)
    assert c("window", x[:11].copy(), y) == 1


MATH = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "abs": np.abs,
        "floor": np.floor, "ceil": np.ceil, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "sin": np.sin, "cos": np.cos, "erf": np.vectorize(math.erf),
        "rsqrt": lambda x: 1 / np.sqrt(x)}


@pytest.mark.parametrize("op", sorted(MATH))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math(op, dtype):
    a = (rng.random(37) * 3 + 0.25).astype(dtype)
    b = np.zeros_like(a)
    run(K.module(K.math_call(op, dtype)), f"m_{op}", a, b)
    np.testing.assert_allclose(b, MATH[op](a), rtol=1e-5 if dtype == "float32" else 1e-12)


def test_pow():
    f = K.unary(lambda x: Call("float32", "pow", (x, x)), name="p")
    a = (rng.random(20) + 0.5).astype("float32")
    b = np.zeros_like(a)
    run(K.module(f), "p", a, b)
    np.testing.assert_allclose(b, a ** a, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
@pytest.mark.parametrize("op", ["floordiv", "floormod"])
def test_floor_division_semantics(dtype, op):
    a = rng.integers(-100, 100, 257).astype(dtype)
    b = rng.integers(1, 9, 257).astype(dtype) * rng.choice([-1, 1], 257).astype(dtype)
    out = np.zeros_like(a)
    run(K.module(K.elementwise(dtype, op=op)), "ew", a, b, out)
    np.testing.assert_array_equal(out, a // b if op == "floordiv" else a % b)


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("op", ["floordiv", "floormod"])
def test_integer_division_by_zero_and_minus_one_is_numpys(dtype, op, vectorized):
    """No trap: ``x // 0`` and ``x % 0`` are 0, the smallest integer // -1 wraps, as in
    numpy (the machine's divide would stop the process on both)."""
    info = np.iinfo(dtype)
    edge = [info.min, info.min + 1, -7, -1, 0, 1, 7, info.max] if info.min else \
        [0, 1, 2, 7, info.max - 1, info.max]
    a = np.array([x for x in edge for _ in edge], dtype)
    b = np.array([y for _ in edge for y in edge], dtype)
    a, b = np.tile(a, 3), np.tile(b, 3)
    out = np.full_like(a, 99)
    c = Compiled(K.module(K.elementwise(dtype, op=op)), default_schedule=vectorized)
    assert c("ew", a, b, out) == 0
    with np.errstate(divide="ignore", over="ignore"):
        np.testing.assert_array_equal(out, a // b if op == "floordiv" else a % b)



def test_floor_division_of_a_narrowing_cast():
    """``int32(A[i]) // 4`` of a uint32 ``A`` divides a negative number when ``A[i] >=
    2**31``; its bounds were said >= 0 (cut to int32, not wrapped) and codegen truncated:
    0 for ``2**32 - 1``, not -1."""
    @T.prim_func
    def f(A: T.Buffer((4,), "uint32"), B: T.Buffer((4,), "int32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.cast(A[vi], "int32") // 4

    a = np.array([2**32 - 1, 2**31, 7, 2**32 - 5], "uint32")
    b = np.zeros(4, "int32")
    pyir.build(f)["f"](a, b)
    np.testing.assert_array_equal(b, a.astype("int32") // 4)

NARROW_SRC = """
from pyir.script import tensor as T

@T.prim_func
def ew(A: T.Buffer(("n",), "{d}"), B: T.Buffer(("n",), "{d}"), C: T.Buffer(("n",), "{d}")):
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = {expr}
"""


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("op", ["max", "min", "lt", "ge"])
def test_narrow_integer_comparisons_match_numpy(dtype, op, vectorized):
    """Over the whole range of the dtype: int32 values wrap, so ``b - a >= 0`` says nothing
    of ``a <= b`` (the simplifier once decided ``max(A[i], B[i])`` was ``B[i]``)."""
    info = np.iinfo(dtype)
    edge = [info.min, info.min + 1, -34, -1, 0, 1, 5, info.max - 1, info.max]
    a = np.tile(np.array([x for x in edge for _ in edge], dtype), 3)
    b = np.tile(np.array([y for _ in edge for y in edge], dtype), 3)
    expr = {"max": "T.max(A[vi], B[vi])", "min": "T.min(A[vi], B[vi])",
            "lt": f"T.if_then_else(A[vi] < B[vi], T.{dtype}(1), T.{dtype}(2))",
            "ge": f"T.if_then_else(A[vi] >= B[vi], T.{dtype}(1), T.{dtype}(2))"}[op]
    func = pyir.script.from_source(NARROW_SRC.format(d=dtype, expr=expr))
    out = np.zeros_like(a)
    pyir.build(func, default_schedule=vectorized)["ew"](a, b, out)
    expected = {"max": np.maximum(a, b), "min": np.minimum(a, b),
                "lt": np.where(a < b, 1, 2), "ge": np.where(a >= b, 1, 2)}[op]
    np.testing.assert_array_equal(out, expected)


CAST_SRC = """
from pyir.script import tensor as T

@T.prim_func
def cast(A: T.Buffer(("n",), "{src}"), B: T.Buffer(("n",), "{dst}")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = T.cast(A[vi], "{dst}")
"""


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("src, dst", [("float64", "float16"), ("float16", "float64"),
                                      ("float32", "float16")])
def test_float16_conversions_match_numpy(src, dst, vectorized):
    """float64 -> float16 has no machine instruction: LLVM calls the compiler runtime's
    __truncdfhf2, which the JIT did not know (the call jumped to address 0)."""
    values = [0.5, 1.5, 3.0, 1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -11, 65519.0, 65520.0, 1e-8,
              -2.5, 6e-5]
    with np.errstate(over="ignore"):
        a = np.array(values * 3, src)
        out = np.zeros(a.shape, dst)
        func = pyir.script.from_source(CAST_SRC.format(src=src, dst=dst))
        pyir.build(func, default_schedule=vectorized)["cast"](a, out)
        np.testing.assert_array_equal(out, a.astype(dst))


def test_unrolled_loop():
    n = Var("n")
    A, B = Buffer("A", (n, 4), "float32"), Buffer("B", (n, 4), "float32")
    i, j = Var("i"), Var("j")
    body = For(i, 0, n, "serial", For(j, 0, 4, "unroll",
                                      BufferStore(B, A[i, j] * 3.0, (i, j))))
    a, b = rand((6, 4), "float32"), np.zeros((6, 4), "float32")
    c = Compiled(K.module(PrimFunc("unr", (A, B), body)))
    assert c("unr", a, b) == 0
    np.testing.assert_allclose(b, a * 3)


@pytest.mark.parametrize("level", ["none", "fast", "O1", "O3"])
def test_ir_levels_agree(level):
    a, b, out = rand((9, 33), "float32"), rand((9, 33), "float32"), np.zeros((9, 33), "float32")
    run(K.module(K.elementwise("float32", ("n", "m"))), "ew", a, b, out, level=level)
    np.testing.assert_allclose(out, a + b)


def test_scalar_parameter_and_call_extern():
    n = Var("n")
    A = Buffer("A", (n,), "float32")
    s = Var("s", "float32")
    call = Evaluate(Call("int32", "call_extern", (StringImm("demo.fill"), A[IntImm(0)], s, n)))
    text, _ = codegen(K.module(PrimFunc("ext", (A, s), call)), externs={"demo.fill": "fill"})
    assert 'call i32 @"fill"(ptr' in text and 'declare i32 @"fill"(ptr' in text


def test_explicit_target_and_vector_width():
    t = Target.from_string("llvm -mcpu=znver4 -mattr=+avx512f")
    assert t.cpu == "znver4" and t.vector_bits == 512
    assert Target.from_string("llvm -mcpu=haswell").vector_bits == 256
    assert Target.from_string("llvm -mcpu=x86-64").vector_bits == 128
    assert Target.from_string("llvm -mcpu=skylake-avx512").vector_bits == 512   # implied
    assert Target.from_string("llvm -mcpu=skylake-avx512 -mattr=-avx512f").vector_bits == 256
    host = Target.from_string("llvm")
    assert host.features
    with pytest.raises(TargetError, match="only 'llvm'"):
        Target.from_string("cuda")
    with pytest.raises(Error, match="unknown option"):
        Target.from_string("llvm -O3")


@pytest.mark.parametrize("target", [None, ["llvm"], 3])
def test_a_target_that_is_not_a_string_is_a_type_error(target):
    """target=None was an AttributeError from inside the parsing of the string (a list, a
    TypeError: unhashable); then a TargetError that was no TypeError."""
    with pytest.raises(pyir.ArgumentTypeError, match=r"a target is a string such as 'llvm'"):
        pyir.build(K.module(K.matmul()), target=target)


def test_a_target_string_pyir_cannot_use_is_a_value_error():
    with pytest.raises(ValueError) as info:
        pyir.build(K.module(K.matmul()), target="cuda")
    assert isinstance(info.value, TargetError)


@pytest.mark.parametrize("target, words", [
    ("llvm -mcpu=nonsense", r"CPU 'nonsense' .*'nonsense' is not a recognized processor"),
    ("llvm -mcpu=x86-64 -mattr=-64bit", r"CPU 'x86-64' with features '-64bit' .*64-bit code "
     r"requested on a subtarget that doesn't support it"),
    ("llvm -mattr=+nonsense", r"features '\+nonsense' .*not a recognized feature"),
    ("llvm -mattr=avx2", r"feature 'avx2' must start with \+ \(on\) or - \(off\)"),
    ("llvm -mtriple=foo-bar-baz", r"triple 'foo-bar-baz': No available targets"),
    ("llvm -mtriple=i686-pc-linux-gnu", r"runs the code it compiles in this process"),
])
def test_a_target_llvm_cannot_use_is_a_target_error(target, words):
    """LLVM aborted the process making code for an unknown CPU (after a warning on stderr),
    and for one it knows that cannot run 64-bit code; ignored an unknown feature with a
    warning; asserted on a feature without a sign; a bad triple was a RuntimeError and a
    foreign one crashed the process running its code. Each is tried in a child process."""
    with pytest.raises(TargetError, match=words):
        pyir.build(K.module(K.elementwise()), target=target)


@pytest.mark.parametrize("cpu, found", [
    ("x86-64", set()), ("haswell", {"avx", "avx2", "fma"}),
    ("skylake-avx512", {"avx", "avx2", "fma", "avx512f", "avx512bw"})])
def test_the_child_process_finds_the_vector_features_a_cpu_name_implies(cpu, found):
    from pyir.codegen import target as tg
    assert tg._check_machine(Target.from_string("llvm").triple, cpu, "") == (None, found)


_GRAPH_ADD = """
from pyir.script import graph as R

@R.function
def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")):
    return R.add(x, y)
"""


@pytest.mark.parametrize("target, missing", [
    ("llvm -mcpu=haswell -mattr=+avx512f", "avx512f"),
    ("llvm -mcpu=skylake-avx512", "avx512bw, avx512f")])
def test_code_for_cpu_features_this_machine_lacks_is_not_called(monkeypatch, target, missing):
    """On a machine without AVX-512 (here the host, its AVX-512 features taken away), code
    built for a target that turns it on, or for a CPU whose name implies it, compiles and
    shows, but its functions are refused: calling them would stop the process with an
    illegal instruction (SIGILL). A graph function is not registered either. (The first
    target names an AVX2 CPU: on the host's CPU, ``-mattr=+avx512f`` alone would use every
    AVX-512 feature that CPU's name implies, avx512bw too on a Zen 4.)"""
    from pyir.codegen import target as tg
    cpu, features = tg._host_machine()
    without = ",".join("-" + f[1:] if f[1:].startswith("avx512") else f
                       for f in features.split(","))
    caches = (tg._uses, tg._missing_on_host, tg._parse)
    monkeypatch.setattr(tg, "_host_machine", lambda: (cpu, without))
    for cache in caches:
        cache.cache_clear()
    try:
        lib = pyir.build(K.module(K.elementwise()), target=target, use_cache=False)
        assert lib.missing_features == tuple(missing.split(", "))
        with pytest.raises(Error, match=rf"function 'ew' cannot run on this machine: it was "
                           rf"built for target '.*', whose code uses CPU features this "
                           rf"machine's CPU lacks \({missing}\), and would stop the process "
                           "with an illegal instruction; build for target 'llvm'"):
            lib["ew"]
        assert "ew.par0:" in lib.source("asm")
        pyir.ffi.remove_global_func("main")   # an earlier test's graph function
        graph = pyir.build(from_source(_GRAPH_ADD), target=target, use_cache=False)
        with pytest.raises(Error, match="function 'main' cannot run on this machine"):
            graph["main"]
        assert pyir.ffi.get_global_func("main", allow_missing=True) is None
    finally:
        for cache in caches:
            cache.cache_clear()


def test_the_host_target_is_not_tried_in_a_child_process(monkeypatch):
    """Only targets other than the host's cost a child process (once per process)."""
    from pyir.codegen import target as tg
    host = Target.from_string("llvm")
    tried = []
    monkeypatch.setattr(tg, "_check_machine",
                        lambda *machine: tried.append(machine) or (None, frozenset()))
    tg._parse.cache_clear()
    for text in ("llvm", f"llvm -mcpu={host.cpu}", f"llvm -mcpu={host.cpu} -mattr={host.features}",
                 str(host)):
        assert Target.from_string(text).cpu == host.cpu
    assert tried == []
    Target.from_string("llvm -mcpu=x86-64 -mattr=+avx2")
    assert tried == [(host.triple, "x86-64", "+avx2")]
    tg._parse.cache_clear()


def test_unlowered_function_is_an_error():
    with pytest.raises(Error, match="matmul still has blocks"):
        codegen(K.module(K.matmul()))


def test_static_two_dimensional_alloc_buffer_lives_on_the_stack():
    @T.prim_func
    def via_tile(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32")):
        tmp = T.alloc_buffer((4, 6), "float32")
        for i, j in T.grid(4, 6):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                tmp[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(4, 6):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = tmp[vi, vj] + T.float32(1)

    lib = pyir.build(via_tile, default_schedule=False)  # the nests stay apart: tmp stays whole
    a = rng.standard_normal((4, 6)).astype("float32")
    b = np.zeros_like(a)
    lib["via_tile"](a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)
    assert "alloca [24 x float]" in lib.source("llvm")


def _exp_inputs(dtype):
    info = np.finfo(dtype)
    hi = 89.0 if dtype == "float32" else 710.0
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, hi - 0.3, hi - 0.2, -hi + 1.5, -hi - 15,
               -hi - 16, info.max, -info.max, info.tiny, -1e-30]
    return np.concatenate([rng.uniform(-hi - 20, hi, 20011), rng.standard_normal(3001) * 1e-3,
                           special]).astype(dtype)


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exp_is_vector_code_and_matches_numpy(dtype, vectorized):
    c = Compiled(K.module(K.math_call("exp", dtype)), default_schedule=vectorized)
    assert "llvm.exp" not in c.llvm_ir and "expf" not in c.llvm_ir
    assert ("llvm.fma.v" in c.llvm_ir) == vectorized
    x = _exp_inputs(dtype)
    y = np.empty_like(x)
    assert c("m_exp", x, y) == 0
    with np.errstate(over="ignore"):
        ref = np.exp(x)
    normal = ~(np.abs(ref) < np.finfo(dtype).tiny)  # subnormals have fewer digits
    rtol = 1e-6 if dtype == "float32" else 1e-15
    np.testing.assert_allclose(y[normal], ref[normal], rtol=rtol, atol=0)
    np.testing.assert_allclose(y[~normal], ref[~normal], rtol=0,
                               atol=2 * np.finfo(dtype).smallest_subnormal)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_uses_vector_exp(dtype):
    c = Compiled(K.module(K.math_call("sigmoid", dtype)))
    x = _exp_inputs(dtype)
    y = np.empty_like(x)
    assert c("m_sigmoid", x, y) == 0
    with np.errstate(over="ignore"):   # long double: e**-x does not overflow where it matters
        ref = (1 / (1 + np.exp(-x.astype(np.longdouble)))).astype(dtype)
    normal = ~(np.abs(ref) < np.finfo(dtype).tiny)
    np.testing.assert_allclose(y[normal], ref[normal],
                               rtol=2e-6 if dtype == "float32" else 1e-15, atol=0)
    np.testing.assert_allclose(y[~normal], ref[~normal], rtol=0,
                               atol=2 * np.finfo(dtype).smallest_subnormal)


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tanh_is_inline_code_and_matches_numpy(dtype, vectorized):
    c = Compiled(K.module(K.math_call("tanh", dtype)), default_schedule=vectorized)
    assert "llvm.tanh" not in c.llvm_ir and "tanhf" not in c.llvm_ir
    x = np.concatenate([_exp_inputs(dtype), rng.standard_normal(5003).astype(dtype),
                        np.array([0.35, -0.35, 0.3499999, 20.0, -400.0], dtype)])
    y = np.empty_like(x)
    assert c("m_tanh", x, y) == 0
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-6 if dtype == "float32" else 1e-15,
                               atol=0)
    assert np.signbit(y[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_is_inline_code_within_one_ulp(dtype, vectorized):
    """``T.log`` is inline vector code (``llvm.log`` was one libm call per lane: a row of
    log_softmax ran 6x slower than numpy), within one ulp of the exact logarithm from the
    subnormals to the largest float, and right at 0, -0, 1, infinities, negatives and NaN."""
    c = Compiled(K.module(K.math_call("log", dtype)), default_schedule=vectorized)
    assert "llvm.log" not in c.llvm_ir and "logf" not in c.llvm_ir
    assert ("llvm.fma.v" in c.llvm_ir) == vectorized
    info = np.finfo(dtype)
    top = math.log(float(info.max))
    x = np.concatenate([np.exp(rng.uniform(-top, top, 20011)),
                        1 + rng.standard_normal(3001) * 1e-4,
                        rng.uniform(0, 1, 1001) * info.tiny,
                        [info.max, info.tiny, info.smallest_subnormal, math.sqrt(2), 0.5, 1.0]])
    x = x.astype(dtype)
    y = np.empty_like(x)
    assert c("m_log", x, y) == 0
    exact = np.log(x.astype(np.longdouble))
    ulps = np.abs(y - exact) / np.spacing(np.abs(exact.astype(dtype)))
    assert ulps.max() <= 1, x[ulps.argmax()]
    special = np.array([0.0, -0.0, np.inf, -np.inf, -1.0, -info.tiny, np.nan], dtype)
    out = np.empty_like(special)
    assert c("m_log", special, out) == 0
    np.testing.assert_array_equal(out, [-np.inf, -np.inf, np.inf] + [np.nan] * 4)


@pytest.mark.parametrize("op, ref", [
    ("exp", np.exp), ("log", np.log), ("tanh", np.tanh),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("sqrt", np.sqrt)])
def test_float16_math_is_vector_code_in_float32(op, ref):
    """float16 exp, log, tanh, sigmoid and sqrt are float32 code between two conversions
    (LLVM promoted its float16 intrinsics one lane at a time, exp, log and tanh through a
    libm call each: tanh ran 37x slower than numpy's), within one float16 ulp of the exact
    value, subnormal and infinite results included."""
    c = Compiled(K.module(K.math_call(op, "float16")))
    assert not re.search(r'@"llvm\.\w+\.(v\d+)?f16"', c.llvm_ir)
    x = np.concatenate([rng.uniform(-12, 12, 4001), rng.uniform(0, 3, 2001),
                        [0.0, -0.0, 11.1, -17.0, 65504.0, 6e-8, np.inf, -np.inf, np.nan]])
    x = x.astype("float16")
    y = np.empty_like(x)
    assert c(f"m_{op}", x, y) == 0
    with np.errstate(all="ignore"):
        exact = ref(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(y), np.isnan(exact))
    finite = np.isfinite(exact) & (np.abs(exact) <= 65504)
    assert (np.isinf(y) == ~finite)[~np.isnan(exact)].all()
    ulps = np.abs(y[finite] - exact[finite]) / np.spacing(np.abs(exact[finite]).astype("float16"))
    assert ulps.max() <= 1


def test_vector_accesses_of_allocated_buffers_are_aligned():
    """Buffers allocated by the function are 64-byte aligned: whole-vector accesses at
    multiples of the vector length say so to LLVM; parameters only promise their element
    size."""
    lanes = Target.from_string("llvm").vector_bits // 32
    vt = f"<{min(lanes, 16)} x float>"
    sch = Schedule(K.module(K.scaled_copy_via_temp(64)))
    for name in ("T", "B"):
        (i,) = sch.get_loops(sch.get_block(name))
        sch.vectorize(sch.split(i, factors=[None, 16])[1])
    c = Compiled(sch.mod, default_schedule=False)
    ir_text = c.llvm_ir
    aligned = min(64, 4 * min(lanes, 16))
    assert re.search(rf"store {vt} %\S+, ptr %\S+, align {aligned}$", ir_text, re.MULTILINE)
    assert re.search(rf"load {vt}, ptr %\S+, align {aligned}$", ir_text, re.MULTILINE)
    assert re.search(rf"load {vt}, ptr %\S+, align 4$", ir_text, re.MULTILINE)  # A
    a, out = rand(64, "float32"), np.zeros(64, "float32")
    assert c("via_temp", a, out) == 0
    np.testing.assert_array_equal(out, a * 2 + 1)


def test_only_contiguous_varying_accesses_run_masked():
    """Masked vector code covers loads and stores whose index moves by one per lane; a
    gather, a store to one place, a varying let or an integer division by a variable keeps
    the loop as vector loop plus scalar tail."""
    from pyir.codegen.vectorize import can_mask
    n, j, x = Var("n"), Var("j"), Var("x")
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
    store = BufferStore(B, A[j] * 2.0, (j,))
    assert can_mask(store, j)
    assert not can_mask(BufferStore(B, A[j * 2], (j,)), j)            # gather
    assert not can_mask(BufferStore(B, A[j], (IntImm(0),)), j)        # one place
    assert not can_mask(LetStmt(x, j + 1, BufferStore(B, A[x], (j,))), j)
    Q = Buffer("Q", (n,), "int32")
    assert not can_mask(BufferStore(Q, Binary("floordiv", Q[j], Q[IntImm(0)]), (j,)), j)
    assert can_mask(BufferStore(Q, Binary("floordiv", Q[j], IntImm(2, "int32")), (j,)), j)


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_a_varying_choice_between_contiguous_reads_is_masked_vector_code(dtype):
    """P[i] = X[i - 1] for 1 <= i <= n, else P[i] if C[i], else 0 (a pad, a masked update),
    default-scheduled: the vectorized loop was left to LLVM with a vectorize hint, which it
    could not follow (the reads are conditional) -- a scalar loop, and "loop not
    vectorized" on stderr at every build. Each side's contiguous reads are now masked
    loads of the lanes that choose it: vector code, and no read of X[-1] or X[n]."""
    src = f"""from pyir.script import tensor as T

@T.prim_func
def pad(X: T.Buffer(("n",), "{dtype}"), C: T.Buffer(("n + 2",), "bool"),
        P: T.Buffer(("n + 2",), "{dtype}")):
    for i in range(n + 2):
        with T.block("P"):
            vi = T.axis.remap("S", [i])
            P[vi] = T.if_then_else(vi >= 1 and vi <= n, X[vi - 1],
                                   T.if_then_else(C[vi], P[vi], T.{dtype}(0)))
"""
    lib = pyir.build(pyir.script.from_source(src), use_cache=False)
    text = lib.source("llvm")
    assert "llvm.masked.load" in text and "vectorize.enable" not in text
    for n in (1, 16, 17, 1000):
        x, c, p = rand(n, dtype), rand(n + 2, "bool"), rand(n + 2, dtype)
        want = np.where(c, p, np.zeros_like(p))
        want[1:n + 1] = x
        lib["pad"](x, c, p)
        np.testing.assert_array_equal(p, want)


def test_a_choice_between_strided_reads_is_left_to_llvm_without_a_hint(capfd):
    """O[i] = C[i] ? A[n - 1 - i] : O[i] (a reversed read on one side), vectorized: no
    masked load covers the reversed read, and LLVM, told to vectorize the scalar loop,
    could not either and printed "loop not vectorized" on stderr at every build. The loop
    is now left to LLVM without the hint."""
    src = """from pyir.script import tensor as T

@T.prim_func
def flip(A: T.Buffer(("n",), "float32"), C: T.Buffer(("n",), "bool"),
         O: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("O"):
            vi = T.axis.remap("S", [i])
            O[vi] = T.if_then_else(C[vi], A[n - 1 - vi], O[vi])
"""
    lib = pyir.build(pyir.script.from_source(src), use_cache=False)
    assert "loop not vectorized" not in capfd.readouterr().err
    assert "vectorize.enable" not in lib.source("llvm")
    a, c, o = rand(37, "float32"), rand(37, "bool"), rand(37, "float32")
    want = np.where(c, a[::-1], o)
    lib["flip"](a, c, o)
    np.testing.assert_array_equal(o, want)


def test_nested_unrolling_stays_within_a_budget():
    """Unrolling the two inner loops of a 64 x 96 x 48 matmul: codegen unrolls the
    reduction (48 copies) and leaves the 96-iteration loop around it a loop -- asking LLVM
    to unroll a loop nest fully made 300,000 instructions and a build that did not finish."""
    sch = Schedule(K.module(K.matmul(64, 96, 48)))
    i, j, r = sch.get_loops(sch.get_block("C"))
    sch.unroll(j)
    sch.unroll(r)
    c = Compiled(sch.mod, default_schedule=False)
    assert "unroll.full" not in c.llvm_ir
    a, b, out = rand((64, 48), "float32"), rand((48, 96), "float32"), np.zeros((64, 96), "float32")
    assert c("matmul", a, b, out) == 0
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


def test_unrolling_a_loop_around_loops_stays_within_a_budget():
    """j of a symbolic n x m split by [64, 8, None], j_0 unrolled: 64 copies of the j_1 loop
    around the j_2 loop, which LLVM unrolled 8 times more after vectorizing j_2 -- 512
    vectorized loops in one function, and a build of minutes. A loop holding loops is copied
    at most 4 times; this one stays a loop."""
    sch = Schedule(K.module(K.elementwise("float32", ("n", "m"), "mul")))
    i, j = sch.get_loops(sch.get_block("C"))
    j0, _, _ = sch.split(j, [64, 8, None])
    sch.unroll(j0)
    text, _ = codegen(pyir.transform.lower(sch.mod, default_schedule=False), Target.from_string(
        "llvm"))
    assert text.count("fmul") == 1
    c = Compiled(sch.mod, default_schedule=False)
    for n, m in ((3, 1), (2, 511), (2, 1000)):
        a, b, out = rand((n, m), "float32"), rand((n, m), "float32"), np.zeros((n, m), "float32")
        assert c("ew", a, b, out) == 0
        np.testing.assert_allclose(out, a * b, rtol=1e-6)


def test_a_loop_of_symbolic_extent_asked_to_unroll_is_unrolled_by_llvm(capfd):
    """It carried LLVM's unroll hint in a unit LLVM's loop passes do not run on: every
    build printed "warning: ... loop not unrolled" on stderr. It is now unrolled 4 times,
    with a remainder loop."""
    sch = Schedule(K.module(K.elementwise("float32", ("n",), "mul")))
    sch.unroll(sch.get_loops(sch.get_block("C"))[0])
    lib = pyir.build(sch.mod, default_schedule=False, use_cache=False)
    assert "loop not unrolled" not in capfd.readouterr().err
    asm = lib.source("asm")
    assert len(re.findall(r"\bv?mulss\b", asm)) >= 4 + 1
    for n in (0, 1, 5, 13):
        a, b, out = rand((n,), "float32"), rand((n,), "float32"), np.zeros(n, "float32")
        lib["ew"](a, b, out)
        np.testing.assert_array_equal(out, a * b)


def test_a_constant_loop_around_a_long_nest_is_not_unrolled_by_llvm():
    """O[i, j] = 3 over 33 x 1000, unscheduled: LLVM vectorized and fully unrolled the row
    loop, then the 33 rows around it -- 2,063 vector stores in one block and 12 s of machine
    code. The row loop is now marked not to unroll (LLVM may still unroll one row: 125
    stores of 8 lanes where it prefers 256-bit vectors, as on Intel's AVX-512 cores); the
    loops around a short nest (a 3 x 3 window) stay LLVM's to unroll and vectorize."""
    src = """from pyir.script import tensor as T

@T.prim_func
def fill(O: T.Buffer((33, 1000), "int32")):
    for i, j in T.grid(33, 1000):
        with T.block("O"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = T.int32(3)
"""
    lib = pyir.build(pyir.script.from_source(src), default_schedule=False, use_cache=False)
    assert lib.source("llvm").count("llvm.loop.unroll.disable") == 1
    assert lib.source("llvm-opt").count("store ") <= 1000 // 8 + 8
    out = np.zeros((33, 1000), "int32")
    lib["fill"](out)
    assert (out == 3).all()
    window = pyir.script.from_source("""from pyir.script import tensor as T

@T.prim_func
def window(O: T.Buffer((64, 3, 3), "int32")):
    for i, j, k in T.grid(64, 3, 3):
        with T.block("O"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            O[vi, vj, vk] = T.int32(3)
""")
    lib = pyir.build(window, default_schedule=False, use_cache=False)
    assert "unroll.disable" not in lib.source("llvm")


def test_a_constant_loop_around_symbolic_loops_is_not_unrolled_by_llvm():
    """A copy through a temporary over (17, 17, n), default-scheduled: the fused row loop
    runs in parallel, and LLVM fully unrolled each 17-iteration loop around the vector
    loop over n and its tail -- 204 loops in the optimized module, 2-3 s to build. The
    17-iteration loops now stay loops."""
    src = """from pyir.script import tensor as T

@T.prim_func
def copy2(A: T.Buffer((17, 17, "n"), "float32"), O: T.Buffer((17, 17, "n"), "float32")):
    Tmp = T.alloc_buffer((17, 17, "n"), "float32")
    for i0, i1, i2 in T.grid(17, 17, n):
        with T.block("T"):
            v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
            Tmp[v0, v1, v2] = A[v0, v1, v2] + T.float32(1)
    for i0, i1, i2 in T.grid(17, 17, n):
        with T.block("O"):
            v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
            O[v0, v1, v2] = Tmp[v0, v1, v2] * T.float32(2)
"""
    lib = pyir.build(pyir.script.from_source(src), use_cache=False)
    assert lib.source("llvm-opt").count("!llvm.loop") < 40
    for n in (0, 1, 37):
        a, out = rand((17, 17, n), "float32"), np.zeros((17, 17, n), "float32")
        lib["copy2"](a, out)
        np.testing.assert_allclose(out, (a + 1) * 2, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_sums_reassociated_keep_their_wrapping_value(dtype):
    """Codegen reorders integer sums (outer-loop terms first, the constant last): the value,
    wrapping included, is the one numpy computes in the written order."""
    src = f'''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n", 4), "{dtype}"), B: T.Buffer(("n", 4), "{dtype}")):
    for i, j in T.grid(n, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] - T.{dtype}(100) + T.cast(vi, "{dtype}") * T.{dtype}(3) \\
                - (A[vi, vj] + T.{dtype}(120)) + T.cast(vj, "{dtype}") + T.{dtype}(127)
'''
    lib = pyir.build(pyir.script.from_source(src))
    a = rand((37, 4), dtype)
    out = np.zeros_like(a)
    lib["f"](a, out)
    i = np.arange(37, dtype=dtype)[:, None]
    j = np.arange(4, dtype=dtype)[None, :]
    with np.errstate(over="ignore"):
        want = (a - dtype_t(dtype, 100) + i * dtype_t(dtype, 3) - (a + dtype_t(dtype, 120))
                + j + dtype_t(dtype, 127))
    np.testing.assert_array_equal(out, want.astype(dtype))


def dtype_t(dtype, value):
    return np.array(value).astype(dtype)[()]


@pytest.mark.parametrize("opt_level", ["fast", "O3"])
def test_optimized_module_has_one_function_per_prim_function_and_parallel_loop(opt_level):
    """The impl is inlined into the exported wrapper and a parallel loop's body into its
    thunk: machine code is generated for two functions, not four."""
    lib = pyir.build(K.module(K.elementwise("float32", ("n",))), opt_level=opt_level,
                     use_cache=False)
    defined = re.findall(r'^define .*@"?([\w.]+)"?\(', lib.source("llvm-opt"), re.M)
    assert sorted(defined) == ["ew.par0", "pyir.entry.ew"]
    a = rand(5000, "float32")
    out = np.zeros(5000, "float32")
    lib["ew"](a, a, out)
    np.testing.assert_allclose(out, a + a)


@pytest.mark.parametrize("opt_level", ["fast", "O3"])
def test_row_pointers_split_from_signed_and_offset_indices(opt_level):
    """Indices with constant offsets and negated terms (a reversed row) are split into a
    row pointer before the inner loop and the rest; the values are numpy's."""
    src = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", "m"), "float32")):
    for i, j in T.grid(n, m - 1):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj + 1] = A[vi, vj + 1] - A[vi, m - 1 - vj] * T.float32(2)
'''
    lib = pyir.build(pyir.script.from_source(src), opt_level=opt_level, default_schedule=False)
    for shape in [(3, 2), (5, 17), (4, 64)]:
        a = rand(shape, "float32")
        out = np.zeros(shape, "float32")
        lib["f"](a, out)
        want = np.zeros(shape, "float32")
        want[:, 1:] = a[:, 1:] - a[:, ::-1][:, :-1] * 2
        np.testing.assert_allclose(out, want, rtol=1e-6)
    assert re.search(r'getelementptr float, ptr %"[\w.]+", i64 %"[\w.]+"\n', lib.source("llvm"))


def _tail_tile(width=16, extent_most=16, second=None, by_row=False):
    """``L = alloc(6 * width)``; ``for i: for j in T.vectorized(min(most, n - j0 * 16)):
    L[i * width + j] = L[i * width + j] + 1`` (``by_row``: ``n - i * 16``) and an optional
    ``second`` statement."""
    from pyir.ir import Allocate, SeqStmt
    from pyir.ir.expr import min_
    n, j0, i, j = Var("n"), Var("j0"), Var("i"), Var("j")
    L = Buffer("L", (6 * width,), "float32", scope="local")
    extent = min_(IntImm(extent_most), n - (i if by_row else j0) * 16)
    row = For(i, 0, 6, "serial", For(j, 0, extent, "vectorized", BufferStore(
        L, L[i * width + j] + 1.0, (i * width + j,))))
    body = row if second is None else SeqStmt((row, second(L, n, j0)))
    return Allocate(L, body), L


def test_a_tail_tile_is_accessed_in_whole_rows():
    """Every access to the tile is lane j of row i under one extent <= 16: masked vector
    code may load and store whole rows of it (elements past the extent are only touched
    by lanes masked off)."""
    from pyir.codegen.vectorize import padded_rows
    alloc, _ = _tail_tile()
    assert padded_rows(alloc, lambda e: 16) == 16
    assert padded_rows(alloc, lambda e: None) is None           # extent not bounded


def test_a_tile_read_past_the_extent_is_not_padded():
    from pyir.codegen.vectorize import padded_rows
    from pyir.ir.expr import min_
    k = Var("k")
    cases = {
        "a row narrower than the extent": _tail_tile(width=12)[0],
        "an extent over the row": _tail_tile(extent_most=32)[0],
        "a read outside a vectorized loop": _tail_tile(second=lambda L, n, j0: BufferStore(
            L, L[IntImm(5)], (IntImm(0),)))[0],
        "a loop over the whole row": _tail_tile(second=lambda L, n, j0: For(
            k, 0, 16, "vectorized", BufferStore(L, L[k] * 2.0, (k,))))[0],
        "another extent": _tail_tile(second=lambda L, n, j0: For(
            k, 0, min_(IntImm(16), n - j0 * 8), "vectorized", BufferStore(L, L[k] * 2.0,
                                                                           (k,))))[0],
        "an extent that changes inside": _tail_tile(by_row=True)[0],
    }
    for what, alloc in cases.items():
        assert padded_rows(alloc, lambda e: 16 if "over" not in what else 32) is None, what


def test_the_symbolic_matmul_stores_its_tail_tiles_unmasked():
    """Masked stores go to C (and the packed copy of B), none to a register tile."""
    from test_builder import _matmul_ir
    text = _matmul_ir(None, tile=(6, 16))
    tiles = {m.group(1) for m in re.finditer(r'(%"[\w.]+") = alloca \[\d+ x float\]', text)}
    assert tiles
    into = {}
    for m in re.finditer(r'(%"[\w.]+") = getelementptr (?:inbounds )?float, ptr (%"[\w.]+")',
                         text):
        into[m.group(1)] = into.get(m.group(2), m.group(2))
    stored = re.findall(r"llvm\.masked\.store[^(]*\(<[^>]*> %\S+, ptr (%\S+),", text)
    assert stored and not [p for p in stored if into.get(p.rstrip(","), p) in tiles]


@pytest.mark.parametrize("tile", [(6, 16), (7, 32)])
def test_symbolic_register_tiles_with_tails_match_numpy(tile):
    """The tail tiles of the symbolic matmul (rows and columns) at sizes around the tile:
    only a partial row of tiles (64, 96), only a partial column (105 with 7 x 32), both,
    neither (224)."""
    from test_builder import _bench_matmul
    m = _bench_matmul()
    lib = pyir.build(m.schedule_matmul(m.matmul_func(None), tile=tile).mod, opt_level="fast")
    for n in (1, 5, 17, 37, 64, 96, 100, 105, 129, 224):
        a, b = rand((n, n), "float32"), rand((n, n), "float32")
        c = np.full((n, n), np.nan, np.float32)
        lib["matmul"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86 target")
def test_symbolic_register_tiles_with_tails_match_numpy_with_avx2():
    """The same with AVX2 (6 x 16 tile), where a tail vector whose lanes are all in runs
    unmasked and masks take vmaskmov (see `masked_vectors`)."""
    from test_builder import _bench_matmul
    target = "llvm -mcpu=haswell -mattr=+avx2,+fma"
    if not all(Target.from_string("llvm").has_feature(f) for f in ("avx2", "fma")):
        pytest.skip("this host cannot run AVX2 code")
    m = _bench_matmul()
    lib = pyir.build(m.schedule_matmul(m.matmul_func(None), tile=(6, 16)).mod, target=target,
                     opt_level="fast")
    for n in (1, 7, 16, 37, 48, 53):
        a, b = rand((n, n), "float32"), rand((n, n), "float32")
        c = np.full((n, n), np.nan, np.float32)
        lib["matmul"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_the_emitter_scope_records_loops_and_lets_when_asked():
    """Codegen's LazyScope records a loop or let only when a question is asked inside it,
    all of the open ones then, outer first (none for a question without variables); the
    answers are those of recording each at its start, and a loop's facts end with it."""
    from pyir.codegen.emit_stmt import LazyScope
    from pyir.ir.expr import min_
    n, i, x = Var("n"), Var("i"), Var("x")
    scope = LazyScope()
    with scope.loop(i, IntImm(0), IntImm(16)):
        with scope.let(x, min_(IntImm(8), n - i)):
            assert scope._scope.const_bound(i) == (None, None)      # nothing asked yet
            assert scope.const_bound(x + i) == (None, 23)
    with scope.loop(i, IntImm(0), n):
        assert scope.const_bound(IntImm(32)) == (32, 32)            # needs no facts ...
        assert scope._scope.const_bound(n) == (None, None)          # ... so none recorded
        assert scope.const_bound(n) == (1, None)                    # n >= 1 inside
    assert scope.const_bound(n) == (None, None)


def test_a_scope_snapshot_keeps_the_loops_open_where_it_was_taken():
    """An outlined function is emitted after its caller (`ModuleContext.defer`): its scope is
    a snapshot of the caller's open loops and lets, answering as they did, whatever the
    caller's scope does afterwards."""
    from pyir.codegen.emit_stmt import LazyScope
    from pyir.ir.expr import min_
    n, i, x = Var("n"), Var("i"), Var("x")
    scope = LazyScope()
    with scope.loop(i, IntImm(0), IntImm(16)):
        assert scope.const_bound(i) == (0, 15)                      # entered before the copy
        with scope.let(x, min_(IntImm(8), n - i)):
            later = scope.snapshot()
    assert scope.const_bound(x + i) == (None, None)
    assert later.const_bound(x + i) == (None, 23)
    assert later.const_bound(i) == (0, 15)


def test_codegen_leaves_no_llvm_ir_objects_for_the_cyclic_collector():
    """llvmlite's IR objects form cycles (a block lists its instructions, each names the block
    as its parent; a loop's phi and its increment use each other): codegen breaks them once
    the text is printed, so that reference counting frees the instructions when codegen
    returns, not the next collection (which took 4 % of a matmul build)."""
    import gc

    from llvmlite import ir
    mod = pyir.transform.lower(K.module(K.elementwise("float32", ("n", "m"))))
    gc.collect()
    gc.disable()
    try:
        codegen(mod, "llvm")
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        cyclic = [o for o in gc.garbage if isinstance(o, (ir.Instruction, ir.Block))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert cyclic == []


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86 targets")
@pytest.mark.parametrize("target, plain, masked", [
    # AVX-512: a tail vector is masked only (a mask costs nothing there); main: 1 vector
    ("llvm -mcpu=znver4 -mattr=+avx512f,+avx512bw,+avx512vl,+avx2,+fma", 1, 1),
    # AVX2: a tail vector whose lanes are all in runs unmasked; main: 2 vectors, tail: 2
    # vectors as plain or masked
    ("llvm -mcpu=haswell -mattr=+avx2,+fma", 2 + 2, 2),
])
def test_a_symbolic_split_tail_is_masked_vector_code(target, plain, masked):
    sch = Schedule(K.module(K.elementwise("float32", ("n",))))
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.vectorize(sch.split(i, factors=[None, 16])[1])
    c = Compiled(sch.mod, target=target, default_schedule=False)
    vt = "<16 x float>" if "avx512f" in target else "<8 x float>"
    assert len(re.findall(rf"^  store {vt} ", c.llvm_ir, re.MULTILINE)) == plain
    assert c.llvm_ir.count('call void @"llvm.masked.store.') == masked
    # the masks compare 32-bit lane numbers (0 < extent <= 16 where one is used)
    assert re.search(rf"icmp slt {vt.replace('float', 'i32')} ", c.llvm_ir)
    assert not re.search(r"icmp \w+ <\d+ x i64> ", c.llvm_ir)
    host = Target.from_string("llvm")
    if not all(host.has_feature(f.lstrip("+")) for f in target.split("-mattr=")[1].split(",")):
        return   # this host cannot run it
    for n in (1, 15, 16, 17, 40, 1031):
        a, b, out = rand(n, "float32"), rand(n, "float32"), np.zeros(n, "float32")
        assert c("ew", a, b, out) == 0
        np.testing.assert_array_equal(out, a + b)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86 targets")
def test_an_avx512_tail_of_two_vectors_takes_one_branch():
    """With AVX-512, a split tail of up to 2 vectors runs both under one ``extent > 0``
    branch, masked, even when no lane of the second is below the extent (it then changes
    nothing): no branch per vector, whose blocks cost LLVM's instruction selection."""
    target = "llvm -mcpu=znver4 -mattr=+avx512f,+avx512bw,+avx512vl,+avx2,+fma"
    sch = Schedule(K.module(K.elementwise("float32", ("n",))))
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.vectorize(sch.split(i, factors=[None, 32])[1])
    c = Compiled(sch.mod, target=target, default_schedule=False)
    assert c.llvm_ir.count('call void @"llvm.masked.store.') == 2
    guards = re.findall(r"icmp sgt i64 %\S+, (\d+)", c.llvm_ir)
    assert guards == ["0"]
    host = Target.from_string("llvm")
    if not all(host.has_feature(f.lstrip("+")) for f in target.split("-mattr=")[1].split(",")):
        return   # this host cannot run it
    for n in (1, 5, 16, 17, 31, 32, 33, 47, 48, 1031):
        a, b = rand(n + 40, "float32"), rand(n + 40, "float32")
        out = np.full(n + 40, np.nan, "float32")
        assert c("ew", a[:n], b[:n], out[:n]) == 0
        np.testing.assert_array_equal(out[:n], a[:n] + b[:n])
        assert np.isnan(out[n:]).all()      # nothing written past the end


def test_glue_is_compiled_without_optimization():
    """An entry whose work all runs in an outlined parallel loop only unpacks, checks and
    launches: it is compiled with optnone (its optimized machine code cost LLVM more time
    than the loop's). The loop's thunk, where the body computes, is optimized, and so is an
    entry that computes itself."""
    def defines(lib):
        return dict(re.findall(r'^define [^@]*@"([\w.]+)"\([^)]*\)(.*)$', lib.source("llvm"),
                               re.M))

    module = K.module(K.elementwise("float32", ("n",)))
    par = pyir.build(module, use_cache=False)
    assert defines(par) == {"ew.impl": " alwaysinline", "pyir.entry.ew": " noinline optnone",
                            "ew.par0.body": " alwaysinline", "ew.par0": ""}
    serial = pyir.build(module, default_schedule=False, use_cache=False)
    assert "optnone" not in serial.source("llvm")
    for lib in (par, serial):
        a = rand(20000, "float32")
        out = np.zeros(20000, "float32")
        lib["ew"](a, a, out)
        np.testing.assert_array_equal(out, a + a)
