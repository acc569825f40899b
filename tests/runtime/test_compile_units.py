"""Compile units: `codegen_units` cuts a module into LLVM modules of their own (a split
loop's versions outlined), `JitEngine` compiles them on two threads and links them, and
what shows, exports and links kernel IR sees every unit."""

import ctypes
import importlib.util
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import pyir
from pyir import transform
from pyir.codegen import llvm as llvm_codegen
from pyir.codegen.compile import parse
from pyir.codegen.target import Target
from pyir.runtime import engine
from pyir.script import tensor as T

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "matmul.py"
_spec = importlib.util.spec_from_file_location("bench_matmul", _PATH)
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)


def _matmul(parallel=True):
    return M.schedule_matmul(M.matmul_func(None), parallel=parallel).mod


def _check(lib, n):
    M.check(lib, "matmul", n, seed=n)


def _defined(text):
    return re.findall(r'^define [^@]*@"?([\w.]+)"?\(', text, re.MULTILINE)


def test_matmul_units_are_modules_of_their_own():
    """The function with its wrapper (generated first), the packing loop's thunk, the
    thunk of the loop over groups of panels (with the row tiles and the panels of a group,
    at least `UNIT_INSTRUCTIONS`), and the tile's main and tail versions are a unit each;
    every unit parses alone, defines what no other unit defines and declares what it calls
    in the others. (Made for an AVX-512 target, whose vectors the 32-column tile fills: the
    IR text is the same on any host.)"""
    units = []
    llvm_codegen.codegen_units(transform.lower(_matmul()), units.append,
                               "llvm -mcpu=znver4 -mattr=+avx512f,+avx512bw,+avx512vl,+avx2,+fma")
    defined = [_defined(u) for u in units]
    assert defined == [["matmul.impl", "pyir.entry.matmul"],
                       ["matmul.par0.body", "matmul.par0"],
                       ["matmul.par1.body", "matmul.par1"],
                       ["matmul.split0.main"],
                       ["matmul.split0.tail"]]
    for text in units:
        parse(text)
    for name in ("matmul.par0", "matmul.par1"):
        assert re.search(rf'^declare i32 @"{re.escape(name)}"\(', units[0], re.MULTILINE)
    for name in ("matmul.split0.main", "matmul.split0.tail"):
        assert re.search(rf'^declare i32 @"{re.escape(name)}"\(', units[2], re.MULTILINE)
    assert not re.search(r'^declare i32 @"matmul.split0.tail"', units[3], re.MULTILINE)
    masked = re.compile(r"call [^\n]*@\"llvm\.masked\.")
    assert not masked.search(units[3]) and masked.search(units[4])


def test_a_unit_carries_only_the_loop_hints_it_uses():
    """The tile's k loop asks LLVM to unroll it (`pyir.codegen.emit_stmt.TILE_LOOP_UNROLL`
    times); only its unit defines that hint, and every unit defines the metadata it refers
    to and no other: another unit's hint brought the tail's unit LLVM's loop unroller,
    which unrolled its unasked loops too (4.4 -> 9.0 ms of LLVM's time)."""
    from pyir.codegen.emit_stmt import TILE_LOOP_UNROLL
    units = []
    llvm_codegen.codegen_units(transform.lower(_matmul()), units.append,
                               "llvm -mcpu=znver4 -mattr=+avx512f,+avx512bw,+avx512vl,+avx2,+fma")
    hint = f'!"llvm.loop.unroll.count", i32 {TILE_LOOP_UNROLL}'
    assert [hint in u for u in units] == [False, False, False, True, False]
    for text in units:
        code = "\n".join(line for line in text.splitlines() if not line.startswith("!"))
        definitions = dict(re.findall(r"^(!\d+) = (.*)$", text, re.MULTILINE))
        reached, todo = set(), re.findall(r"!\d+", code)
        while todo:
            ref = todo.pop()
            if ref not in reached:
                reached.add(ref)
                todo += re.findall(r"!\d+", definitions[ref])
        assert reached == set(definitions)
        parse(text)


def test_one_module_defines_what_the_units_define():
    text, _ = llvm_codegen.codegen(transform.lower(_matmul()))
    units = []
    llvm_codegen.codegen_units(transform.lower(_matmul()), units.append)
    assert sorted(_defined(text)) == sorted(sum((_defined(u) for u in units), []))
    assert "declare i32 @\"matmul.split0" not in text


@pytest.mark.parametrize("threads", ["two", "one"])
def test_units_compiled_on_one_or_two_threads_compute_the_same(monkeypatch, threads):
    if threads == "one":
        monkeypatch.setattr(engine, "_background_thread", lambda: None)
    lib = pyir.build(_matmul(), opt_level="fast", use_cache=False)
    for n in (70, 33, 7):
        _check(lib, n)


