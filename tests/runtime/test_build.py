"""`pyir.build`: prim functions end to end (also exported and loaded in a fresh process),
the compile cache, what build refuses, and the cost of ``import pyir``."""

import subprocess
import sys

import numpy as np
import pytest

import pyir
from pyir.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    BufferStore,
    FloatImm,
    For,
    Function,
    GraphVar,
    IntImm,
    IRModule,
    IterVar,
    PrimFunc,
    Range,
    SeqExpr,
    TensorStructInfo,
    Var,
)
from pyir.runtime import cache, engine


def add_one(name="add_one", a="A", b="B"):
    """B[i] = A[i] + 1, written as a plain loop."""
    n, i = Var("n"), Var("i")
    A, B = Buffer(a, (n,), "float32"), Buffer(b, (n,), "float32")
    return PrimFunc(name, (A, B), For(i, IntImm(0), n, "serial",
                                      BufferStore(B, A[i] + FloatImm(1.0), (i,))))


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def test_build_prim_function_runs():
    lib = pyir.build(add_one(), default_schedule=False)
    a = np.arange(100, dtype=np.float32)
    b = np.empty_like(a)
    lib["add_one"](a, b)
    np.testing.assert_array_equal(b, a + 1)
    assert lib.function_names() == ["add_one"]
    assert lib["add_one"].info.params[1].writes and not lib["add_one"].info.params[0].writes


def test_build_marks_written_buffers_for_the_read_only_check():
    lib = pyir.build(add_one(), default_schedule=False)
    out = np.zeros(3, np.float32)
    out.setflags(write=False)
    with pytest.raises(pyir.ArgumentValueError, match="'B' is written .* read-only"):
        lib["add_one"](np.zeros(3, np.float32), out)


def test_build_pauses_the_garbage_collector_and_turns_it_back_on(monkeypatch):
    """The collector is off while build compiles, on again afterwards (also when the build
    fails), and left off after a build that started with it off."""
    import gc
    seen = []
    real = engine.JitEngine.__init__

    def spy(self, *args, **kwargs):
        seen.append(gc.isenabled())
        real(self, *args, **kwargs)

    monkeypatch.setattr(engine.JitEngine, "__init__", spy)
    assert gc.isenabled()
    pyir.build(add_one(), default_schedule=False)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(pyir.Error, match="no functions to compile"):
        pyir.build(IRModule(()))
    assert gc.isenabled()
    gc.disable()
    try:
        pyir.build(add_one("other"), default_schedule=False)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()


