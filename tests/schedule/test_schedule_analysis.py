"""The schedule's analyses of block bindings (`pyir.schedule.analysis`) on small expressions."""

from pyir.arith import Analyzer
from pyir.arith.region import detect_linear
from pyir.ir import IntImm, Range, Var
from pyir.schedule.analysis import linear_form


def test_linear_form_leaves_out_loops_an_index_does_not_use():
    """linear_form asks detect_linear only about the loops an index uses: of a simplified
    expression free of the variable it would give coefficient 0 and the expression itself."""
    i, j, k = Var("i"), Var("j"), Var("k")
    ana = Analyzer()
    for v in (i, j, k):
        ana.bind(v, Range(0, 16))
    index = ana.simplify(i * 8 + j // 2 + 3)
    assert detect_linear(index, k, ana) == (IntImm(0), index)
    assert linear_form(i * 8 + j + 3, [i, j, k], ana) == ({i: 8, j: 1}, IntImm(3))
    assert linear_form(j // 2 + k, [i, j, k], ana) is None
