"""Where prim functions come from: indented definitions, notebook cells, `from_source`
text (which is only parsed, never run), and the runtime ``T`` namespace."""

import inspect
import linecache
import textwrap

import numpy as np
import pytest

import pyir
from pyir.ir import PrimFunc, assert_structural_equal
from pyir.ir import dtype as dt
from pyir.script import ParseError, from_source
from pyir.script import tensor as T
from pyir.script.parser.tensor_builtins import KNOWN_NAMES


@pytest.mark.parametrize("where", ["annotation", "shape", "shape string", "body", "extent",
                                   "default", "decorator", "module class"])
def test_from_source_never_executes(tmp_path, where):
    marker = tmp_path / "executed"
    call = f"__import__('os').system('touch {marker}')"
    header = "from pyir.script import ir as I, tensor as T\n\n"
    texts = {
        "annotation": f"@T.prim_func\ndef f(A: {call}):\n    T.evaluate(0)\n",
        "shape": f"@T.prim_func\ndef f(A: T.Buffer(({call},), 'float32')):\n    T.evaluate(0)\n",
        "shape string": f"@T.prim_func\ndef f(A: T.Buffer(({call!r},), 'float32')):\n"
                        "    T.evaluate(0)\n",
        "body": f"@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    T.evaluate({call})\n",
        "extent": f"@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n"
                  f"    for i in range({call}):\n        A[i] = 0.0\n",
        "default": f"@T.prim_func\ndef f(A: T.Buffer((4,), 'float32') = {call}):\n"
                   "    T.evaluate(0)\n",
        "decorator": f"@{call}\ndef f(A: T.Buffer((4,), 'float32')):\n    T.evaluate(0)\n",
        "module class": f"@I.ir_module\nclass M:\n    x = {call}\n",
    }
    with pytest.raises(ParseError) as info:
        from_source(header + texts[where])
    assert info.value.filename == "<string>"
    assert info.value.line >= 3
    assert not marker.exists()


