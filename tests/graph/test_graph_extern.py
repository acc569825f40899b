"""Native kernels declared with pyir.ffi.extern: a C kernel built here with the system C
compiler and an LLVM IR kernel, called from Python, from graph code and from a prim
function through T.call_extern, with the argument checks of compiled functions (a buffer a
kernel may write must be writeable); built and exported (the exported library links the C
kernel's library)."""

import ctypes
import inspect
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyir
from pyir.ir import StringImm, assert_structural_equal, rewrite
from pyir.script import ParseError
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T

from llvm_kernels import dot4_ir, rows_sum_ir

C_SOURCE = r"""
#include <stdint.h>
void saxpy(float a, const float *x, const float *y, float *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = a * x[i] + y[i];
}
"""


@pytest.fixture(scope="module")
def saxpy(c_library):
    lib = c_library(C_SOURCE)

    @pyir.ffi.extern("test.saxpy", symbol=lib.saxpy, override=True)
    def kernel(a: T.float32, x: T.Buffer(("n",), "float32"), y: T.Buffer(("n",), "float32"),
               out: T.Buffer(("n",), "float32"), n: T.int64): ...

    return kernel


@pytest.fixture(scope="module")
def dot4():
    @pyir.ffi.extern("test.dot4", llvm_ir=dot4_ir("test_dot4"), override=True)
    def kernel(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32"),
               out: T.Buffer((1,), "float32")): ...

    return kernel


def test_c_kernel_from_python(saxpy):
    x, y = np.arange(5, dtype="float32"), np.ones(5, "float32")
    out = np.empty(5, "float32")
    pyir.ffi.get_global_func("test.saxpy")(2.0, x, y, out)
    np.testing.assert_array_equal(out, 2 * x + 1)


def test_c_kernel_argument_checks(saxpy):
    x = np.ones(5, "float32")
    with pytest.raises(pyir.Error, match="shape variable n is 5 from x.shape.0. but 3"):
        saxpy(2.0, x, x[:3], np.empty(5, "float32"))
    with pytest.raises(TypeError, match="argument 'y' expects dtype float32"):
        saxpy(2.0, x, x.astype("float64"), np.empty(5, "float32"))
    with pytest.raises(TypeError, match="takes 4 argument"):
        saxpy(x, x, x)


def test_llvm_ir_kernel_from_python(dot4):
    x, y = np.arange(4, dtype="float32"), np.full(4, 2, "float32")
    out = np.empty(1, "float32")
    dot4(x, y, out)
    assert out[0] == 12
    with pytest.raises(ValueError, match="expects shape \\(4,\\)"):
        dot4(np.ones(5, "float32"), y, out)


def test_kernels_from_graph_code(saxpy, dot4, build_as):
    pyir.ffi.register_func("test.three", lambda: 3.0, override=True)

    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32"),
                 u: R.Tensor((4,), "float32")):
            a = R.call_packed("test.three", sinfo_args=R.Prim("float32"))
            z = R.call_dps_packed("test.saxpy", (a, x, y), out_sinfo=R.Tensor((n,), "float32"))
            d = R.call_dps_packed("test.dot4", (u, u), out_sinfo=R.Tensor((1,), "float32"))
            return (z, d)

    lib = build_as(Mod)
    x, y, u = np.arange(6, dtype="float32"), np.ones(6, "float32"), np.arange(4, dtype="float32")
    z, d = lib["main"](x, y, u)
    np.testing.assert_array_equal(z, 3 * x + 1)
    np.testing.assert_array_equal(d, [14])
    with pytest.raises(ValueError, match="argument 'u' expects shape \\(4,\\)"):
        lib["main"](x, y, np.ones(3, "float32"))


def test_a_typed_constant_reaches_a_c_kernel_as_its_scalar(saxpy, build_as):
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")):
            z = R.call_dps_packed("test.saxpy", (R.prim_value(2.5, "float32"), x, y),
                                  out_sinfo=R.Tensor((n,), "float32"))
            return z

    x, y = np.arange(6, dtype="float32"), np.ones(6, "float32")
    np.testing.assert_array_equal(build_as(Mod)["main"](x, y), 2.5 * x + 1)


@I.ir_module
class Both:
    @T.prim_func
    def both(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32"),
             out: T.Buffer((8,), "float32"), d: T.Buffer((1,), "float32")):
        T.call_extern("test.saxpy", T.float32(2), x, y, out, T.int64(8), dtype="void")
        T.call_extern("test.dot4", x, y, d, dtype="void")


def test_kernels_from_a_prim_function_via_call_extern(saxpy, dot4, build_as):
    lib = build_as(Both)
    x, y = np.arange(8, dtype="float32"), np.ones(8, "float32")
    out, d = np.empty(8, "float32"), np.empty(1, "float32")
    lib["both"](x, y, out, d)
    np.testing.assert_array_equal(out, 2 * x + 1)
    assert d[0] == 6
    assert pyir.script.from_source(Both.script()).script() == Both.script()


def test_a_declared_kernel_is_called_as_void_without_a_dtype(saxpy, dot4):
    """``T.call_extern(name, ...)`` as DESIGN.md writes it: a kernel declared with
    pyir.ffi.extern returns nothing. It defaulted to an int32 result and was refused."""
    src = Both.script().replace(', dtype="void")', ")")
    assert src.count("T.call_extern(") == 2 and 'dtype="void"' not in src
    mod = pyir.script.from_source(src)
    assert pyir.ir.structural_equal(mod, Both)
    lib = pyir.build(mod)
    x, y = np.arange(8, dtype="float32"), np.ones(8, "float32")
    out, d = np.empty(8, "float32"), np.empty(1, "float32")
    lib["both"](x, y, out, d)
    np.testing.assert_array_equal(out, 2 * x + 1)
    assert d[0] == 6


def test_an_undeclared_name_is_called_for_an_int32_status():
    f = _calling('T.call_extern("test.declared_later", x)')
    (call,) = [n for n in pyir.ir.walk(f.body) if isinstance(n, pyir.ir.Call)]
    assert call.dtype == "int32"


