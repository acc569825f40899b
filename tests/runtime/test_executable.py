"""Executable on hand-written kernels: results, DLPack and scalar inputs, threads, benchmark,
source, export to a shared object and loading it in a fresh process."""

import pathlib
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import native_kernels
import pyir
from pyir.runtime import BenchmarkResult

from dlpack_only import DLPackOnly


@pytest.mark.parametrize("n", [0, 1, 7, 1031])
def test_add_matches_numpy(lib, n):
    a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    c = np.empty(n, np.float32)
    assert lib["add"](a, b, c) is None
    np.testing.assert_array_equal(c, a + b)


def test_dlpack_arguments_are_bound_zero_copy(lib):
    a = np.arange(6, dtype=np.float32)
    out = np.zeros(6, np.float32)
    lib["add"](DLPackOnly(a), DLPackOnly(a), DLPackOnly(out))
    np.testing.assert_array_equal(out, 2 * a)


@pytest.mark.parametrize("alpha", [2, 2.5, np.float32(2.5), np.float64(-1.0), np.int64(3)])
def test_float_scalar_parameter(lib, alpha):
    x = np.arange(5, dtype=np.float32)
    y = np.ones(5, np.float32)
    lib["axpy"](alpha, x, y)
    np.testing.assert_allclose(y, np.float32(alpha) * x + 1)


@pytest.mark.parametrize("value", [-128, 0, 127, np.int8(5)])
def test_int_scalar_parameter(lib, value):
    out = np.zeros(4, np.int8)
    lib["fill_i8"](value, out)
    assert (out == int(value)).all()


def test_static_and_symbolic_dimensions(lib):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.empty(3, np.float32)
    lib["rowsum"](a, out)
    np.testing.assert_array_equal(out, a.sum(axis=1))
    b = np.empty(10)
    lib["repeat2"](np.arange(5.0), b)
    np.testing.assert_array_equal(b, np.repeat(np.arange(5.0), 2))


def test_entry_condition_holds(lib):
    x = np.arange(10, dtype=np.float32)
    y = np.empty(8, np.float32)
    lib["window"](x, y)
    np.testing.assert_array_equal(y, x[:-2] + x[1:-1] + x[2:])


def test_concurrent_calls_from_threads(lib):
    n = 20000
    errors = []

    def work(k):
        a = np.full(n, k, np.float32)
        c = np.empty(n, np.float32)
        for _ in range(200):
            lib["add"](a, a, c)
            if not (c == 2 * k).all():
                errors.append(k)
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_function_names_and_repr(lib):
    assert lib.function_names()[:2] == ["add", "axpy"]
    assert "add" in lib and "nope" not in lib
    # The names, as a dict's keys (iteration called lib[0]: "no function named 0").
    assert list(lib) == lib.function_names() and len(lib) == len(lib.function_names())
    assert "add" in repr(lib)
    assert repr(lib["add"]) == ("<pyir PrimFunction add(A: float32[n], B: float32[n], "
                                "C: float32[n])>")


def test_benchmark_result(lib):
    a = np.ones(1000, np.float32)
    result = lib.benchmark("add", a, a, np.empty_like(a), repeat=5)
    assert isinstance(result, BenchmarkResult)
    assert len(result.runs) == 5 and result.number >= 1
    assert 0 < result.min <= result.median <= result.max < 1e-2
    assert result.iqr >= 0
    assert "median" in repr(result) and "add" in repr(result)
    html = result._repr_html_()
    assert "median" in html and "<" in html


def test_benchmark_checks_arguments(lib):
    with pytest.raises(pyir.ArgumentValueError, match="n is 3 from A.shape"):
        lib.benchmark("add", np.ones(3, np.float32), np.ones(4, np.float32),
                      np.ones(3, np.float32))


def test_source(lib):
    assert 'define i32 @"pyir.entry.add"' in lib.source("llvm")
    assert "define" in lib.source("llvm-opt")
    asm = lib.source("asm")
    assert "add:" in asm and "ret" in asm
    with pytest.raises(pyir.Error, match="unknown source kind"):
        lib.source("cuda")


LOADER = """
import sys
import numpy as np
import pyir
lib = pyir.load_module(sys.argv[1])
assert "llvmlite" not in sys.modules, "loading must not need llvmlite"
a = np.arange(1000, dtype=np.float32)
c = np.empty_like(a)
lib["add"](a, a, c)
np.testing.assert_array_equal(c, a + a)
x = np.arange(12, dtype=np.float32).reshape(3, 4)
s = np.empty(3, np.float32)
lib["rowsum"](x, s)
np.testing.assert_array_equal(s, x.sum(axis=1))
try:
    lib["window"](np.zeros(4, np.float32), np.zeros(4, np.float32))
except pyir.ArgumentValueError as e:
    assert "X is read up to index p + 1" in str(e), e
else:
    raise AssertionError("entry condition not checked")
try:
    lib["add"](a, a[:5], c)
except pyir.ArgumentValueError as e:
    assert "n is 1000 from A.shape[0] but 5 from B.shape[0]" in str(e), e
print("ok", lib.function_names())
"""