def test_indented_definition_has_file_line_numbers():
    def build():
        @T.prim_func
        def inner(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = A[i] + 1.0
        return inner

    func = build()
    assert isinstance(func, PrimFunc)
    assert func.name == "inner"
    lines, start = inspect.getsourcelines(test_indented_definition_has_file_line_numbers)
    needle = "return" + " A"  # split so that this line does not match itself
    bad_line = start + next(k for k, line in enumerate(lines) if line.strip() == needle)
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            return A
    assert info.value.filename == __file__
    assert info.value.line == bad_line
    assert info.value.col == 12
    assert "return A" in str(info.value)


def _run_cell(filename, text):
    """Run ``text`` the way IPython runs a cell: source registered in linecache first."""
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {}
    try:
        exec(compile(text, filename, "exec"), namespace)
    finally:
        del linecache.cache[filename]
    return namespace


CELL = """\
from pyir.script import tensor as T
TS = 8

@T.prim_func
def cell_func(A: T.Buffer((TS,), "float32")):
    for i in range(TS):
        A[i] = A[i] * 2.0
"""


def test_notebook_cell_parses():
    namespace = _run_cell("<ipython-input-1-abc>", CELL)
    func = namespace["cell_func"]
    assert isinstance(func, PrimFunc)
    assert_structural_equal(func, from_source(func.script()))
    assert "T.Buffer((8,), \"float32\")" in func.script()


def test_notebook_cell_error_points_at_cell_line():
    text = CELL.replace("A[i] * 2.0", "A[i] * B[i]")
    with pytest.raises(ParseError) as info:
        _run_cell("<ipython-input-2-def>", text)
    err = info.value
    assert err.filename == "<ipython-input-2-def>"
    assert err.line == 7
    assert "undefined variable 'B'" in str(err)
    assert "A[i] = A[i] * B[i]" in str(err)


def test_prim_func_inside_a_decorated_class_body_is_left_to_its_decorator():
    """The decorator (@I.ir_module) parses the class as a whole; in an undecorated class the
    function is parsed at once (test_tensor_errors)."""
    def keep(cls):
        return cls

    @keep
    class Holder:
        @T.prim_func
        def kept(A: T.Buffer((4,), "float32")):
            T.evaluate(0)

    assert callable(Holder.kept) and not isinstance(Holder.kept, PrimFunc)


def test_shape_expression_strings_across_parameters():
    func = from_source(textwrap.dedent("""
        from pyir.script import tensor as T

        @T.prim_func
        def f(B: T.Buffer((n * 2, "m"), "float32"), A: T.Buffer(("n", "m + 1"), "float32")):
            for i, j in T.grid(n * 2, m):
                B[i, j] = A[i // 2, j + 1]
    """))
    n = func.params[1].shape[0]
    assert func.params[0].shape[0] == n * 2
    assert 'B: T.Buffer(("n * 2", "m"), "float32")' in func.script()
    assert_structural_equal(func, from_source(func.script()))


def test_every_parser_name_exists_in_the_t_namespace():
    for name in KNOWN_NAMES:
        obj = T
        for part in name.split("."):
            obj = getattr(obj, part)
    for name in dt.DTYPES:
        assert repr(getattr(T, name)) == f"T.{name}"


@pytest.mark.parametrize("name", ["grid", "max", "exp", "axis.remap", "float32", "evaluate"])
def test_t_builtins_refuse_to_run_outside_prim_functions(name):
    obj = T
    for part in name.split("."):
        obj = getattr(obj, part)
    with pytest.raises(pyir.Error, match=f"T.{name} is only valid inside @T.prim_func"):
        obj(1)


def test_buffer_annotation_is_harmless():
    """T.Buffer keeps its arguments as written, any of them: the parser checks them."""
    ann = T.Buffer(("n", 4), "float16", scope="local")
    assert (ann.args, ann.kwargs) == ((("n", 4), "float16"), {"scope": "local"})
    assert repr(ann) == "T.Buffer(('n', 4), 'float16', scope='local')"
    assert repr(T.Buffer()) == "T.Buffer()"


MODULE_V1 = '''from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    A[0] = T.float32(1)
'''

MODULE_V2 = '''from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((16,), "int32")):
    for i in range(16):
        A[i] = 7
'''


def test_a_module_reloaded_after_an_edit_is_parsed_from_its_new_source(tmp_path, monkeypatch):
    """The old lines stayed in linecache: the reloaded module silently got the old IR."""
    import importlib
    import os
    import sys
    path = tmp_path / "edited_kernels.py"
    path.write_text(MODULE_V1)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_kernels")
    assert module.f.params[0].shape[0].value == 8
    path.write_text(MODULE_V2)
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 5))
    importlib.reload(module)
    assert module.f.params[0].shape[0].value == 16 and module.f.params[0].dtype == "int32"
    del sys.modules["edited_kernels"]


def test_a_module_imported_from_a_zip_is_parsed(tmp_path, monkeypatch):
    import importlib
    import sys
    import zipfile
    archive = tmp_path / "kernels.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped_kernels.py", MODULE_V1)
    monkeypatch.syspath_prepend(str(archive))
    module = importlib.import_module("zipped_kernels")
    assert isinstance(module.f, PrimFunc) and module.f.params[0].shape[0].value == 8
    del sys.modules["zipped_kernels"]


def test_prim_func_called_on_a_plain_function_and_twice():
    def f(A: T.Buffer((8,), "float32")):
        A[0] = T.float32(1)

    func = T.prim_func(f)
    assert isinstance(func, PrimFunc) and func.name == "f"
    assert T.prim_func(func) is func
    with pytest.raises(pyir.Error, match="T.prim_func takes a Python function .def., not an int"):
        T.prim_func(3)


ALIASED = '''
@{I}.ir_module
class Module:
    @{T}.prim_func
    def plus_one(A: {T}.Buffer(("n",), "float32"), B: {T}.Buffer(("n",), "float32")):
        for i in range(n):
            B[i] = A[i] + {T}.float32(1)

    @{R}.function
    def main(x: {R}.Tensor(("n",), "float32")) -> {R}.Tensor(("n",), "float32"):
        y = {R}.call_tir(cls.plus_one, (x,), out_sinfo={R}.Tensor((n,), "float32"))
        return y
'''