def test_a_graph_call_that_does_not_fit_the_kernel_is_reported_at_the_call(dot4):
    """It was reported only by pyir.build, without the line."""
    with pytest.raises(ParseError) as info:
        @R.function
        def main(u: R.Tensor((4,), "float32")):
            d = R.call_dps_packed("test.dot4", (u,), out_sinfo=R.Tensor((1,), "float32"))
            return d
    line = inspect.currentframe().f_lineno - 2
    err = info.value
    assert (err.filename, err.line) == (__file__, line)
    assert "graph function main, binding d: test.dot4 takes 3 argument(s) (x, y, out) with " \
           "its outputs, but the call passes 2" in err.message


@pytest.mark.parametrize("args, words", [
    ("(u, u, u)", "graph function main, binding d: test.dot4 takes 3 argument(s) (x, y, out) "
                  "with its outputs, but the call passes 4"),
    ("(u, v)", "graph function main, binding d: test.dot4 parameter 'y': dimension 0 must be "
               "4, the value passed has 3"),
    ("(u, w)", "graph function main, binding d: test.dot4 parameter 'y' expects float32 with 1 "
               "dimension(s), got R.Tensor((4,), \"int32\")"),
])
def test_a_kernel_call_in_module_text_that_does_not_fit_names_its_line(dot4, args, words):
    text = textwrap.dedent(f"""\
        from pyir.script import ir as I, graph as R

        @I.ir_module
        class Module:
            @R.function
            def main(u: R.Tensor((4,), "float32"), v: R.Tensor((3,), "float32"),
                     w: R.Tensor((4,), "int32")):
                d = R.call_dps_packed("test.dot4", {args}, out_sinfo=R.Tensor((1,), "float32"))
                return d
        """)
    with pytest.raises(ParseError) as info:
        pyir.script.from_source(text, "kernels.py")
    err = info.value
    assert (err.filename, err.line) == ("kernels.py", 8)
    assert words in err.message
    assert f"    8 | d = R.call_dps_packed(\"test.dot4\", {args}," in str(err)


def test_an_llvm_ir_kernel_is_linked_into_the_module(dot4):
    assert "define void @test_dot4" in pyir.build(Both).source("llvm")


CHILD = """
    import sys
    import numpy as np
    import pyir
    lib = pyir.load_module(sys.argv[1])
    x, y = np.arange(8, dtype="float32"), np.ones(8, "float32")
    out, d = np.empty(8, "float32"), np.empty(1, "float32")
    lib["both"](x, y, out, d)
    print(out.tolist(), d.tolist())
"""


def test_an_exported_library_finds_the_c_kernel_in_a_process_that_never_loaded_it(
        saxpy, dot4, tmp_path):
    path = tmp_path / "both.so"
    pyir.build(Both).export_library(path)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), str(path)],
                          check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{[2.0 * i + 1 for i in range(8)]} [6.0]\n"


def test_a_kernel_outside_any_shared_library_cannot_be_exported(tmp_path):
    """A ctypes callback of a Python function runs under the JIT, but no library holds it."""
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
    seen = []
    callback = proto(lambda ptr, n: seen.append(n))

    @pyir.ffi.extern("test.pycb", symbol=callback, override=True)
    def kernel(x: T.Buffer(("n",), "float32"), n: T.int64): ...

    @T.prim_func
    def call_cb(x: T.Buffer((5,), "float32")):
        T.call_extern("test.pycb", x, T.int64(5), dtype="void")

    lib = pyir.build(call_cb)
    lib["call_cb"](np.zeros(5, "float32"))
    assert seen == [5]
    with pytest.raises(pyir.Error, match="calls native kernel 'test.pycb', whose address "
                       "0x[0-9a-f]+ is in no shared library"):
        lib.export_library(tmp_path / "cb.so")
    assert not (tmp_path / "cb.so").exists()


def test_declaration_reads_names_from_where_it_is_written():
    """Annotations may use the enclosing function's variables, as in ``@T.prim_func``."""
    def declare(lanes):
        text = dot4_ir("test_dot4").replace("@test_dot4", f"@test_dot{lanes}")
        text = text.replace("<4 x float>", f"<{lanes} x float>").replace("v4f32", f"v{lanes}f32")

        @pyir.ffi.extern(f"test.dot{lanes}", llvm_ir=text, override=True)
        def kernel(x: T.Buffer((lanes,), "float32"), y: T.Buffer((lanes,), "float32"),
                   out: T.Buffer((1,), "float32")): ...
        return kernel

    dot8 = declare(8)
    x, out = np.arange(8, dtype="float32"), np.empty(1, "float32")
    dot8(x, x, out)
    assert out[0] == float(x @ x)
    with pytest.raises(ValueError, match="expects shape \\(8,\\)"):
        dot8(np.ones(4, "float32"), x, out)


def test_a_function_named_like_the_c_function_of_a_kernel_it_calls_is_exported(saxpy,
                                                                                tmp_path):
    """Export refused it: the module's entry was @saxpy, the name the call to the C library's
    saxpy takes in the library (entries are named apart now: `abi.entry_symbol`)."""
    @T.prim_func
    def saxpy(x: T.Buffer((8,), "float32"), out: T.Buffer((8,), "float32")):
        T.call_extern("test.saxpy", T.float32(2), x, x, out, T.int64(8), dtype="void")

    pyir.build(saxpy).export_library(tmp_path / "named.so")
    x, out = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    pyir.load_module(tmp_path / "named.so")["saxpy"](x, out)
    np.testing.assert_array_equal(out, 3 * x)


def test_a_kernel_library_loaded_by_a_relative_path_from_elsewhere(c_library, tmp_path,
                                                                   monkeypatch):
    built = pathlib.Path(c_library(C_SOURCE.replace("saxpy", "saxpy2"))._name)
    folder = tmp_path / "kernels"
    folder.mkdir()
    shutil.copy(built, folder / "libk2.so")   # a library not loaded yet, by another path
    monkeypatch.chdir(folder)
    lib = ctypes.CDLL("./libk2.so")

    @pyir.ffi.extern("test.saxpy2", symbol=lib.saxpy2, override=True)
    def kernel(a: T.float32, x: T.Buffer(("n",), "float32"), y: T.Buffer(("n",), "float32"),
               out: T.Buffer(("n",), "float32"), n: T.int64): ...

    @T.prim_func
    def twice(x: T.Buffer((8,), "float32"), out: T.Buffer((8,), "float32")):
        T.call_extern("test.saxpy2", T.float32(2), x, x, out, T.int64(8), dtype="void")

    exe = pyir.build(twice)
    exe.export_library(tmp_path / "here.so")   # the library is found from its own folder
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pyir.Error, match="'saxpy2' in .*libk2.so, which is not there to link "
                       "against"):
        exe.export_library(tmp_path / "there.so")