def test_cache_hit_does_no_llvm_work(monkeypatch):
    import pyir.codegen.llvm as llvm_codegen
    calls = []
    real = llvm_codegen.codegen_units
    monkeypatch.setattr(llvm_codegen, "codegen_units",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    func = add_one()
    first = pyir.build(func, default_schedule=False)
    compiled = engine.compile_count
    assert pyir.build(func, default_schedule=False) is first
    assert pyir.build(add_one(), default_schedule=False) is first, "structurally equal copy"
    assert engine.compile_count == compiled and len(calls) == 1


def test_cache_distinguishes_options_names_and_bypass():
    func = add_one()
    first = pyir.build(func, default_schedule=False)
    compiled = engine.compile_count
    assert pyir.build(func, default_schedule=False, opt_level=1) is not first
    renamed = pyir.build(add_one(a="X"), default_schedule=False)
    assert renamed is not first and "X" in repr(renamed["add_one"])
    assert pyir.build(func, default_schedule=False, use_cache=False) is not first
    assert engine.compile_count == compiled + 3


SET_IR = "define void @test_set(ptr %out) {{\n  store float {}, ptr %out, align 4\n  ret void\n}}\n"


def test_cache_misses_when_a_kernel_the_module_calls_is_declared_again():
    from pyir.script import tensor as T

    def declare(value):
        @pyir.ffi.extern("test.set", llvm_ir=SET_IR.format(value), override=True)
        def kernel(out: T.Buffer((1,), "float32")): ...

    @T.prim_func
    def set_one(d: T.Buffer((1,), "float32")):
        T.call_extern("test.set", d, dtype="void")

    out = np.zeros(1, "float32")
    declare("1.0")
    first = pyir.build(set_one)
    assert pyir.build(set_one) is first
    declare("2.0")
    pyir.build(set_one)["set_one"](out)
    assert out[0] == 2, "the executable of the kernel declared first was reused"


GRAPH_SRC = """
from pyir.script import graph as R
@R.function
def main({x}: R.Tensor(("n",), "float32")):
    y = R.call_dps_packed("test.cached_scale", ({x},), out_sinfo=R.Tensor((n,), "float32"))
    return y
"""


def test_an_unchanged_graph_module_is_built_once(c_library):
    """A graph module was lowered and compiled again by every build (some 120 ms). The key
    holds the names of its variables (called by name, named in messages) and what its
    packed calls name: a Python function is called back, a native kernel compiled in."""
    from pyir.script import from_source
    from pyir.script import tensor as T
    pyir.ffi.register_func("test.cached_scale", lambda x, out: np.multiply(x, 2, out=out),
                           override=True)
    first = pyir.build(from_source(GRAPH_SRC.format(x="x")))
    compiled = engine.compile_count
    assert pyir.build(from_source(GRAPH_SRC.format(x="x"))) is first
    assert engine.compile_count == compiled
    renamed = pyir.build(from_source(GRAPH_SRC.format(x="w")))
    assert renamed is not first and "w: float32[n]" in repr(renamed["main"])
    lib = c_library("#include <stdint.h>\nvoid scale3(const float *x, float *y, int64_t n) "
                    "{ for (int64_t i = 0; i < n; i++) y[i] = 3 * x[i]; }\n")

    @pyir.ffi.extern("test.cached_scale", symbol=lib.scale3, override=True)
    def scale3(x: T.Buffer(("n",), "float32"), y: T.Buffer(("n",), "float32"), n: T.int64): ...

    native = pyir.build(from_source(GRAPH_SRC.format(x="x")))
    assert native is not first
    np.testing.assert_array_equal(native["main"](np.ones(2, "float32")), [3, 3])


def test_module_with_two_functions():
    mod = IRModule.from_dict({"f": add_one("f"), "g": add_one("g")})
    lib = pyir.build(mod, default_schedule=False)
    assert lib.function_names() == ["f", "g"]


def test_graph_function_returning_its_input_returns_a_copy():
    x = GraphVar("x", TensorStructInfo((4,), "float32"))
    main = Function("main", (x,), SeqExpr((), x), TensorStructInfo((4,), "float32"))
    lib = pyir.build(IRModule.from_dict({"main": main, "add_one": add_one()}))
    a = np.arange(4, dtype="float32")
    out = lib["main"](a)
    np.testing.assert_array_equal(out, a)
    assert out is not a


@pytest.mark.parametrize("value, kind", [("not a module", "str"), (None, "NoneType")])
def test_build_refuses_other_objects(value, kind):
    with pytest.raises(pyir.ArgumentTypeError, match=f"expects an IRModule.*got {kind}$"):
        pyir.build(value)


def test_the_functions_of_a_module_of_prim_functions_are_registered():
    """Only a module with a graph function registered its functions: after building one of
    prim functions alone, or a lone prim function, no Python code or graph code could call
    them by name."""
    mod = IRModule.from_dict({"test_reg_f": add_one("test_reg_f"),
                              "test_reg_g": add_one("test_reg_g")})
    try:
        lib = pyir.build(mod, default_schedule=False)
        assert pyir.ffi.get_global_func("test_reg_f") is lib["test_reg_f"]
        assert pyir.ffi.get_global_func("test_reg_g") is lib["test_reg_g"]
        again = pyir.build(add_one("test_reg_f"))
        a, b = np.arange(5, dtype=np.float32), np.zeros(5, np.float32)
        pyir.ffi.get_global_func("test_reg_f")(a, b)
        np.testing.assert_array_equal(b, a + 1)
        assert pyir.ffi.get_global_func("test_reg_f") is again["test_reg_f"]
    finally:
        for name in ("test_reg_f", "test_reg_g"):
            pyir.ffi.remove_global_func(name)


def test_a_build_of_prim_functions_does_not_replace_a_python_function():
    pyir.ffi.register_func("test_reg_py", lambda a, b: None)
    try:
        with pytest.raises(pyir.Error, match=r"^function test_reg_py of the module would "
                           r"replace <function .*<lambda>.*>, registered as 'test_reg_py': a "
                           r"built module registers its functions under their names; rename "
                           r"one of them$"):
            pyir.build(add_one("test_reg_py"))
    finally:
        pyir.ffi.remove_global_func("test_reg_py")


def test_a_function_no_call_can_run_is_built_but_not_registered():
    """n only in n * 2: the build succeeds, ``lib[name]`` says why no call can run it."""
    n, i = Var("n"), Var("i")
    X = Buffer("X", (n * 2,), "float32")
    func = PrimFunc("test_reg_double", (X,), For(i, IntImm(0), n * 2, "serial",
                                                 BufferStore(X, FloatImm(1.0), (i,))))
    lib = pyir.build(func)
    assert pyir.ffi.get_global_func("test_reg_double", allow_missing=True) is None
    with pytest.raises(pyir.Error, match="shape variable"):
        lib["test_reg_double"]


def test_a_missing_name_is_a_key_error_that_reads_as_its_message():
    lib = pyir.build(add_one(), default_schedule=False)
    for lookup, words in ((lambda: lib["nope"], "the executable has no function named 'nope'; "
                                                "it has add_one"),
                          (lambda: lib[0], "the executable has no function named 0; it has "
                                           "add_one"),
                          (lambda: IRModule.from_dict({"f": add_one("f")})["g"],
                           "IRModule has no function named 'g'; it has f"),
                          (lambda: pyir.ffi.get_global_func("test.none_such"),
                           "no global function named 'test.none_such' is registered")):
        with pytest.raises(KeyError) as info:
            lookup()
        assert isinstance(info.value, pyir.MissingNameError) and str(info.value) == words


@pytest.mark.parametrize("options, error, words", [
    ({"opt_level": True}, pyir.ArgumentTypeError, r"opt_level must be .*, got bool True"),
    ({"opt_level": 2.0}, pyir.ArgumentTypeError, r"opt_level must be .*, got float 2\.0"),
    ({"opt_level": None}, pyir.ArgumentTypeError, r"opt_level must be .*, got NoneType None"),
    ({"opt_level": 4}, pyir.ArgumentValueError, r"opt_level must be .* an int 0-3, got 4"),
    ({"opt_level": "O4"}, pyir.ArgumentValueError, r"must be one of 'none', .*, got 'O4'"),
    ({"default_schedule": "no"}, pyir.ArgumentTypeError,
     r"default_schedule must be True or False, got str 'no'"),
    ({"use_cache": 1}, pyir.ArgumentTypeError, r"use_cache must be True or False, got int 1"),
    ({"opt_levl": 2}, pyir.ArgumentTypeError, r"unknown keyword argument 'opt_levl'"),
    ({"externs": 3}, pyir.ArgumentTypeError, r"externs must map kernel names .*, got 3"),
])
def test_build_refuses_options_of_the_wrong_kind(options, error, words):
    """A bool or a float is no opt_level (True and 2.0 passed for 1 and 2), a switch is a
    bool (``default_schedule="no"`` meant yes), and an unknown option is named (it was a
    raw TypeError from the code generator)."""
    with pytest.raises(error, match=words):
        pyir.build(add_one(), **options)


def test_build_takes_an_opt_level_of_any_int_type():
    lib = pyir.build(add_one(), opt_level=np.int64(1), use_cache=False)
    out = np.zeros(4, "float32")
    lib["add_one"](np.arange(4, dtype="float32"), out)
    np.testing.assert_array_equal(out, np.arange(1, 5))


def scale_rows():
    """Y[i, j] = X[i, j] * 2 as one block: the default schedule makes i parallel and j
    vectorized."""
    n, m, i, j, vi, vj = Var("n"), Var("m"), Var("i"), Var("j"), Var("vi"), Var("vj")
    X, Y = Buffer("X", (n, m), "float32"), Buffer("Y", (n, m), "float32")
    region = (Range(vi, IntImm(1)), Range(vj, IntImm(1)))
    block = Block("Y", (IterVar(vi, n, "S"), IterVar(vj, m, "S")),
                  (BufferRegion(X, region),), (BufferRegion(Y, region),),
                  BufferStore(Y, X[vi, vj] * FloatImm(2.0), (vi, vj)))
    body = For(i, IntImm(0), n, "serial", For(j, IntImm(0), m, "serial",
                                              BlockRealize((i, j), IntImm(1, "bool"), block)))
    return PrimFunc("scale_rows", (X, Y), body)


LOAD_AND_RUN = """
import sys
import numpy as np
import pyir
lib = pyir.load_module(sys.argv[1])
x = np.random.rand(1001, 67).astype(np.float32)
y = np.empty_like(x)
lib["scale_rows"](x, y)
np.testing.assert_array_equal(y, x * 2)
try:
    lib["scale_rows"](x, y[:, :5])
except pyir.ArgumentValueError as e:
    assert "m is 67 from X.shape[1] but 5 from Y.shape[1]" in str(e), e
print("ok")
"""


def test_parallel_module_exported_and_loaded_in_fresh_process(tmp_path):
    lib = pyir.build(scale_rows())
    assert "pyir_parallel_for" in lib.source("llvm")
    x = np.random.rand(33, 129).astype(np.float32)
    y = np.empty_like(x)
    lib["scale_rows"](x, y)
    np.testing.assert_array_equal(y, x * 2)
    path = tmp_path / "scale.so"
    lib.export_library(path)
    done = subprocess.run([sys.executable, "-c", LOAD_AND_RUN, str(path)], check=False,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_import_pyir_loads_neither_llvmlite_nor_numpy():
    code = "import sys, pyir; print('llvmlite' in sys.modules, 'numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.split() == ["False", "False"], done.stderr


@pytest.mark.ir_without_script
def test_an_expression_too_deep_to_compile_is_a_clear_error():
    """A 450-term sum parses, but the passes recurse deeper than Python allows: a raw
    RecursionError from the simplifier."""
    from pyir.script import from_source
    text = ("from pyir.script import tensor as T\n\n@T.prim_func\n"
            "def f(B: T.Buffer((4,), \"float32\"), x: T.float32):\n"
            "    B[0] = " + " + ".join(["x"] * 450) + "\n")
    with pytest.raises(pyir.Error, match=r"prim function f \(pass \w+\): an expression in "
                       r"it, or its loops, ifs and blocks inside one another, nest deeper than "
                       r"Python's recursion limit; split it into smaller ones"):
        pyir.build(from_source(text), use_cache=False)