@pytest.mark.parametrize("imports, names", [
    ("from pyir.script import ir as I, tensor as T, graph as R", "ITR"),
    ("from pyir.script import ir as M, tensor as R, graph as G", "MRG"),
    ("import pyir.script.ir as R\nimport pyir.script.tensor as I\nimport pyir.script.graph as T",
     "RIT"),
    ("import numpy as T\nfrom pyir.script import ir, tensor as T, graph", ("ir", "T", "graph")),
    # Named through the package, these were "pyir is pyir (imported at line 1), not a
    # pyir.script dialect".
    ("import pyir.script.ir\nimport pyir.script.tensor\nimport pyir.script.graph",
     ("pyir.script.ir", "pyir.script.tensor", "pyir.script.graph")),
    ("import pyir", ("pyir.script.ir", "pyir.script.tensor", "pyir.script.graph")),
    ("import pyir.script.tensor as T\nimport pyir.script", ("pyir.script.ir", "T",
                                                            "pyir.script.graph")),
    ("from pyir import script as S", ("S.ir", "S.tensor", "S.graph"))])
def test_from_source_takes_dialects_from_its_own_imports(imports, names):
    text = imports + "\n" + ALIASED.format(I=names[0], T=names[1], R=names[2])
    mod = from_source(text)
    assert_structural_equal(mod, from_source(mod.script()))
    plain = "from pyir.script import ir as I, tensor as T, graph as R\n" + ALIASED.format(
        I="I", T="T", R="R")
    assert_structural_equal(mod, from_source(plain))
    np.testing.assert_array_equal(pyir.build(mod)["main"](np.arange(3, dtype="float32")),
                                  [1, 2, 3])


@pytest.mark.parametrize("imports, line, message, hint", [
    ("from pyir.script import ir as I, graph as R\nimport numpy as T", 6,
     "T is numpy (imported at line 2), not a pyir.script dialect",
     "from pyir.script import tensor as T"),
    ("from pyir.script import ir as I, graph as R\nfrom numpy import linalg as T", 6,
     "T is numpy.linalg (imported at line 2), not a pyir.script dialect",
     "from pyir.script import tensor as T"),
    ("from pyir.script import ir as I, graph as R\nimport pyir.script.tensors as T", 6,
     "T is pyir.script.tensors (imported at line 2), not a pyir.script dialect",
     "from pyir.script import tensor as T"),
    ("from pyir.script import ir as I, tensor as T, graph as R\nimport numpy as T", 6,
     "T is numpy (imported at line 2), not a pyir.script dialect",
     "from pyir.script import tensor as T"),
    ("from pyir.script import ir as I, graph as R", 5, "T is not imported",
     "from pyir.script import tensor as T")])
def test_from_source_refuses_a_dialect_name_that_its_imports_bind_elsewhere(imports, line,
                                                                            message, hint):
    """from_source took I, T and R by their names alone: ``import numpy as T`` (or no
    import of T at all) still made ``@T.prim_func`` the tensor dialect's."""
    text = imports + "\n" + ALIASED.format(I="I", T="T", R="R")
    with pytest.raises(ParseError) as e:
        from_source(text, "aliased.py")
    assert str(e.value) == (
        f"aliased.py:{line}:6: {message}: a dialect is named by an import of pyir.script.ir, "
        f"pyir.script.tensor or pyir.script.graph\n"
        f"{line:>5} | @T.prim_func\n"
        f"         ^\n"
        f"expected: {hint}")