def _calling(body_src, params="x: T.Buffer((4,), \"float32\"), d: T.Buffer((1,), \"float32\")"):
    return pyir.script.from_source(
        "from pyir.script import tensor as T\n\n"
        f"@T.prim_func\ndef f({params}):\n    {body_src}\n")


def _undeclared(body, params=None):
    """The prim function calling ``body`` with the kernel's name unknown when it is parsed
    (so that only the build checks the call)."""
    name = re.search(r'T.call_extern\("([^"]+)"', body)[1]
    unknown = body.replace(f'"{name}"', '"test.undeclared"')
    func = _calling(unknown) if params is None else _calling(unknown, params)
    return rewrite(func, lambda n: StringImm(name) if isinstance(n, StringImm)
                   and n.value == "test.undeclared" else None)


#: A call of a name nothing declares: (body, params, what pyir.build says).
UNKNOWN = ('T.call_extern("test.none", x, dtype="void")', None,
           r"calls T.call_extern\('test.none', ...\), but no kernel 'test.none' is declared "
           "with pyir.ffi.extern and the process has no C function of that name")

#: Calls that do not fit what their name is when they are parsed: a kernel, a Python
#: function or a C function of the process (body, params or None, what pyir.build says).
MISMATCHES = [
    ('T.call_extern("test.python", x, dtype="void")', None,
     "'test.python' is a Python function: prim functions call native kernels"),
    ('T.call_extern("test.dot4", x, d, dtype="void")', None,
     r"passes 2 argument\(s\); the kernel takes 3 \(x, y, out\)"),
    ('T.call_extern("test.dot4", x, x, d, dtype="void")',
     'x: T.Buffer((4,), "int32"), d: T.Buffer((1,), "float32")',
     r"argument 1 \(x\) is a float32 buffer, but x is int32"),
    ('T.call_extern("test.dot4", x, x, d, dtype="void")',
     'x: T.Buffer((2,), "float32"), d: T.Buffer((1,), "float32")',
     r"argument 1 \(x\) has 4 elements, but the call passes only 2 of x"),
    ('T.call_extern("test.dot4", x[2], x, d, dtype="void")', None,
     r"argument 1 \(x\) has 4 elements, but the call passes only 2 of x"),
    ('d[0] = T.call_extern("expf", x[0], dtype="float32")', None,
     r"argument 1 is an element of x, which T.call_extern passes by address; a C function of "
     r"the process takes values \(bind the element to a name first\)"),
    ('T.call_extern("test.saxpy", T.float32(2), x, x, x, T.int64(1000), dtype="void")', None,
     r"argument 2 \(x\) has 1000 elements, but the call passes only 4 of x"),
    ('T.call_extern("test.saxpy", T.float64(2), x, x, x, T.int64(4), dtype="void")', None,
     r"argument 1 \(a\) is float32, but the call passes a float64 value"),
    ('T.call_extern("test.saxpy", x, x, x, x, T.int64(4), dtype="void")', None,
     r"argument 1 \(a\) is a float32 scalar, but the call passes buffer x"),
    ('T.call_extern("test.saxpy", d[0], x, x, x, T.int64(4), dtype="void")', None,
     r"argument 1 \(a\) is a float32 scalar, but the call passes an element of d, which "
     "T.call_extern passes by address"),
    ('T.call_extern("test.saxpy", T.float32(1), T.float32(1), x, x, T.int64(4), dtype="void")',
     None, r"argument 2 \(x\) is a buffer, but the call passes a float32 value"),
    # An int32 result, a status, was read from a kernel returning nothing: whatever the
    # register held, and a nonzero value failed the call.
    ('T.call_extern("test.dot4", x, x, d, dtype="int32")', None,
     r"T.call_extern\('test.dot4', ...\) has result dtype int32, but a kernel declared "
     r'with pyir.ffi.extern returns nothing: call it with dtype="void"'),
]


@pytest.mark.parametrize("body, params, message", [UNKNOWN] + MISMATCHES)
def test_a_call_that_does_not_match_the_kernel_is_refused_at_build(saxpy, dot4, body, params,
                                                                   message):
    """Such calls used to build and then crash (a symbol at address 0, too few arguments)
    or read past the memory passed. The function is put together in code (the parser reports
    the calls it can): its call names a name unknown when it is parsed, renamed after."""
    pyir.ffi.register_func("test.python", lambda *a: None, override=True)
    with pytest.raises(pyir.Error, match=message):
        pyir.build(_undeclared(body, params))


@pytest.mark.parametrize("body, params, message", MISMATCHES)
def test_a_call_that_does_not_match_the_kernel_is_reported_at_its_line(saxpy, dot4, body,
                                                                       params, message):
    """Such a call parsed; only pyir.build refused it, without the line."""
    pyir.ffi.register_func("test.python", lambda *a: None, override=True)
    with pytest.raises(ParseError) as info:
        _calling(body) if params is None else _calling(body, params)
    err = info.value
    assert (err.filename, err.line) == ("<string>", 5)
    assert err.message.startswith("prim function f") and re.search(message, err.message)
    _, source, caret = str(err).splitlines()[:3]
    assert source == f"    5 | {body}"
    assert source[caret.index("^"):caret.rindex("^") + 1] == body[body.index("T.call_extern"):]


def test_a_call_that_does_not_match_the_kernel_names_the_file_and_line(dot4):
    """It was reported only by pyir.build, without the line."""
    with pytest.raises(ParseError) as info:
        @I.ir_module
        class Mod:
            @T.prim_func
            def f(x: T.Buffer((4,), "float32"), d: T.Buffer((1,), "float32")):
                for i in range(2):
                    T.call_extern("test.dot4", x, d, dtype="void")
    line = inspect.currentframe().f_lineno - 1
    err = info.value
    assert (err.filename, err.line) == (__file__, line)
    assert err.message == ("prim function f: T.call_extern('test.dot4', ...) passes 2 "
                           "argument(s); the kernel takes 3 (x, y, out)")
    assert f'{line:>5} | T.call_extern("test.dot4", x, d, dtype="void")' in str(err)


