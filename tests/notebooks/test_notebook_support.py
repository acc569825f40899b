"""What notebooks rely on, checked without a kernel: modules defined in a cell of
``__main__``, single rendering of HTML, and the sweep helper."""

import linecache

import pytest

import pyir
from pyir.schedule import sweep

CELL = '''
from pyir.script import ir as I, tensor as T

@I.ir_module
class Module:
    @T.prim_func
    def copy(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi]
'''


def run_cell(source, filename):
    """Run ``source`` the way IPython runs a cell: its text in linecache under a made-up
    file name, executed in a ``__main__`` namespace (whose module has a different file)."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def test_ir_module_in_a_notebook_cell():
    ns = run_cell(CELL, "/tmp/ipykernel_0/123456.py")
    assert "def copy(" in ns["Module"].script()


def test_parse_error_in_a_notebook_cell_points_at_the_cell():
    bad = CELL.replace("B[vi] = A[vi]", "B[vi] = A[vj]")
    with pytest.raises(pyir.script.ParseError) as info:
        run_cell(bad, "/tmp/ipykernel_0/654321.py")
    text = str(info.value)
    assert "/tmp/ipykernel_0/654321.py:11:" in text and "B[vi] = A[vj]" in text


def test_a_call_that_does_not_fit_its_prim_function_points_at_the_cell():
    """It was reported only by pyir.build, without the line."""
    cell = CELL.replace("ir as I, tensor as T", "ir as I, tensor as T, graph as R") + \
        """
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        return R.call_tir(cls.copy, (x,), out_sinfo=R.Tensor((5,), "float32"))
"""
    with pytest.raises(pyir.script.ParseError) as info:
        run_cell(cell, "/tmp/ipykernel_0/765432.py")
    text = str(info.value)
    assert text.startswith("/tmp/ipykernel_0/765432.py:15:16: graph function main, binding "
                           "return: copy parameter 'B': dimension 0 must be 4, the value passed "
                           "has 5")
    assert "return R.call_tir(cls.copy, (x,), " in text


def test_html_exports_do_not_display_themselves(monkeypatch):
    # rich consoles made for HTML export must not print into the notebook on their own
    # (in Jupyter, a rich Console displays what it prints unless told otherwise)
    import rich.console
    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)
    shown = []
    monkeypatch.setattr("rich.jupyter.display", lambda *a, **k: shown.append(a))
    ns = run_cell(CELL, "/tmp/ipykernel_0/777.py")
    assert "<span" in ns["Module"]._repr_html_()
    from pyir.runtime.benchmark import BenchmarkResult
    assert "median" in BenchmarkResult("f", (1e-3, 2e-3), 1)._repr_html_()
    from pyir.schedule import Schedule
    sch = Schedule(ns["Module"])
    assert "trace" in sch._repr_html_()
    assert shown == []


def test_sweep_keeps_order_and_errors():
    def evaluate(x):
        if x == 2:
            raise pyir.Error("illegal")
        return x * 10

    results = sweep([1, 2, 3], evaluate, description="t", show_progress=False)
    assert [c for c, _ in results] == [1, 2, 3]
    assert results[0][1] == 10 and results[2][1] == 30
    assert isinstance(results[1][1], pyir.Error)


def test_sweep_other_exceptions_stop_it():
    with pytest.raises(ZeroDivisionError):
        sweep([1, 0], lambda x: 1 / x, show_progress=False)
