"""Property test: a simplified int64 comparison, evaluated as generated code does (each
int64 result wrapping around), has the value of the comparison as written wherever that
one overflows nowhere, for variables and constants near the int64 limits: moving or
cancelling terms across the comparison must not overflow where the original did not."""

from hypothesis import strategies as st

from pyir.arith import IntBound, simplify
from pyir.ir import Binary, IntImm, Range, Var

from arith_helpers import evaluate, fmt, overflows
from property_profiles import profiles

x, y, w = (Var(s) for s in "xyw")
VARS = (x, y, w)
NEAR = [0, 1, 2, 7, 8, -1, -8, 2**31, 2**32, 2**62, 2**63 - 1, 2**63 - 2, -2**63, -2**63 + 1,
        -2**62, -2**32]
# What a variable may be known to be: nothing, a shape dimension, a bounded loop.
FACTS = [None, IntBound(0, None), IntBound(None, 2**62), Range(0, 2**32 + 3), Range(-8, 16)]

leaves = st.one_of(st.sampled_from(VARS), st.sampled_from(NEAR).map(IntImm))


def _int_nodes(sub):
    return st.tuples(st.sampled_from(["add", "sub", "mul"]), sub, sub).map(lambda t: Binary(*t))


exprs = st.recursive(leaves, _int_nodes, max_leaves=6)
ops = st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"])
# Half of them with a constant and a variable beside the rest of one side: what moves.
conds = st.one_of(
    st.tuples(ops, exprs, exprs).map(lambda t: Binary(*t)),
    st.tuples(ops, exprs, exprs, st.sampled_from(VARS), st.sampled_from(NEAR))
    .map(lambda t: Binary(t[0], t[1] + t[3] + IntImm(t[4]), t[2])))


def _allowed(fact):
    """Values near the limits that a variable with ``fact`` may take."""
    if fact is None:
        return NEAR
    if isinstance(fact, Range):
        lo, hi = fact.start.value, fact.start.value + fact.extent.value - 1
    else:
        lo, hi = fact
    near_edges = [v for v in (lo, hi) if v is not None] + NEAR
    return [v for v in near_edges if (lo is None or lo <= v) and (hi is None or v <= hi)]


def run(data):
    cond = data.draw(conds)
    facts = {v: data.draw(st.sampled_from(FACTS)) for v in VARS}
    result = simplify(cond, {v: f for v, f in facts.items() if f is not None})
    for _ in range(20):
        env = {v: data.draw(st.sampled_from(_allowed(facts[v]))) for v in VARS}
        if overflows(cond, env):
            continue
        where = f"{fmt(cond)} -> {fmt(result)} at {({v.name: n for v, n in env.items()})}"
        assert evaluate(result, env, wrap=True) == evaluate(cond, env), where


test_simplified_comparisons_do_not_overflow, test_simplified_comparisons_do_not_overflow_full = \
    profiles(run, 100, 3000)