def test_the_engine_takes_its_own_empty_module_from_the_object_cache(monkeypatch):
    """MCJIT asks the object cache for its own (empty) module's code at every link, and
    gets the object code made once per target, not a machine-code pipeline of its own."""
    asked = []
    real = engine._empty_object
    monkeypatch.setattr(engine, "_empty_object", lambda target: asked.append(target)
                        or real(target))
    for _ in range(2):
        lib = pyir.build(_matmul(), opt_level="fast", use_cache=False)
        _check(lib, 33)
    assert len(asked) == 2 and asked[0] == asked[1]
    assert real(asked[0]) is real(asked[1]) and real(asked[0])[:4] == b"\x7fELF"


def test_only_units_of_glue_get_machine_code_without_optimization():
    """The entry unit of a kernel whose work is all in outlined loops (argument checks,
    allocation, launches: `optnone`) and the unit of a thunk that only loops over tiles and
    calls their versions go through LLVM's O0 machine-code pipeline; every unit with code
    that computes, through O3."""
    from pyir.codegen.compile import machine_level
    units = []
    llvm_codegen.codegen_units(transform.lower(_matmul()), units.append)
    assert [machine_level(u) for u in units] == [0, 3, 0, 3, 3]
    assert "optnone" in units[0] and "optnone" in units[2]
    assert "define i32 @\"matmul.split0.main\"" in units[3]
    glue = 'define i32 @"f"(ptr %"s") noinline optnone\n{\nentry:\n  ret i32 0\n}\n'
    inlined = 'define internal i32 @"g"() alwaysinline\n{\nentry:\n  ret i32 0\n}\n'
    hot = 'define i32 @"h"(ptr %"s")\n{\nentry:\n  ret i32 0\n}\n'
    assert machine_level(glue + inlined) == 0
    assert machine_level(glue + inlined + hot) == 3
    assert machine_level(inlined.replace("internal ", "")) == 3


def test_sources_show_every_unit():
    lib = pyir.build(_matmul(), opt_level="fast", use_cache=False)
    for kind in ("llvm", "llvm-opt", "asm"):
        text = lib.source(kind)
        headings = re.findall(r"^; ---- compile unit (\d) of (\d) ----$", text, re.MULTILINE)
        assert headings == [(str(k), "5") for k in range(1, 6)], kind
        assert "matmul.split0.main" in text


def test_a_library_of_units_exports_only_its_entry_points(tmp_path):
    lib = pyir.build(_matmul(), opt_level="fast", use_cache=False)
    path = tmp_path / "matmul.so"
    lib.export_library(path)
    loaded = pyir.load_module(path)
    _check(loaded, 45)
    native = ctypes.CDLL(str(path))
    assert native["pyir.entry.matmul"]
    for name in ("matmul", "matmul.split0.main", "matmul.par1"):
        with pytest.raises(AttributeError):
            native[name]


KERNEL_IR = """define {linkage} void @{name}(ptr %out, i64 %i) {{
  %p = getelementptr float, ptr %out, i64 %i
  %v = load float, ptr %p
  %w = fadd float %v, {value}
  store float %w, ptr %p
  ret void
}}
"""


@pytest.fixture
def bump_kernels():
    for name, linkage, value in (("test_bump_shared", "", "1.0"),
                                 ("test_bump_local", "internal", "2.0")):
        @pyir.ffi.extern(f"test.{name}", llvm_ir=KERNEL_IR.format(linkage=linkage, name=name,
                                                                  value=value), override=True)
        def kernel(out: T.Buffer(("n",), "float32"), i: T.int64): ...


def test_a_kernel_called_from_two_units_is_linked_once_or_into_each(monkeypatch, bump_kernels):
    """With a unit for each parallel loop: the kernel of external linkage is defined in the
    first unit that calls it and called from the second; the internal one is in both."""
    @T.prim_func
    def twice(X: T.Buffer(("n",), "float32")):
        for i in T.parallel(n):
            with T.block("first"):   # declares what the kernels touch: X[vi] alone
                vi = T.axis.spatial(n, i)
                T.reads(X[vi])
                T.writes(X[vi])
                T.call_extern("test.test_bump_shared", X, vi, dtype="void")
                T.call_extern("test.test_bump_local", X, vi, dtype="void")
        for i in T.parallel(n):
            with T.block("second"):
                vi = T.axis.spatial(n, i)
                T.reads(X[vi])
                T.writes(X[vi])
                T.call_extern("test.test_bump_shared", X, vi, dtype="void")
                T.call_extern("test.test_bump_local", X, vi, dtype="void")

    monkeypatch.setattr(llvm_codegen, "UNIT_INSTRUCTIONS", 1)
    lib = pyir.build(twice, use_cache=False)
    text = lib.source("llvm")
    assert len(re.findall(r"^; ---- compile unit", text, re.MULTILINE)) == 3
    assert len(re.findall(r"^define\s+void @test_bump_shared\(", text, re.MULTILINE)) == 1
    assert len(re.findall(r"^define internal void @test_bump_local\(", text, re.MULTILINE)) == 2
    x = np.arange(5000, dtype=np.float32)
    lib["twice"](x)
    np.testing.assert_array_equal(x, np.arange(5000, dtype=np.float32) + 6)


