"""Property test: simplify keeps the value of random index expressions and is idempotent."""

from hypothesis import HealthCheck, given, settings, strategies as st

from pyir.arith import simplify
from pyir.arith.canonical import expr_key
from pyir.ir import Binary, IntImm, Not, Range, Select, Var
from pyir.ir.node import rewrite

from arith_helpers import evaluate, fmt

NAMES = ("x", "y", "z")
VARS = {name: Var(name) for name in NAMES}

ints = st.integers(-20, 20)
leaves = st.one_of(st.sampled_from(NAMES).map(VARS.get), ints.map(IntImm))
divisors = st.integers(-9, 9).filter(bool).map(IntImm)


def _int_nodes(sub):
    return st.one_of(
        st.tuples(st.sampled_from(["add", "sub", "mul", "min", "max"]), sub, sub)
        .map(lambda t: Binary(*t)),
        st.tuples(st.sampled_from(["floordiv", "floormod"]), sub, divisors)
        .map(lambda t: Binary(*t)),
        st.tuples(st.sampled_from(["floordiv", "floormod"]), sub, st.integers(1, 9).map(IntImm))
        .map(lambda t: Binary(*t)),
        st.tuples(_conds(sub), sub, sub).map(lambda t: Select(*t)),
    )


def _conds(sub):
    cmp = st.tuples(st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"]), sub, sub) \
        .map(lambda t: Binary(*t))
    return st.one_of(
        cmp,
        st.tuples(st.sampled_from(["and", "or"]), cmp, cmp).map(lambda t: Binary(*t)),
        cmp.map(Not),
    )


int_exprs = st.recursive(leaves, _int_nodes, max_leaves=14)
exprs = st.one_of(int_exprs, int_exprs.flatmap(lambda e: _conds(st.just(e) | int_exprs)))

var_ranges = st.fixed_dictionaries(
    {name: st.none() | st.tuples(st.integers(-10, 10), st.integers(1, 12)) for name in NAMES})


@st.composite
def cases(draw):
    expr = draw(exprs)
    spec = draw(var_ranges)
    envs = []
    for _ in range(6):
        envs.append({VARS[n]: draw(st.integers(-40, 40) if spec[n] is None else
                                   st.integers(spec[n][0], spec[n][0] + spec[n][1] - 1))
                     for n in NAMES})
    ranges = {VARS[n]: Range(lo, ext) for n, (lo, ext) in
              ((n, r) for n, r in spec.items() if r is not None)}
    return expr, ranges, envs


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_simplify_preserves_values_and_is_idempotent(case):
    expr, ranges, envs = case
    result = simplify(expr, ranges)
    assert result.dtype == expr.dtype
    for env in envs:
        assert evaluate(result, env) == evaluate(expr, env), \
            f"{fmt(expr)} -> {fmt(result)} differs at {({v.name: x for v, x in env.items()})}"
    again = simplify(result, ranges)
    assert again == result, f"not idempotent: {fmt(result)} -> {fmt(again)}"
    # A copy with fresh variables of the same names simplifies to the same text.
    fresh = {v: Var(v.name) for v in VARS.values()}
    copy = rewrite(expr, lambda n: fresh.get(n) if isinstance(n, Var) else None)
    copy_ranges = {fresh[v]: r for v, r in ranges.items()}
    assert expr_key(simplify(copy, copy_ranges)) == expr_key(result)
