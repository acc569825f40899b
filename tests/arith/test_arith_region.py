"""relax_region, detect_linear, non_decreasing and known_multiple."""

import pytest

import pyir
from pyir.arith import (Analyzer, IntBound, detect_linear, known_multiple, non_decreasing,
                        relax_region)
from pyir.ir import IntImm, Range, Var, max_, min_, substitute

from arith_helpers import fmt

i, j, k, r, p, n, vi, vj = (Var(s) for s in ("i", "j", "k", "r", "p", "n", "vi", "vj"))


def test_read_region_of_an_inner_reduction():
    ana = Analyzer()
    ana.bind(k, Range(0, 4))
    assert fmt(relax_region([vi * 4 + k, vj], ana, [k])) == ("[(vi * 4), +4)", "[vj, +1)")


def test_point_access_has_extent_one():
    ana = Analyzer()
    ana.bind(i, Range(0, 16))
    assert fmt(relax_region([i * 2 + 1], ana, [])) == ("[((i * 2) + 1), +1)",)


def test_out_of_bounds_entry_check_region():
    ana = Analyzer()
    ana.bind(i, Range(0, p))
    ana.bind(r, Range(0, 3))
    (rng,) = relax_region([i + r], ana, [i, r])
    assert fmt(rng) == "[0, +(p + 2))"
    assert ana.can_prove_equal(rng.start + rng.extent, p + 2)


def test_region_with_symbolic_and_nonlinear_indices():
    ana = Analyzer()
    ana.bind(i, Range(0, n // 4))
    ana.bind(j, Range(0, 4))
    assert fmt(relax_region([i * 4 + j], ana, [i, j])) == ("[0, +((n // 4) * 4))",)
    assert fmt(relax_region([(i * 4 + j) // 2], ana, [j])) == ("[(i * 2), +2)",)
    assert fmt(relax_region([min_(j, 2)], ana, [j])) == ("[0, +3)",)
    assert fmt(relax_region([j % 3], ana, [j])) == ("[0, +3)",)
    assert fmt(relax_region([IntImm(5)], ana, [j])) == ("[5, +1)",)


def test_unboundable_index_uses_shape_or_raises():
    ana = Analyzer()
    ana.bind(i, Range(0, 8))
    x = Var("x")
    assert fmt(relax_region([i * x], ana, [i], shape=(n,))) == ("[0, +n)",)
    with pytest.raises(pyir.Error, match="cannot bound index 0"):
        relax_region([i * x], ana, [i])
    with pytest.raises(pyir.Error, match="no range bound"):
        relax_region([i + j], ana, [j])


def test_detect_linear():
    x = Var("x")
    assert fmt(detect_linear(i * 4 + j * 3 + i + 1, i)) == ("5", "((j * 3) + 1)")
    assert fmt(detect_linear(i * n + j + n * i, i)) == ("(n * 2)", "j")
    assert fmt(detect_linear(j + 2, i)) == ("0", "(j + 2)")
    assert detect_linear(i * i + 1, i) is None
    assert detect_linear(i // 2 + j, i) is None
    assert detect_linear(x * (i // 2) + i, i) is None
    with pytest.raises(pyir.Error):
        detect_linear(Var("f", "float32"), i)


@pytest.mark.parametrize("expr, multiple", [
    (j * n * 16 + k * 16 + 8, 8),     # a packed panel's row at an offset of half a panel
    (j * 16 + k * 24, 8),
    (j * 16 + 3, 1),
    (i - i, 0),                        # zero is a multiple of everything
    (IntImm(48), 48),
    ((i * 4) // 2 * 6, 6),             # a // atom counts as any integer
])
def test_known_multiple(expr, multiple):
    assert known_multiple(expr) == multiple


@pytest.mark.parametrize("expr, holds", [
    (i, True),
    (n, True),                                  # free of i
    (i * 4 + 3, True),
    ((i * 4 + 3) // n, True),                   # n >= 1 is known
    ((i * 4 + 3) // p, False),                  # p may be 0 or negative
    (min_(i * 4, n) - 2, True),
    (max_(i, n - i), False),
    (n - i, False),
    (i * -1, False),
    ((i * 4) % 7, False),                       # wraps around
    (i * i, False),                             # not as written
])
def test_non_decreasing_as_written(expr, holds):
    ana = Analyzer()
    ana.bind(n, IntBound(1, None))
    assert non_decreasing(expr, i, ana) is holds
    if holds:   # and so it is, on values
        for nv in (1, 3, 8):
            values = [pyir.arith.simplify(substitute(expr, {n: IntImm(nv), i: IntImm(iv)})).value
                      for iv in range(-3, 12)]
            assert values == sorted(values)