def test_a_unit_llvm_rejects_is_named(monkeypatch):
    good = "define i32 @f(ptr %s) {\n  ret i32 0\n}\n"
    with pytest.raises(pyir.Error, match=r"LLVM rejected the IR of module \(unit 2\)"):
        with engine.JitEngine(Target.from_string("llvm")) as jit:
            jit.add(good)
            jit.add("define i32 @g(ptr %s) {\n  ret i64 0\n}\n")


def test_an_error_while_units_compile_leaves_the_process_as_it_was():
    interval = sys.getswitchinterval()
    good = "define i32 @f(ptr %s) {\n  ret i32 0\n}\n"
    with pytest.raises(ValueError, match="raised by the generator"):
        with engine.JitEngine(Target.from_string("llvm")) as jit:
            jit.add(good)
            raise ValueError("raised by the generator")
    assert sys.getswitchinterval() == interval
    _check(pyir.build(_matmul(parallel=False), opt_level="fast", use_cache=False), 9)


COLLECT = """
import gc, importlib.util, sys
import numpy as np
import pyir
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
M = importlib.util.module_from_spec(spec); spec.loader.exec_module(M)
for _ in range(3):
    lib = pyir.build(M.schedule_matmul(M.matmul_func(None)).mod, opt_level="fast",
                     use_cache=False)
    a = np.ones((9, 9), np.float32); c = np.empty_like(a)
    lib["matmul"](a, a, c)          # the executable now holds its function: a cycle
    assert (c == 9).all()
    del lib
    gc.collect()
print("ok")
"""