def test_a_name_unknown_when_parsed_is_left_to_the_build():
    """A kernel may be declared after the prim functions calling it are parsed, and printed
    text parses where its kernels are not declared; the build checks the call."""
    func = _calling('T.call_extern("test.declared_later", x, x, d, dtype="void")')
    text = func.script()
    assert_structural_equal(pyir.script.from_source(text), func)
    _declare_copy(COPY_IR, "test.declared_later")
    try:
        words = (r"prim function f: T.call_extern\('test.declared_later', ...\) passes 3 "
                 r"argument\(s\); the kernel takes 2 \(x, out\)")
        with pytest.raises(pyir.Error, match=words):
            pyir.build(func)
        with pytest.raises(ParseError, match=words) as info:
            pyir.script.from_source(text)
        assert text.splitlines()[info.value.line - 1].strip().startswith(
            'T.call_extern("test.declared_later"')
    finally:
        pyir.ffi.remove_global_func("test.declared_later")


def test_a_c_function_of_the_process_is_called_by_its_name():
    func = _calling('d[0] = T.call_extern("expf", T.float32(1), dtype="float32")')
    d = np.zeros(1, "float32")
    pyir.build(func)["f"](np.zeros(4, "float32"), d)
    np.testing.assert_allclose(d, [np.e], rtol=1e-6)


def _declare_copy(ir, name="test.copy1"):
    @pyir.ffi.extern(name, llvm_ir=ir, override=True)
    def kernel(x: T.Buffer((1,), "float32"), out: T.Buffer((1,), "float32")): ...
    return kernel


COPY_IR = """define void @test_copy1(ptr %x, ptr %out) {
  %a = load float, ptr %x
  store float %a, ptr %out
  ret void
}
"""


@pytest.mark.parametrize("ir, words", [
    (COPY_IR.replace("load float", "lod float"),
     "LLVM cannot read the IR text: line 2, column 8: expected instruction opcode"),
    (COPY_IR.replace("(ptr %x, ptr %out)", "(ptr %out)").replace("ptr %x", "ptr %out"),
     r"@test_copy1 takes \(ptr\), but the declaration passes \(buffer x, buffer out\), that "
     r"is \(ptr, ptr\)"),
    (COPY_IR.replace("  ret void", "  call void @nowhere_defined(ptr %x)\n  ret void")
     + "declare void @nowhere_defined(ptr)\n",
     "the LLVM IR uses @nowhere_defined, which neither it nor the process defines"),
    (COPY_IR.replace("  ret void", "  call void @environ()\n  ret void")
     + "declare void @environ()\n",
     "the LLVM IR calls @environ, which the process defines as data, not as a function"),
    (COPY_IR.replace("define void", "define i32").replace("ret void", "ret i32 0"),
     r"@test_copy1 returns i32; a kernel returns nothing \(void\)"),
])
def test_an_llvm_ir_kernel_is_checked_where_it_is_declared(ir, words):
    """Each was accepted: the bad text failed at the first build, in the words of a module
    that line numbers did not match; the missing parameter read memory that was not the
    buffer's, the undefined function was called at address 0 and the data symbol as code,
    and an i32 result was taken as void by the kernel's own wrapper."""
    with pytest.raises(pyir.Error, match=r"^pyir.ffi.extern\('test.bad'\): " + words):
        _declare_copy(ir, "test.bad")
    assert pyir.ffi.get_global_func("test.bad", allow_missing=True) is None


def test_two_kernels_may_not_define_one_llvm_function_differently():
    """Linked into one module, the second kernel's call went to the first's function."""
    _declare_copy(COPY_IR)
    with pytest.raises(pyir.Error, match=r"the LLVM IR defines @test_copy1, as kernel "
                       r"'test.copy1' does differently"):
        _declare_copy(COPY_IR.replace("store float %a", "%b = fadd float %a, 1.0\n  store "
                                      "float %b"), "test.copy2")


def test_an_llvm_ir_file_as_clang_writes_it_is_a_kernel():
    """Its module header lines (target, source file) are blanked: the kernel is linked into
    modules that have their own."""
    header = ('source_filename = "copy.c"\ntarget datalayout = "e-m:e-i64:64"\n'
              'target triple = "x86_64-unknown-linux-gnu"\n')
    kernel = _declare_copy(header + COPY_IR.replace("@test_copy1", '@"test copy"'),
                           "test.copy_clang")
    out = np.zeros(1, "float32")
    kernel(np.array([3.0], "float32"), out)
    assert out[0] == 3.0


@pytest.mark.parametrize("symbol", [1234, "saxpy", ctypes.c_void_p(1234), len])
def test_symbol_must_be_a_ctypes_function(symbol):
    """An int, a string or a raw address was taken as the kernel and called: a crash."""
    with pytest.raises(pyir.Error, match=r"symbol= must be a ctypes function \(such as "
                       r"ctypes.CDLL\(path\).name\), got "):
        @pyir.ffi.extern("test.bad_symbol", symbol=symbol, override=True)
        def kernel(x: T.Buffer((1,), "float32")): ...


def test_symbol_must_be_code():
    """ctypes makes a function of any symbol: the process's data ``environ`` was called."""
    with pytest.raises(pyir.Error, match=r"symbol= must be a ctypes function with the address "
                       r"of code, got <_FuncPtr object at 0x[0-9a-f]+> at 0x[0-9a-f]+, which is "
                       r"data"):
        @pyir.ffi.extern("test.data_symbol", symbol=ctypes.CDLL(None).environ)
        def kernel(x: T.Buffer((1,), "float32")): ...


def test_a_data_symbol_of_the_process_is_no_c_function():
    """``environ`` was called as a function: a crash."""
    with pytest.raises(pyir.Error, match=r"no kernel 'environ' is declared with pyir.ffi.extern "
                       r"and the process has no C function of that name \('environ' is data\)"):
        pyir.build(_calling('T.call_extern("environ", dtype="void")'))