def test_a_decorated_module_may_name_its_dialects_through_the_package():
    """Parsing it raised "pyir is pyir, not a pyir.script dialect"."""
    @pyir.script.ir.ir_module
    class _Dotted:
        @pyir.script.tensor.prim_func
        def plus_one(A: pyir.script.tensor.Buffer(("n",), "float32"),
                     B: pyir.script.tensor.Buffer(("n",), "float32")):
            for i in pyir.script.tensor.grid(n):
                with pyir.script.tensor.block("B"):
                    vi = pyir.script.tensor.axis.remap("S", [i])
                    B[vi] = A[vi] + pyir.script.tensor.float32(1)

    text = ("from pyir.script import ir as I, tensor as T\n\n@I.ir_module\nclass _Dotted:\n"
            "    @T.prim_func\n    def plus_one(A: T.Buffer((\"n\",), \"float32\"), "
            "B: T.Buffer((\"n\",), \"float32\")):\n        for i in range(n):\n"
            "            with T.block(\"B\"):\n                vi = T.axis.remap(\"S\", [i])\n"
            "                B[vi] = A[vi] + T.float32(1)\n")
    assert_structural_equal(_Dotted, from_source(text))
    out = np.zeros(3, "float32")
    pyir.build(_Dotted)["plus_one"](np.arange(3, dtype="float32"), out)
    np.testing.assert_array_equal(out, [1, 2, 3])


@pytest.mark.parametrize("imports, decorator, message, hint", [
    ("import pyir", "pyir.script.tensr.prim_func",
     "pyir is pyir (imported at line 1), not a pyir.script dialect: a dialect is named by an "
     "import of pyir.script.ir, pyir.script.tensor or pyir.script.graph, or through pyir as "
     "pyir.script.ir, pyir.script.tensor or pyir.script.graph",
     "pyir.script.ir, pyir.script.tensor or pyir.script.graph"),
    ("import pyir.script.graph", "pyir.script.graph.prim_func",
     "pyir.script.graph has no prim_func",
     "the tensor dialect's prim_func (pyir.script.tensor.prim_func)"),
])
def test_from_source_refuses_a_dotted_name_that_is_no_dialect(imports, decorator, message,
                                                             hint):
    text = f"{imports}\n\n@{decorator}\ndef f(A: pyir.script.tensor.Buffer((4,), \"float32\")):\n" \
        "    A[0] = pyir.script.tensor.float32(1)\n"
    with pytest.raises(ParseError) as e:
        from_source(text)
    assert (e.value.line, e.value.col) == (3, 1)
    assert e.value.message == message and e.value.hint == hint


def test_from_source_refuses_a_dialect_imported_under_another_dialects_name():
    """``graph as T``: ``@T.prim_func`` names the graph dialect's prim_func, which there is
    not (it was "function 'plus_one' has no @T.prim_func or @R.function decorator")."""
    text = "from pyir.script import ir as I, graph as T, tensor as R\n" + ALIASED.format(
        I="I", T="T", R="R")
    with pytest.raises(ParseError) as e:
        from_source(text)
    assert str(e.value) == (
        "<string>:5:6: T is pyir.script.graph here, which has no prim_func\n"
        "    5 | @T.prim_func\n"
        "         ^^^^^^^^^^^\n"
        "expected: the tensor dialect's prim_func (from pyir.script import tensor as T)")


def test_two_threads_read_scripts_at_once():
    """CPython 3.11's AST constructor keeps its depth count in state the threads share: two
    threads parsing at once, a garbage collection in one letting the other run, raised
    "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905; two
    builds in threads hit it once the test suite read the IR of every pass back)."""
    import sys
    import threading

    from pyir.script import from_source

    class Cycle:
        def __del__(self):
            pass

    text = "from pyir.script import ir as I, tensor as T\n\n@I.ir_module\nclass M:\n" + "".join(
        f"    @T.prim_func\n    def f{k}(A: T.Buffer((8,), \"float32\")):\n"
        f"        for i in range(8):\n            A[i] = A[i] * T.float32({k}) + T.float32(1)\n"
        for k in range(12))
    errors = []

    def work():
        for _ in range(40):
            junk = [Cycle() for _ in range(200)]
            for j in junk:
                j.me = j
            del junk
            try:
                from_source(text)
            except SystemError as e:
                errors.append(e)
                return

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
