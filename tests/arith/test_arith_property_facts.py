"""Property test: under symbolic facts (``i in [0, n)``, ``j in [i, n)``, ``n >= 1``, ...),
simplify keeps the value of random expressions (as generated code computes the simplified
one, wrapping around in int64), constant and symbolic bounds contain it and a proven
condition holds, at every point the facts allow (constants near the int64 limits included;
a point where the expression itself overflows int64 is left out).

The default profile runs 150 cases (deterministically); PYIR_FULL_TESTS=1 selects the slow
full profile of 3,000."""

import itertools
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pyir.arith import Analyzer, IntBound
from pyir.ir import Binary, IntImm, Range, Select, Var

from arith_helpers import evaluate, fmt, overflows

FULL = os.environ.get("PYIR_FULL_TESTS") == "1"
n, i, j, k = (Var(s) for s in "nijk")
LOOPS = (i, j, k)

consts = st.sampled_from([0, 1, 2, 3, 4, 7, 8, -1, -3, 2**62, 2**63 - 1, -2**63]).map(IntImm)
leaves = st.one_of(st.sampled_from((n,) + LOOPS), consts)
divisors = st.sampled_from([1, 2, 3, 4, 8, -2, -4, 2**61]).map(IntImm)


def _int_nodes(sub):
    return st.one_of(
        st.tuples(st.sampled_from(["add", "sub", "mul", "min", "max"]), sub, sub)
        .map(lambda t: Binary(*t)),
        st.tuples(st.sampled_from(["floordiv", "floormod"]), sub, divisors | sub)
        .map(lambda t: Binary(*t)),
        st.tuples(st.sampled_from(["lt", "le", "eq"]), sub, sub)
        .flatmap(lambda t: st.tuples(st.just(Binary(*t)), sub, sub)).map(lambda t: Select(*t)),
    )


exprs = st.recursive(leaves, _int_nodes, max_leaves=8)
conds = st.tuples(st.sampled_from(["lt", "le", "ge", "eq", "ne"]), exprs, exprs) \
    .map(lambda t: Binary(*t))

# What the loops range over, as a schedule's checks and the passes bind them.
N_FACTS = [IntBound(1, None), IntBound(0, None), IntBound(2, 5)]
J_RANGES = [lambda: Range(i, n - i), lambda: Range(0, (n + 2) // 3), lambda: Range(0, 4),
            lambda: Range(0, n * 2)]
K_RANGES = [lambda: Range(0, 3), lambda: Range(j, n - j), lambda: Range(0, i + 1),
            lambda: Range(0, (n + 6) // 7)]


def _points(ana_facts):
    """Every point the facts allow, for n up to 6."""
    n_fact, ranges = ana_facts
    for nv in range(0, 7):
        if nv < n_fact.min or (n_fact.max is not None and nv > n_fact.max):
            continue
        yield from _loop_points({n: nv}, ranges)


def _loop_points(env, ranges):
    if not ranges:
        yield dict(env)
        return
    var, rng = ranges[0]
    start, extent = evaluate(rng.start, env), evaluate(rng.extent, env)
    for value in range(start, start + extent):
        yield from _loop_points({**env, var: value}, ranges[1:])


def _value(e, env):
    """The value of ``e`` at ``env``, or None where it divides by 0 or overflows int64."""
    try:
        if overflows(e, env):
            return None
        return evaluate(e, env)
    except ZeroDivisionError:
        return None


def _computed(e, env):
    """The value generated code computes for ``e`` at ``env`` (int64 wraps around), or None
    where it divides by 0."""
    try:
        return evaluate(e, env, wrap=True)
    except ZeroDivisionError:
        return None


@st.composite
def cases(draw):
    n_fact = draw(st.sampled_from(N_FACTS))
    ranges = [(i, Range(0, n)), (j, draw(st.sampled_from(J_RANGES))()),
              (k, draw(st.sampled_from(K_RANGES))())]
    return (n_fact, ranges), draw(exprs), draw(conds)


def check(case):
    facts, e, cond = case
    ana = Analyzer()
    ana.bind(n, facts[0])
    for var, rng in facts[1]:
        ana.bind(var, rng)
    simplified, proven = ana.simplify(e), ana.can_prove(cond)
    lo, hi = ana.const_int_bound(e)
    sym = ana.symbolic_bound(e)
    inner = ana.symbolic_bound(e, [k])
    for env in itertools.islice(_points(facts), 200):
        value = _value(e, env)
        if value is not None:
            where = f"{fmt(e)} at {({v.name: x for v, x in env.items()})}"
            assert _computed(simplified, env) in (value, None), f"{where}: {fmt(simplified)}"
            assert (lo is None or lo <= value) and (hi is None or value <= hi), where
            for b_lo, b_hi in (sym, inner):
                low = None if b_lo is None else _value(b_lo, env)
                high = None if b_hi is None else _value(b_hi, env)
                assert low is None or low <= value, f"{where}: lower {fmt(b_lo)}"
                assert high is None or value <= high, f"{where}: upper {fmt(b_hi)}"
        if proven:
            assert _value(cond, env) in (True, None), f"{fmt(cond)} at {env}"


_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.skipif(FULL, reason="the full profile runs instead")
@settings(max_examples=150, derandomize=True, **_COMMON)
@given(cases())
def test_answers_hold_at_every_point_of_the_facts(case):
    check(case)


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="set PYIR_FULL_TESTS=1 for the full profile")
@settings(max_examples=3000, **_COMMON)
@given(cases())
def test_answers_hold_at_every_point_of_the_facts_full(case):
    check(case)