#: A kernel as clang -O2 -S -emit-llvm writes it: attribute groups, numbered metadata (type
#: based alias analysis), module flags and a constant of its own, all numbered and named
#: from 0 as in every such file.
CLANG_IR = """source_filename = "scale.c"
@scale = internal constant float FACTOR, align 4
define void @NAME(ptr nocapture readonly %x, ptr nocapture writeonly %out) #0 {
  %s = load float, ptr @scale, align 4, !tbaa !2
  %a = load float, ptr %x, align 4, !tbaa !2
  %b = fmul float %a, %s
  store float %b, ptr %out, align 4, !tbaa !2
  ret void
}
attributes #0 = { nounwind "frame-pointer"="none" }
!llvm.module.flags = !{!0}
!llvm.ident = !{!1}
!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{!"clang version 18 \\22#1 !1\\22"}
!2 = !{!3, !3, i64 0}
!3 = !{!"float", !4, i64 0}
!4 = !{!"omnipotent char", !5, i64 0}
!5 = !{!"Simple C/C++ TBAA"}
"""


def test_two_clang_kernels_link_into_one_module():
    """Appended to the same compile unit, the second kernel's !0, #0 and @scale were defined
    twice (LLVM: "Metadata id is already used"); the unit's own loop metadata (the
    vectorized loop) takes numbers from 0 as well."""
    for name, factor in (("test_scale2", "2.0"), ("test_scale3", "3.0")):
        _declare_copy(CLANG_IR.replace("NAME", name).replace("FACTOR", factor),
                      f"test.{name}")
    func = _calling('for i in range(4):\n'
                    '        T.call_extern("test.test_scale2", x[i], y[i], dtype="void")\n'
                    '    for i in range(4):\n'
                    '        T.call_extern("test.test_scale3", y[i], z[i], dtype="void")\n'
                    '    for i in T.vectorized(64):\n'
                    '        w[i] = w[i] + T.float32(1)',
                    'x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32"), '
                    'z: T.Buffer((4,), "float32"), w: T.Buffer((64,), "float32")')
    x, y, z, w = np.arange(4, dtype="float32"), *np.zeros((2, 4), "float32"), \
        np.zeros(64, "float32")
    pyir.build(func)["f"](x, y, z, w)
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(z, x * 6)
    np.testing.assert_array_equal(w, np.ones(64))


@pytest.mark.parametrize("symbol", ["memcpy", "pyir.entry.f"])
def test_a_kernel_may_not_replace_a_function_of_the_process(symbol):
    """Linked into a module, @memcpy replaced the C library's for the whole module (LLVM
    itself emits memcpy calls); @"pyir.entry.f" would be the entry of a function f."""
    with pytest.raises(pyir.Error, match=rf"the LLVM IR defines @{re.escape(symbol)}, which "
                       r"the process or pyir's runtime defines"):
        _declare_copy(COPY_IR.replace("@test_copy1", f'@"{symbol}"'), "test.replaces")


def test_a_kernel_may_not_take_the_name_of_a_function_of_the_module():
    """@f.impl is the name of f's body in the module: a raw llvmlite error."""
    _declare_copy(COPY_IR.replace("@test_copy1", "@f.impl"), "test.named_impl")
    with pytest.raises(pyir.Error, match=r"kernel 'test.named_impl' defines LLVM function "
                       r"@f.impl, a name the code of function f takes"):
        pyir.build(_calling('T.call_extern("test.named_impl", x, d, dtype="void")'))


EXP_IR = """define void @test_exp1(ptr %x, ptr %out) {
  %a = load float, ptr %x
  %e = call float @expf(float %a)
  store float %e, ptr %out
  ret void
}
declare float @expf(float)
"""


def test_a_kernel_and_its_caller_may_both_declare_a_c_function():
    """The module declared expf twice: LLVM refused it."""
    _declare_copy(EXP_IR, "test.exp1")
    func = _calling('T.call_extern("test.exp1", x, d, dtype="void")\n'
                    '    d[0] = d[0] + T.call_extern("expf", T.float32(0), dtype="float32")')
    x, d = np.full(4, 1, "float32"), np.zeros(1, "float32")
    pyir.build(func)["f"](x, d)
    np.testing.assert_allclose(d, [np.e + 1], rtol=1e-6)


def test_a_c_function_called_with_two_signatures_is_refused():
    func = _calling('d[0] = T.call_extern("expf", T.float32(1), dtype="float32") + '
                    'T.cast(T.call_extern("expf", T.float64(1), dtype="float64"), "float32")')
    with pytest.raises(pyir.Error, match=r"T.call_extern\('expf', ...\) is called as double "
                       r"\(double\) here and as float \(float\) elsewhere in the module"):
        pyir.build(func)


@pytest.mark.parametrize("call, words", [
    (lambda: pyir.ffi.get_global_func(5), "get_global_func needs a non-empty string name, got 5"),
    (lambda: pyir.ffi.remove_global_func(["a"]),
     r"remove_global_func needs a non-empty string name, got \['a'\]"),
    (lambda: pyir.ffi.extern("bad\nname", llvm_ir=COPY_IR),
     r"a kernel's name is ASCII letters, digits, '_', '.' and '-'"),
    (lambda: pyir.ffi.extern("test.not_a_function", llvm_ir=COPY_IR)(len),
     r"decorates a function declaring the kernel's parameters .* not "
     r"builtin_function_or_method"),
])
def test_registry_and_extern_arguments_are_checked(call, words):
    """Each was a raw AttributeError or TypeError from inside the registry or the parser,
    or (a name with a newline) a broken argument binder at the first call."""
    with pytest.raises(pyir.Error, match=words):
        call()


def test_a_kernel_called_on_empty_arrays(saxpy):
    """The kernel's own call passed each buffer as the address of its element 0, which the
    entry checks read as an access: n = 0 was refused ("x is read up to index 0")."""
    empty = np.zeros(0, "float32")
    saxpy(np.float32(2), empty, empty, np.zeros(0, "float32"))