def test_export_and_load_in_fresh_process(lib, tmp_path):
    path = tmp_path / "kernels.so"
    lib.export_library(path)
    assert path.exists()
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(LOADER), str(path)],
                          check=False, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok ['add', 'axpy'")


def test_loaded_module_has_no_source(lib, tmp_path):
    path = tmp_path / "k.so"
    lib.export_library(path)
    loaded = pyir.load_module(path)
    with pytest.raises(pyir.Error, match="no source is available"):
        loaded.source("llvm")
    out = np.zeros(3, np.int8)
    loaded["fill_i8"](9, out)
    assert (out == 9).all()


def test_a_library_for_cpu_features_this_machine_lacks_loads_but_is_not_called(
        tmp_path, monkeypatch):
    """A library records its target and the vector features its code uses: here AVX-512,
    on a machine whose CPU (as /proc/cpuinfo says) has AVX2 only. It loads, but its
    functions are refused, naming what is missing; where the CPU has them, nothing is. (The
    target names an AVX2 CPU: on the host's, a Zen 4 say, its name implies avx512bw too.)"""
    from pyir.runtime import Executable, loader
    lib = Executable.jit(native_kernels.IR, native_kernels.INFOS,
                         "llvm -mcpu=haswell -mattr=+avx512f")
    path = tmp_path / "avx512.so"
    lib.export_library(path)
    monkeypatch.setattr(loader, "cpu_flags", lambda: {"sse2", "avx", "avx2", "fma"})
    loaded = pyir.load_module(path)
    assert loaded.missing_features == ("avx512f",)
    with pytest.raises(pyir.Error, match=r"function 'add' cannot run on this machine: it was "
                       r"built for target 'llvm -mtriple=\S+ -mcpu=\S+ -mattr=\+avx512f', "
                       r"whose code uses CPU features this machine's CPU lacks \(avx512f\)"):
        loaded["add"]
    monkeypatch.setattr(loader, "cpu_flags", lambda: {"avx", "avx2", "fma", "avx512f"})
    assert pyir.load_module(path).missing_features == ()


def test_a_library_exported_again_to_its_path_loads_anew(tmp_path):
    """The dynamic loader hands out the library it loaded from a path before: the new
    export was loaded as the old one."""
    from pyir.script import tensor as T

    def scaled_by(k):
        @T.prim_func
        def scale(x: T.Buffer((3,), "float32"), y: T.Buffer((3,), "float32")):
            for i in range(3):
                with T.block("y"):
                    vi = T.axis.spatial(3, i)
                    y[vi] = x[vi] * T.float32(k)
        return scale

    path = tmp_path / "scale.so"
    x, y = np.ones(3, np.float32), np.zeros(3, np.float32)
    pyir.build(scaled_by(2)).export_library(path)
    first = pyir.load_module(path)
    pyir.build(scaled_by(3)).export_library(path)
    second = pyir.load_module(path)
    second["scale"](x, y)
    assert (y == 3).all()
    first["scale"](x, y)
    assert (y == 2).all()
    pyir.load_module(path)["scale"](x, y)
    assert (y == 3).all()


def test_paths_and_benchmark_counts_are_checked(lib):
    """A raw TypeError from pathlib after a whole compile; a ZeroDivisionError for
    number=0, and a negative time for number=-1."""
    with pytest.raises(pyir.ArgumentTypeError, match="export_library needs a path "
                       r"\(a str or a pathlib.Path\), got NoneType None"):
        lib.export_library(None)
    with pytest.raises(pyir.ArgumentTypeError, match="load_module needs a path .*, got int 5"):
        pyir.load_module(5)
    a, b, c = (np.zeros(4, np.float32) for _ in range(3))
    for bad in (0, -1, 2.5, True):
        with pytest.raises(pyir.ArgumentValueError, match=r"benchmark of add: number must be "
                           rf"a whole number, at least 1, got {bad}"):
            lib.benchmark("add", a, b, c, number=bad)
    # numpy integers count, as everywhere (they were refused as not whole numbers)
    result = lib.benchmark("add", a, b, c, number=np.int64(3), repeat=np.int32(2))
    assert (result.number, len(result.runs)) == (3, 2)


def test_export_to_a_directory_or_into_a_missing_one_is_refused_before_linking(lib, tmp_path):
    """The linker's own complaint came back, after a whole compile."""
    with pytest.raises(pyir.ArgumentValueError, match=f"export_library: {tmp_path} is a "
                       "directory; give the path of the file to write"):
        lib.export_library(tmp_path)
    missing = tmp_path / "missing"
    with pytest.raises(pyir.ArgumentValueError, match=f"export_library: cannot write "
                       f"{missing}/k.so: the directory {missing} does not exist"):
        lib.export_library(missing / "k.so")
    assert not missing.exists()


LOAD_CUT = """
import sys
import pyir
try:
    pyir.load_module(sys.argv[1])
except pyir.Error as e:
    print(e)
"""


@pytest.mark.parametrize("keep", [100, 1000, 5000])
def test_a_library_cut_short_is_refused(lib, tmp_path, keep):
    """The dynamic loader mapped the missing part of the file, and the process died of
    SIGBUS (a subprocess: the old behaviour kills the interpreter)."""
    whole = tmp_path / "k.so"
    lib.export_library(whole)
    cut = tmp_path / "cut.so"
    cut.write_bytes(whole.read_bytes()[:keep])
    done = subprocess.run([sys.executable, "-c", LOAD_CUT, str(cut)], check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(rf"cannot load {cut}: the file is cut short: it has {keep} bytes, but "
                        r"its headers describe \d+\n", done.stdout), done.stdout


def test_a_function_with_a_non_ascii_name_is_found():
    """llvmlite looks JIT symbols up by ASCII names: lib["fünf"] was a UnicodeEncodeError."""
    from pyir.script import tensor as T

    @T.prim_func
    def fünf(x: T.Buffer((3,), "float32")):
        for i in range(3):
            with T.block("x"):
                vi = T.axis.spatial(3, i)
                x[vi] = T.float32(5)

    x = np.zeros(3, np.float32)
    pyir.build(fünf)["fünf"](x)
    assert (x == 5).all()


def test_load_module_errors(tmp_path):
    with pytest.raises(pyir.Error, match="cannot load"):
        pyir.load_module(tmp_path / "missing.so")
    libm = pathlib.Path("/lib/x86_64-linux-gnu/libm.so.6")
    if libm.exists():
        with pytest.raises(pyir.Error, match="not a library exported by pyir"):
            pyir.load_module(libm)


EXTERN_IR = r"""
declare float @pyir_test_cbrt(float)

define i32 @"pyir.entry.cube_root"(ptr noalias %slots) {
entry:
  %x = load ptr, ptr %slots
  %v = load float, ptr %x
  %r = call float @pyir_test_cbrt(float %v)
  store float %r, ptr %x
  ret i32 0
}
"""


def test_jit_resolves_extern_symbols():
    import ctypes
    import ctypes.util

    from pyir.codegen.abi import FuncInfo, ParamInfo
    from pyir.ir import IntImm
    from pyir.runtime import Executable
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    address = ctypes.cast(libm.cbrtf, ctypes.c_void_p).value
    info = FuncInfo("cube_root", (ParamInfo("x", "buffer", "float32", (IntImm(1),), True),), ())
    lib = Executable.jit(EXTERN_IR, [info], "llvm", symbols={"pyir_test_cbrt": address})
    x = np.array([27.0], np.float32)
    lib["cube_root"](x)
    assert x[0] == pytest.approx(3.0)


def test_bad_llvm_ir_is_a_pyir_error():
    from pyir.runtime import Executable
    with pytest.raises(pyir.Error, match="LLVM rejected the IR of module"):
        Executable.jit("define i32 @f(ptr %s) { ret i64 0 }", [], "llvm")


def test_native_code_is_copied_as_itself_and_not_pickled(tmp_path):
    """``copy.deepcopy`` of an executable half-copied its LLVM objects and failed deep in
    ctypes (whose finalizers then complained); pickling did the same."""
    import copy
    import pickle

    from pyir.script import graph as R
    from pyir.script import ir as I
    from pyir.script import tensor as T

    @I.ir_module
    class Mod:
        @T.prim_func
        def inc(x: T.Buffer(("n",), "float32"), y: T.Buffer(("n",), "float32")):
            for i in range(n):
                with T.block("y"):
                    vi = T.axis.spatial(n, i)
                    y[vi] = x[vi] + T.float32(1)

        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            y = R.call_tir(cls.inc, (x,), out_sinfo=R.Tensor((n,), "float32"))
            return y

    built = pyir.build(Mod)
    path = tmp_path / "inc.so"
    built.export_library(path)
    x = np.arange(4, dtype=np.float32)
    for lib in (built, pyir.load_module(path)):
        for obj in (lib, lib["inc"], lib["main"]):
            assert copy.copy(obj) is obj
            assert copy.deepcopy({"held": obj})["held"] is obj
            with pytest.raises(TypeError) as info:
                pickle.dumps(obj)
            assert isinstance(info.value, pyir.Error)
            assert str(info.value) == (
                f"cannot pickle {obj!r}: it holds native code loaded in this process; save "
                "the executable with lib.export_library(path) and load it elsewhere with "
                "pyir.load_module(path)")
        np.testing.assert_array_equal(copy.deepcopy(lib)["main"](x), x + 1)