def test_compiled_units_survive_the_garbage_collector():
    """An executable in a reference cycle is freed by the collector, in any order, without
    freeing an LLVM context before its modules (that crashed once)."""
    done = subprocess.run([sys.executable, "-c", COLLECT, str(_PATH)], check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


FORK = """
import importlib.util, os, sys
import numpy as np
import pyir
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
M = importlib.util.module_from_spec(spec); spec.loader.exec_module(M)
def built_and_right():
    lib = pyir.build(M.schedule_matmul(M.matmul_func(None)).mod, opt_level="fast",
                     use_cache=False)
    a = np.ones((9, 9), np.float32); c = np.empty_like(a)
    lib["matmul"](a, a, c)
    return bool((c == 9).all())
assert built_and_right()
pid = os.fork()
if pid == 0:
    os._exit(0 if built_and_right() else 1)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0
assert built_and_right()
print("ok")
"""


def test_a_child_made_by_fork_builds():
    """The child's first build waited forever for the parent's compiling thread, which a
    fork does not copy."""
    done = subprocess.run([sys.executable, "-c", FORK, str(_PATH)], check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_builds_from_two_threads_take_turns_and_both_work():
    import threading
    libs, errors = {}, []

    def build(k):
        try:
            libs[k] = pyir.build(_matmul(parallel=k == 0), opt_level="fast", use_cache=False)
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=build, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and sorted(libs) == [0, 1]
    for lib in libs.values():
        _check(lib, 40)


_AUTO_KERNELS = """
from pyir.script import ir as I, tensor as T

@I.ir_module
class Kernels:
    @T.prim_func
    def add(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + A[vi, vj]

    @T.prim_func
    def expo(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj])

    @T.prim_func
    def row_sum(A: T.Buffer(("n", "m"), "float32"), S: T.Buffer(("n",), "float32")):
        for i, j in T.grid(n, m):
            with T.block("S"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vj]
"""


@pytest.mark.parametrize("name, left_to_llvm", [("add", False), ("expo", True),
                                                 ("row_sum", True)])
def test_auto_gives_o3_only_to_units_with_loops_left_to_llvm(name, left_to_llvm):
    """The default opt_level "auto": a unit whose loops codegen vectorized itself gets the
    cheap "fast" IR passes (a 1024x1024 add built 2-10x sooner, as fast to run); one with a
    loop left to LLVM (the row sum's reassociated reduction) or vector math LLVM interleaves
    (exp) says so in its first line and gets "O3"."""
    from pyir.codegen.compile import LOOPS_FOR_LLVM, unit_level
    from pyir.script import from_source
    func = from_source(_AUTO_KERNELS)[name]
    units = []
    llvm_codegen.codegen_units(transform.lower(pyir.ir.IRModule.from_dict({name: func})),
                               units.append)
    marked = [u.startswith(LOOPS_FOR_LLVM + "\n") for u in units]
    assert any(marked) == left_to_llvm
    assert [unit_level(u, "auto") for u in units] == ["O3" if m else "fast" for m in marked]
    assert {unit_level(u, "O1") for u in units} == {"O1"}
    lib = pyir.build(func)
    a = np.random.default_rng(0).random((5, 37), np.float32)
    out = np.empty(5 if name == "row_sum" else (5, 37), np.float32)
    lib[name](a, out)
    want = {"add": a + a, "expo": np.exp(a), "row_sum": a.sum(1)}[name]
    np.testing.assert_allclose(out, want, rtol=1e-5)
    if name == "row_sum":   # LLVM vectorized the reassociated reduction
        assert re.search(r"fadd reassoc contract <\d+ x float>", lib.source("llvm-opt"))


@pytest.mark.parametrize("attributes, to_o3", [("alwaysinline", False), ("", True)])
def test_auto_gives_a_loop_of_kernel_calls_to_o3_only_for_its_inliner(attributes, to_o3):
    """A loop whose body calls a kernel is not one LLVM's vectorizer takes
    (`pyir.codegen.vectorize.beyond_llvm`): its unit gets "fast", which inlines an
    ``alwaysinline`` kernel (the bench's tensorized matmul spent 11 of its 47 ms build on O3
    passes over its loop of micro-kernel calls), unless the kernel is LLVM IR that only O3's
    inliner inlines."""
    text = KERNEL_IR.format(linkage="internal", name="test_bump_o3", value="2.0")
    pyir.ffi.extern("test.test_bump_o3", llvm_ir=text.replace(") {", f") {attributes} {{"),
                    override=True)(_bump_decl)

    @T.prim_func
    def bump(X: T.Buffer(("n",), "float32")):
        for i in range(n):
            T.call_extern("test.test_bump_o3", X, i, dtype="void")

    lib = pyir.build(bump, default_schedule=False, use_cache=False)
    assert lib.source("llvm").startswith("; pyir: loops for LLVM") == to_o3
    assert "call void @test_bump_o3" not in lib.source("llvm-opt")     # inlined either way
    x = np.arange(37, dtype=np.float32)
    lib["bump"](x)
    np.testing.assert_array_equal(x, np.arange(37, dtype=np.float32) + 2)


def _bump_decl(out: T.Buffer(("n",), "float32"), i: T.int64): ...


def _bump_one_decl(out: T.Buffer((1,), "float32"), i: T.int64): ...


def test_a_kernels_pointer_is_a_row_pointer_made_before_the_inner_loop_and_an_offset():
    """``X[i, j]`` passed to a kernel in loops over ``i`` and ``j`` is ``X + i * m``, made
    once per row, plus ``j`` (as other accesses are, `ExprEmitter.index_address`): with the
    whole index each time, the tensorized bench matmul's k loop spent two more integer
    instructions per step on its micro-kernel's pointers (and ran 1-3 % slower)."""
    text = KERNEL_IR.format(linkage="internal", name="test_bump_one", value="2.0")
    pyir.ffi.extern("test.test_bump_one", llvm_ir=text, override=True)(_bump_one_decl)

    @T.prim_func
    def bump_all(X: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            T.call_extern("test.test_bump_one", X[i, j], T.int64(0), dtype="void")

    lib = pyir.build(bump_all, default_schedule=False, use_cache=False)
    text = lib.source("llvm")
    ptr = re.search(r'call void @"?test_bump_one"?\(ptr (%"[\w.]+"), i64 0\)', text)[1]
    base = re.search(rf'{re.escape(ptr)} = getelementptr float, ptr (%"[\w.]+"), i64 %"[\w.]+"\n',
                     text)
    assert base and base[1] != '%"X"'                   # a row pointer, not X itself
    x = np.arange(5 * 7, dtype=np.float32).reshape(5, 7)
    lib["bump_all"](x)
    np.testing.assert_array_equal(x, np.arange(5 * 7, dtype=np.float32).reshape(5, 7) + 2)


def test_auto_leaves_a_scalar_loop_to_llvm():
    """A loop no schedule vectorized (built without the default schedule) is LLVM's to
    vectorize: its unit gets O3, which does."""
    from pyir.script import from_source
    func = from_source(_AUTO_KERNELS)["add"]
    lib = pyir.build(func, default_schedule=False)
    assert lib.source("llvm").startswith("; pyir: loops for LLVM")
    assert re.search(r"fadd contract <\d+ x float>", lib.source("llvm-opt"))