@pytest.mark.parametrize("body, params, words", [
    # dot4 reads 4 elements from x[i]: x[7] reaches x[10]. Built, it read past x.
    ('for i in range(8):\n        T.call_extern("test.dot4", x[i], x, d, dtype="void")',
     'x: T.Buffer((8,), "float32"), d: T.Buffer((1,), "float32")',
     r"argument 1 reaches 4 elements of x from x\[i\], up to element 10: past its 8 elements"),
    # The reach check took the first element only for a declared shape with a variable:
    # rows_sum from x[2, 0] read row 4 of a 4-row x.
    ('for i in range(2):\n        T.call_extern("test.rows_sum", x[i * 2, 0], d, T.int64(8), '
     'dtype="void")', 'x: T.Buffer((4, 8), "float32"), d: T.Buffer((1,), "float32")',
     r"argument 1 reaches 24 elements of x from x\[i \* 2, 0\], up to element 39: past its 32 "
     "elements"),
    ('T.call_extern("test.rows_sum", x, d, T.int64(-8), dtype="void")',
     'x: T.Buffer((4, 8), "float32"), d: T.Buffer((1,), "float32")',
     "argument 1 takes -8 as an extent of x: an extent is at least 0"),
])
def test_a_kernel_reaching_past_a_buffer_is_refused_at_build(dot4, rows_sum, body, params,
                                                             words):
    with pytest.raises(pyir.Error, match=words):
        pyir.build(_calling(body, params))


def test_a_kernel_reaching_into_a_symbolic_buffer_is_an_entry_condition(dot4):
    func = _calling('T.call_extern("test.dot4", x, x, d, dtype="void")',
                    'x: T.Buffer(("n",), "float32"), d: T.Buffer((1,), "float32")')
    lib = pyir.build(func)
    d = np.zeros(1, "float32")
    lib["f"](np.arange(4, dtype="float32"), d)
    assert d[0] == 14
    with pytest.raises(pyir.ArgumentValueError, match=r"f: kernel 'test.dot4' reaches x up to "
                       r"element 3: requires n >= 4, but n = 2"):
        lib["f"](np.arange(2, dtype="float32"), d)


def test_reads_inside_a_kernel_call_s_scalar_arguments_are_checked(saxpy):
    """The arguments of a call are visited for their reads as any expression is: d[3] of a
    one-element d is out of bounds for every call, and the build says so."""
    func = _calling('T.call_extern("test.saxpy", d[3] * T.float32(1), x, x, x, T.int64(4), '
                    'dtype="void")')
    with pytest.raises(pyir.Error, match=r"^prim function f: d is read up to index 3 in "
                       r"dimension 0 of d, out of bounds for every call$"):
        pyir.build(func)


