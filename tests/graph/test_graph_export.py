"""Graph functions in exported libraries: the plan travels as JSON metadata, a process that
never saw the module runs the graph function (its packed Python functions registered
there), and what cannot be described fails at export with a pyir.Error."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyir
import pyir.demo
from pyir.codegen.abi import expr_to_json
from pyir.ir.expr import Call, Cast, Var
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T
from pyir.transform.graph_plan import GraphPlan


@pytest.fixture(scope="module")
def demo():
    """The DESIGN.md example module, built (its packed function registered)."""
    pyir.ffi.register_func("demo.scale2", pyir.demo.scale2, override=True)
    return pyir.build(pyir.demo.Module)


CHILD = """
import sys
import numpy as np
import pyir

@pyir.ffi.register_func("demo.scale2")
def scale2(x, out):
    np.multiply(x, 2, out=out)

lib = pyir.load_module(sys.argv[1])
assert "llvmlite" not in sys.modules, "loading must not need llvmlite"
x = np.random.rand(6, 4).astype("float32") - 0.5
w = np.random.rand(4, 3).astype("float32")
np.testing.assert_allclose(lib["main"](x, w), 2 * np.maximum(x @ w, 0), rtol=1e-5)
try:
    lib["main"](x, w[:3])
except pyir.ArgumentValueError as e:
    print("error:", e)
print(repr(lib))
"""


def test_graph_function_runs_in_a_process_that_never_saw_the_module(demo, tmp_path):
    path = tmp_path / "demo.so"
    demo.export_library(path)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), str(path)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ("error: main: shape variable k is 4 from x.shape[1] but 3 from "
                        "w.shape[0] (argument 'w' expects shape (k, m), got (3, 3))")
    assert lines[1] == f"<pyir Executable (matmul, relu, main) {path}>"


def test_plan_json_round_trip(demo):
    plan = demo["main"].plan
    data = json.loads(json.dumps(plan.to_json()))
    again = GraphPlan.from_json(data)
    assert again.to_json() == data
    assert [v.name for v in again.input_vars] == ["n", "k", "m"]
    assert again.num_slots == plan.num_slots and again.slot == plan.slot
    assert [s.info for s in again.steps if s.kind == "callback"] == \
        [{"kind": "dps", "func": "demo.scale2"}]


def test_a_loaded_graph_function_looks_packed_functions_up_at_the_call(demo, tmp_path):
    path = tmp_path / "demo.so"
    demo.export_library(path)
    lib = pyir.load_module(path)
    x = np.ones((2, 2), np.float32)
    pyir.ffi.register_func("demo.scale2", lambda a, out: np.multiply(a, 3, out=out),
                           override=True)
    try:
        out = lib["main"](x, x)
    finally:
        pyir.ffi.register_func("demo.scale2", pyir.demo.scale2, override=True)
    np.testing.assert_array_equal(out, np.full((2, 2), 6, np.float32))


@pyir.ffi.register_func("test.export.add_const", override=True)
def add_const(x, c):
    return (x + c).astype("float32")


@I.ir_module
class FloatArgument:
    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        y = R.call_packed("test.export.add_const", x, 1.5,
                          sinfo_args=R.Tensor(("n",), "float32"))
        return y


def test_a_float_constant_passed_to_a_packed_function(tmp_path):
    lib = pyir.build(FloatArgument)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(lib["main"](x), x + 1.5)
    lib.export_library(tmp_path / "f.so")
    np.testing.assert_array_equal(pyir.load_module(tmp_path / "f.so")["main"](x), x + 1.5)


def test_metadata_names_an_expression_it_cannot_describe():
    n = Var("n")
    with pytest.raises(pyir.Error, match="cannot describe Call in function metadata"):
        expr_to_json(Call("float32", "exp", (Cast("float32", n),)), {n: 0})


@I.ir_module
class NamedLikeLibm:
    @R.function
    def main(x: R.Tensor((3, 2), "float64")):
        return R.log(x)       # legalized into a prim function named log

    @T.prim_func
    def free(a: T.Buffer((3, 2), "float64"), b: T.Buffer((3, 2), "float64")):
        for i, j in T.grid(3, 2):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                b[vi, vj] = a[vi, vj] * T.float64(2)

    @R.function
    def twice(x: R.Tensor((3, 2), "float64")):
        y = R.call_tir(NamedLikeLibm.free, (x,), out_sinfo=R.Tensor((3, 2), "float64"))
        z = R.call_tir(NamedLikeLibm.free, (y,), out_sinfo=R.Tensor((3, 2), "float64"))
        return z


def test_functions_named_like_c_library_functions(tmp_path):
    """A function's entry was the LLVM symbol of its name: LLVM's call to libm's log (for
    llvm.log.f64) reached the module's log, and graph code's free(storage) the module's free
    -- each with a pointer that was no slot array (a crash; leaked storage)."""
    x = np.arange(1, 7, dtype="float64").reshape(3, 2)
    lib = pyir.build(NamedLikeLibm)
    lib.export_library(tmp_path / "libm_like.so")
    for f in (lib, pyir.load_module(tmp_path / "libm_like.so")):
        np.testing.assert_allclose(f["main"](x), np.log(x))
        np.testing.assert_array_equal(f["twice"](x), 4 * x)


def test_a_library_exported_before_entries_were_named_apart(tmp_path, monkeypatch):
    """Its entries are named as its functions: load_module says to export it again."""
    from pyir.codegen import abi
    from pyir.codegen import llvm as llvm_codegen
    path = tmp_path / "old_names.so"
    with monkeypatch.context() as m:
        for module in (abi, llvm_codegen):
            m.setattr(module, "entry_symbol", lambda name: name)
        pyir.build(FloatArgument, use_cache=False).export_library(path)
    with pytest.raises(pyir.Error, match=r"old_names.so has no symbol 'pyir.entry.main': it was "
                       "exported by an older version of pyir; export it again"):
        pyir.load_module(path)


def test_a_library_with_metadata_of_an_older_format_is_a_clear_error(tmp_path, monkeypatch):
    """Libraries exported before graph functions travelled held a bare list of FuncInfos."""
    from pyir.codegen import abi
    path = tmp_path / "old.so"
    with monkeypatch.context() as m:
        m.setattr(abi, "dumps", lambda infos, *rest: json.dumps([i.to_json() for i in infos]))
        pyir.build(FloatArgument).export_library(path)
    with pytest.raises(pyir.Error, match="holds metadata this version of pyir cannot read"):
        pyir.load_module(path)