def test_a_native_call_in_a_vectorized_loop_builds_quietly(capfd):
    """The loop kept LLVM's vectorize hint, and LLVM printed "loop not vectorized: call
    instruction cannot be vectorized" to stderr."""
    func = pyir.script.from_source(
        "from pyir.script import tensor as T\n\n"
        "@T.prim_func\ndef f(x: T.Buffer((16,), \"float32\"), y: T.Buffer((16,), \"float32\")):\n"
        "    for i in T.vectorized(16):\n"
        "        with T.block(\"y\"):\n"
        "            vi = T.axis.remap(\"S\", [i])\n"
        "            v = x[vi]\n"
        "            y[vi] = T.call_extern(\"expf\", v, dtype=\"float32\")\n")
    x, y = np.linspace(0, 1, 16).astype("float32"), np.zeros(16, "float32")
    pyir.build(func, use_cache=False)["f"](x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    assert "not vectorized" not in capfd.readouterr().err


def _read_only(values):
    """A float32 array over an immutable bytes object: numpy marks it not writeable."""
    return np.frombuffer(np.asarray(values, "float32").tobytes(), "float32")


def test_a_c_kernel_refuses_a_read_only_array_for_a_buffer_it_may_write(saxpy):
    """The kernel's wrapper stores nothing, so no parameter was marked written: a read-only
    ``out`` was accepted and the kernel wrote into the bytes object's memory."""
    x, out = np.ones(4, "float32"), _read_only([5, 6, 7, 8])
    with pytest.raises(pyir.ArgumentValueError, match=r"test.saxpy: argument 'out' is a "
                       r"read-only array \(not writeable\), but it is passed to kernel "
                       r"test.saxpy as out, which the kernel may write \(nothing says it only "
                       r"reads out: declare what it writes with pyir.ffi.extern\(\.\.\., "
                       r"writes=\.\.\.\)\)"):
        saxpy(2.0, x, x, out)
    np.testing.assert_array_equal(out, [5, 6, 7, 8])
    with pytest.raises(pyir.ArgumentValueError, match=r"argument 'x' is a read-only array"):
        saxpy(2.0, _read_only(x), x, np.empty(4, "float32"))
    assert saxpy.writes == {"x", "y", "out"} and saxpy.writes_assumed


def test_a_c_kernel_declared_to_write_only_out_accepts_read_only_inputs(c_library):
    """``writes=`` did not exist: nothing could say which buffers a C kernel only reads."""
    lib = c_library(C_SOURCE)

    @pyir.ffi.extern("test.saxpy_out", symbol=lib.saxpy, writes="out", override=True)
    def kernel(a: T.float32, x: T.Buffer(("n",), "float32"), y: T.Buffer(("n",), "float32"),
               out: T.Buffer(("n",), "float32"), n: T.int64): ...

    assert kernel.writes == {"out"} and not kernel.writes_assumed
    x, out = _read_only([1, 2, 3]), np.empty(3, "float32")
    kernel(2.0, x, x, out)
    np.testing.assert_array_equal(out, [3, 6, 9])
    with pytest.raises(pyir.ArgumentValueError, match=r"argument 'out' is a read-only array "
                       r"\(not writeable\), but it is passed to kernel test.saxpy_out as out, "
                       r"which the kernel may write \(its declaration names out in writes=\)"):
        kernel(2.0, x, x, _read_only([0, 0, 0]))
    y = np.ones(3, "float32")
    with pytest.raises(pyir.ArgumentValueError, match=r"argument 'out' overlaps argument 'y' "
                       r"in memory, and it is passed to kernel test.saxpy_out as out"):
        kernel(2.0, x, y, y)


def test_an_llvm_ir_kernel_writes_what_llvm_cannot_prove_it_only_reads(dot4):
    """dot4's wrapper marked nothing written: a read-only ``out`` was accepted and the
    kernel stored its result into the bytes object's memory."""
    assert dot4.writes == {"out"} and not dot4.writes_assumed
    x, out = _read_only([1, 2, 3, 4]), np.empty(1, "float32")
    dot4(x, x, out)
    assert out[0] == 30
    done = _read_only([7])
    with pytest.raises(pyir.ArgumentValueError, match=r"test.dot4: argument 'out' is a "
                       r"read-only array \(not writeable\), but it is passed to kernel "
                       r"test.dot4 as out, which the kernel may write \(LLVM cannot prove that "
                       r"@test_dot4 only reads out"):
        dot4(x, x, done)
    assert done[0] == 7


@pytest.mark.parametrize("args", ["x, x, d", "x, x, d[0]"])
def test_a_prim_function_passing_its_buffer_to_a_kernel_that_writes_it(dot4, build_as, args):
    """f has no stores: d was not marked written, a read-only d was accepted and the kernel
    wrote into it."""
    lib = build_as(_calling(f'T.call_extern("test.dot4", {args}, dtype="void")'))
    x, d = _read_only([1, 2, 3, 4]), np.zeros(1, "float32")
    lib["f"](x, d)
    assert d[0] == 30
    with pytest.raises(pyir.ArgumentValueError, match=r"f: argument 'd' is a read-only array "
                       r"\(not writeable\), but it is passed to kernel test.dot4 as out, which "
                       r"the kernel may write"):
        lib["f"](x, _read_only([0]))


INPLACE_C = r"""
#include <stdint.h>
void halve_into(float *x, float *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) { out[i] = x[i] / 2; x[i] = 0; }
}
"""

#: halve_into's signature in LLVM IR: it copies x[0] to out[0], and (WRITES_X_IR) zeroes x[0].
COPY_N_IR = """define void @test_copy_n(ptr %x, ptr %out, i64 %n) {
  %a = load float, ptr %x
  store float %a, ptr %out
  ret void
}
"""
WRITES_X_IR = COPY_N_IR.replace("  ret void", "  store float 0.0, ptr %x\n  ret void")


@pytest.mark.parametrize("options, words", [
    (dict(symbol=True, writes="z"), r"writes= names 'z', but the declaration has no buffer "
     r"parameter of that name \(its buffer parameters: x, out\)"),
    (dict(symbol=True, writes=("x", "n")), r"writes= names 'n', but the declaration has no "
     r"buffer parameter"),
    (dict(symbol=True, writes=3), r"writes= names the buffer parameters the kernel writes: a "
     r"str, or a tuple or list of str, got int 3"),
    (dict(symbol=True, writes=["out", b"x"]), r"writes= names the buffer parameters the "
     r"kernel writes: a str, or a tuple or list of str, got list \['out', b'x'\]"),
    (dict(llvm_ir=WRITES_X_IR, writes="out"), r"writes= does not name x, but LLVM cannot "
     r"prove that @test_copy_n only reads it: name it in writes= \(or, if the function only "
     r"reads it, mark it readonly in the IR\)"),
    (dict(llvm_ir=COPY_N_IR, writes=()), r"writes= does not name out, but LLVM cannot prove"),
])
def test_bad_writes_are_refused_where_the_kernel_is_declared(c_library, options, words):
    """writes= did not exist; an LLVM IR kernel writing a buffer it was not declared to write
    would have written a read-only array."""
    if options.pop("symbol", False):
        options["symbol"] = c_library(INPLACE_C).halve_into
    with pytest.raises(pyir.Error, match=r"^pyir.ffi.extern\('test.bad_writes'\): " + words):
        @pyir.ffi.extern("test.bad_writes", override=True, **options)
        def kernel(x: T.Buffer(("n",), "float32"), out: T.Buffer(("n",), "float32"),
                   n: T.int64): ...
    assert pyir.ffi.get_global_func("test.bad_writes", allow_missing=True) is None


@pytest.fixture(scope="module")
def halve_into(c_library):
    @pyir.ffi.extern("test.halve_into", symbol=c_library(INPLACE_C).halve_into,
                     writes=("x", "out"), override=True)
    def kernel(x: T.Buffer(("n",), "float32"), out: T.Buffer(("n",), "float32"),
               n: T.int64): ...

    return kernel


def test_a_kernel_declared_to_write_an_input_is_refused_in_graph_code(halve_into):
    """It built, and the kernel zeroed the caller's array, a read-only one too: graph code
    passes its parameters (and values it uses again) as the inputs of a call."""
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            y = R.call_dps_packed("test.halve_into", (x,), out_sinfo=R.Tensor((n,), "float32"))
            return y

    with pytest.raises(pyir.Error, match=r"graph function main, binding y: kernel "
                       r"test.halve_into writes its input x \(its declaration names x in "
                       r"writes=\), but R.call_dps_packed passes inputs only to be read: they "
                       r"may be arrays the caller passed \(read-only\) or values used again"):
        pyir.build(Mod)


CALL_TIR_OF_F = """
from pyir.script import ir as I, tensor as T, graph as R

@I.ir_module
class Mod:
    @T.prim_func
    def f(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        {body}

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y = R.call_tir(cls.f, (x,), out_sinfo=R.Tensor((4,), "float32"))
        return y
"""


@pytest.mark.parametrize("body, why", [
    ('T.call_extern("test.halve_into", a, b, T.int64(4), dtype="void")',
     r"it passes it to kernel test.halve_into as x: its declaration names x in writes="),
    ("for i in range(4):\n            a[i] = T.float32(0)\n            b[i] = T.float32(1)",
     "it stores into it"),
])
def test_a_prim_function_writing_its_input_is_refused_in_graph_code(halve_into, body, why):
    """Each built, and the graph function wrote into the caller's (read-only) array."""
    mod = pyir.script.from_source(CALL_TIR_OF_F.format(body=body))
    with pytest.raises(pyir.Error, match=r"graph function main, binding y: prim function f "
                       rf"writes its input a \({why}\), but R.call_tir passes inputs only to "
                       r"be read"):
        pyir.build(mod)


@pytest.fixture(scope="module")
def rows_sum():
    @pyir.ffi.extern("test.rows_sum", llvm_ir=rows_sum_ir("test_rows_sum"), writes="out",
                     override=True)
    def kernel(a: T.Buffer((3, "lda"), "float32"), out: T.Buffer((1,), "float32"),
               lda: T.int64): ...

    return kernel


def test_a_kernel_with_a_row_stride_called_in_bounds_matches_numpy(rows_sum):
    func = _calling('for i in range(2):\n        T.call_extern("test.rows_sum", x[i, 0], d, '
                    'T.int64(8), dtype="void")', 'x: T.Buffer((4, 8), "float32"), '
                    'd: T.Buffer((1,), "float32")')
    x, d = np.arange(32, dtype="float32").reshape(4, 8), np.zeros(1, "float32")
    pyir.build(func)["f"](x, d)
    assert d[0] == x[1:4, :4].sum()   # the last call: 4 elements of rows 1 to 3


@pytest.mark.parametrize("params, lda, words", [
    ('x: T.Buffer(("n", 8), "float32"), d: T.Buffer((1,), "float32")', "T.int64(8)",
     r"f: kernel 'test.rows_sum' reaches x up to element 23: requires n \* 8 >= 24, but n = 2"),
    ('x: T.Buffer(("n", "m"), "float32"), d: T.Buffer((1,), "float32")', "m",
     r"f: kernel 'test.rows_sum' reaches x up to index 2 in dimension 0: requires n >= 3, "
     r"but n = 2"),
])
def test_a_kernel_reaching_rows_of_a_symbolic_buffer_is_an_entry_condition(rows_sum, params,
                                                                         lda, words):
    """Rows lda apart reach 2 * lda + lda - 1 elements past the address: n = 2 rows were
    accepted and the kernel read a row past x."""
    lib = pyir.build(_calling(f'T.call_extern("test.rows_sum", x[0, 0], d, {lda}, '
                              'dtype="void")', params))
    x, d = np.arange(24, dtype="float32").reshape(3, 8), np.zeros(1, "float32")
    lib["f"](x, d)
    assert d[0] == x[:, :4].sum()
    with pytest.raises(pyir.ArgumentValueError, match=words):
        lib["f"](x[:2].copy(), d)


def test_a_row_stride_from_a_scalar_parameter_must_not_be_negative(rows_sum):
    lib = pyir.build(_calling('T.call_extern("test.rows_sum", x, d, lda, dtype="void")',
                              'x: T.Buffer((4, 8), "float32"), d: T.Buffer((1,), "float32"), '
                              'lda: T.int64'))
    x, d = np.arange(32, dtype="float32").reshape(4, 8), np.zeros(1, "float32")
    lib["f"](x, d, 10)
    assert d[0] == x.reshape(-1)[[r * 10 + j for r in range(3) for j in range(4)]].sum()
    with pytest.raises(pyir.ArgumentValueError, match=r"kernel 'test.rows_sum' takes lda as "
                       r"an extent of x: requires lda >= 0, but lda = -1"):
        lib["f"](x, d, -1)
    with pytest.raises(pyir.ArgumentValueError, match=r"kernel 'test.rows_sum' reaches x up to "
                       r"element lda \* 3 - 1: requires 32 >= lda \* 3, but lda = 11"):
        lib["f"](x, d, 11)


COPY_N_IR = COPY_IR.replace("@test_copy1", "@test_copy_n")


@pytest.fixture(scope="module")
def copy_n():
    """A kernel whose buffers have n elements, n not among its parameters: graph code gives
    it from the arrays' shapes, a prim function's call only by passing a whole buffer."""
    @pyir.ffi.extern("test.copy_n", llvm_ir=COPY_N_IR, writes="out", override=True)
    def kernel(x: T.Buffer(("n",), "float32"), out: T.Buffer(("n",), "float32")): ...

    return kernel


@pytest.mark.parametrize("body", [
    'T.call_extern("test.copy_n", x[1], d[0], dtype="void")',
    'T.call_extern("test.copy_n", x[0], x[2], dtype="void")',
])
def test_a_kernel_shape_variable_no_call_argument_gives_is_refused(copy_n, body):
    """Nothing at the call said what n is: the reach was checked at x[1] alone, and the
    kernel could touch n elements from there, past x."""
    words = (r"prim function f: T.call_extern\('test.copy_n', ...\): argument 1 \(x\) has "
             r"shape \(n\), and nothing at the call says what n is: kernel 'test.copy_n' takes "
             r"no scalar n and the call passes no whole buffer where its declaration has n as "
             r"an extent; declare n: T.int64 as a parameter of the kernel \(it then receives "
             r"n, which graph code fills from the shapes\) or pass a whole buffer there")
    with pytest.raises(ParseError, match=words):
        _calling(body, 'x: T.Buffer((4,), "float32"), d: T.Buffer((4,), "float32")')
    with pytest.raises(pyir.Error, match=words):
        pyir.build(_undeclared(body, 'x: T.Buffer((4,), "float32"), '
                               'd: T.Buffer((4,), "float32")'))


def test_a_whole_buffer_gives_a_kernel_shape_variable(copy_n):
    """n is x's extent: the kernel reaches 4 elements of d from d[1], past its end. It was
    accepted and checked at d[1] alone."""
    with pytest.raises(ParseError, match=r"argument 2 \(out\) has 4 elements, but the call "
                       "passes only 3 of d"):
        _calling('T.call_extern("test.copy_n", x, d[1], dtype="void")',
                 'x: T.Buffer((4,), "float32"), d: T.Buffer((4,), "float32")')
    lib = pyir.build(_calling('T.call_extern("test.copy_n", x, d[1], dtype="void")',
                              'x: T.Buffer(("m",), "float32"), d: T.Buffer(("p",), "float32")'))
    x, d = np.arange(1, 5, dtype="float32"), np.zeros(5, "float32")
    lib["f"](x, d)
    np.testing.assert_array_equal(d, [0, 1, 0, 0, 0])
    with pytest.raises(pyir.ArgumentValueError, match=r"f: kernel 'test.copy_n' reaches d up "
                       r"to index m in dimension 0: requires p >= m \+ 1, but p = 4, m = 4"):
        lib["f"](x, np.zeros(4, "float32"))


def test_a_kernel_shape_variable_is_given_by_graph_code(copy_n):
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            y = R.call_dps_packed("test.copy_n", (x,), out_sinfo=R.Tensor((n,), "float32"))
            return y

    out = pyir.build(Mod)["main"](np.arange(3, 6, dtype="float32"))
    assert out.shape == (3,) and out[0] == 3
