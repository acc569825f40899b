"""Bounds and proofs of pyir.arith.Analyzer, including symbolic extents."""

import pytest

import pyir
from pyir.arith import Analyzer, IntBound
from pyir.ir import Cast, IntImm, Range, Select, Var, and_, eq, ge, le, lt, max_, min_, or_

from arith_helpers import evaluate, fmt

i, j, k, n, m, x, y = (Var(s) for s in ("i", "j", "k", "n", "m", "x", "y"))


def test_const_int_bound():
    ana = Analyzer()
    ana.bind(i, Range(0, 16))
    ana.bind(j, Range(0, 8))
    assert ana.const_int_bound(i * 8 + j) == IntBound(0, 127)
    assert ana.const_int_bound(i - j) == IntBound(-7, 15)
    assert ana.const_int_bound((i * 8 + j) // 4) == IntBound(0, 31)
    assert ana.const_int_bound(x % 8) == IntBound(0, 7)
    assert ana.const_int_bound(x % -8) == IntBound(-7, 0)
    assert ana.const_int_bound(i % 32) == IntBound(0, 15)
    assert ana.const_int_bound(x) == IntBound(None, None)
    assert ana.const_int_bound(i * x) == IntBound(None, None)
    assert ana.const_int_bound(min_(i, 3)) == IntBound(0, 3)
    assert ana.const_int_bound(max_(i, x)) == IntBound(0, None)
    assert ana.const_int_bound(Select(lt(x, 0), i, j + 100)) == IntBound(0, 107)
    assert ana.const_int_bound(lt(x, y)) == IntBound(0, 1)
    assert ana.const_int_bound(x // (i + 1)) == IntBound(None, None)
    ana.bind(x, IntBound(0, None))
    assert ana.const_int_bound(x // (i + 1)) == IntBound(0, None)
    assert ana.const_int_bound(Var("u", "uint8")) == IntBound(0, 255)


def test_bound_through_symbolic_ranges():
    ana = Analyzer()
    ana.bind(n, IntBound(1, 100))
    ana.bind(i, Range(0, n))
    ana.bind(j, Range(i, n - i))          # j in [i, n)
    assert ana.const_int_bound(j) == IntBound(0, 99)
    assert ana.can_prove(lt(j, n))
    assert ana.can_prove(ge(j, i))
    assert not ana.can_prove(lt(j, n - 1))


def test_split_with_divisible_symbolic_extent_is_proven():
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    ana.bind(i, Range(0, n // 8))
    ana.bind(j, Range(0, 8))
    assert ana.can_prove(lt(i * 8 + j, n))
    assert ana.can_prove(ge(i * 8 + j, 0))
    assert fmt(ana.symbolic_bound(i * 8 + j)) == ("0", "(((n // 8) * 8) - 1)")


def test_split_with_tail_is_not_proven():
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    ana.bind(i, Range(0, (n + 7) // 8))
    ana.bind(j, Range(0, 8))
    assert not ana.can_prove(lt(i * 8 + j, n))
    assert not ana.can_prove(ge(i * 8 + j, n))       # not disproven either
    assert ana.can_prove(lt(i * 8 + j, n + 7))


def test_a_floor_division_by_a_constant_is_bounded_by_its_dividend():
    """``c * (x // c)`` lies in ``[x - c + 1, x]``: so ``n // 4 <= n`` for ``n >= 0`` (it
    stayed an entry condition of every loop over ``n // 4`` writing ``B[i]`` for ``B: (n,)``),
    and the like; what does not hold stays unproven."""
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    for cond in (ge(n, n // 4), le(n // 4, n), ge(n - n // 4, 0), le(n // 4 * 4, n),
                 le((n + 3) // 4, n),
                 le(n // 4 + n // 2, n), ge(n * 3, (n + 6) // 4 * 4 + n - 6),
                 le(n // 4 + m // 8, n + m // 8)):
        assert ana.can_prove(cond), cond
        assert all(evaluate(cond, {n: v, m: w}) for v in range(40) for w in range(-9, 9))
    for cond in (lt(n // 4, n), le(n // 4 + n // 2 + n // 4, n - 1), ge(n // 4, n),
                 le((n + 4) // 4, n), le(n // 4 + m // 8, n)):
        assert not ana.can_prove(cond), cond
    with ana.scope():
        ana.bind(n, IntBound(1, None))
        assert ana.can_prove(le((n + 4) // 4, n))
        assert ana.can_prove(lt(n // 4, n))                # 4 * (n - n // 4 - 1) >= -3
        assert not ana.can_prove(lt((n + 3) // 4, n))      # n = 1
    ana.bind(i, Range(0, n // 4))
    assert ana.can_prove(lt(i, n))             # n - i - 1 >= n - n // 4
    assert not ana.can_prove(lt(i * 5, n))


def test_a_bound_below_a_max_is_proven_for_each_of_its_sides():
    """``p - k * max(a, b) >= 0`` (``k > 0``) holds where it holds for ``a`` and for ``b``
    (likewise ``p + k * min(a, b)``): ``A[max(i - 1, 0)]`` for ``i < n`` reads up to
    ``max(n - 2, 0)``, below n for n >= 1, which was not proven and stayed a condition
    checked at every call."""
    ana = Analyzer()
    ana.bind(n, IntBound(1, None))
    for cond in (ge(n, max_(n - 2, 0) + 1), le(min_(n, 0) * 3 + 2, n + 1),
                 le(max_(n - 2, 0) + max_(n - 3, 1), n * 2 - 1), ge(n, min_(n + 1, 0)),
                 lt(max_(n // 4, n - 5), n)):
        assert ana.can_prove(cond), cond
        assert all(evaluate(cond, {n: v}) for v in range(1, 40))
    for cond in (ge(n, max_(n - 2, 1) + 1), le(max_(n - 2, 0) + max_(n - 3, 1), n * 2 - 2),
                 lt(min_(n, m), m - 1)):
        assert not ana.can_prove(cond), cond


def test_loop_bound_proofs():
    ana = Analyzer()
    ana.bind(i, Range(0, n))
    assert ana.can_prove(lt(i, n))
    assert ana.can_prove(le(i + 1, n))
    assert not ana.can_prove(lt(i + 1, n))
    assert not ana.can_prove(lt(i, n - 1))
    ana.bind(j, Range(0, m))
    assert ana.can_prove(lt(i * m + j, n * m))    # fused index stays in bounds
    assert not ana.can_prove(lt(i * m + j, n * m - 1))


def test_can_prove_is_sound_on_unknowns():
    ana = Analyzer()
    assert not ana.can_prove(lt(x, y))
    assert not ana.can_prove(ge(x * x, 1))
    assert ana.can_prove(or_(lt(x, y), ge(x, y)))
    assert ana.can_prove(and_(eq(x, x), le(x, x + 1)))


def test_a_proof_refuted_at_a_point_of_the_facts_needs_no_symbolic_relaxation(monkeypatch):
    """``j < n // 32`` with ``j`` in ``[0, (n + 31) // 32)`` fails at n = 1, j = 0, and its
    negation at n = 1002 (1001 past the least n), j = 0: values the facts allow, found
    before any relaxation. What the facts do prove still goes through it; values they do
    not allow (a range that is empty: i in [n, 2 - n] for n = 1002) refute nothing."""
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    ana.bind(j, Range(0, (n + 31) // 32))
    relaxed = []
    real = ana._relax
    monkeypatch.setattr(ana, "_relax", lambda *a: relaxed.append(a) or real(*a))
    assert not ana.can_prove(lt(j, n // 32)) and not ana.can_prove(ge(j, n // 32))
    assert relaxed == []
    assert ana.can_prove(lt(j * 32, n + 31)) and relaxed
    ana.bind(i, Range(n, 3 - n * 2))
    assert ana.can_prove(le(i + n, 2))


def test_can_prove_equal():
    ana = Analyzer()
    assert ana.can_prove_equal((x // 8) * 8 + x % 8, x)
    assert ana.can_prove_equal((x + 1) * (y - 1), x * y - x + y - 1)
    assert ana.can_prove_equal(x * 2, x + x)
    assert not ana.can_prove_equal(x, y)
    assert ana.can_prove_equal(IntImm(4), 4)


def test_can_prove_equal_takes_integer_expressions_written_alike_at_once(monkeypatch):
    """Two integer expressions written alike (even with loads) are equal without a proof;
    float ones are not (NaN), and different ones still go to the prover."""
    from pyir.ir import Buffer, FloatImm
    A, F = Buffer("A", (IntImm(8),), "int64"), Buffer("F", (IntImm(8),), "float32")
    ana = Analyzer()
    asked = []
    real = ana.can_prove
    monkeypatch.setattr(ana, "can_prove", lambda e: asked.append(e) or real(e))
    assert ana.can_prove_equal(A[i] * 3 + i // 2, A[i] * 3 + i // 2) and not asked
    assert not ana.can_prove_equal(F[i] + FloatImm(1.0), F[i] + FloatImm(1.0))
    assert ana.can_prove_equal(x * 2, x + x) and len(asked) == 2


def test_bind_expression_substitutes():
    ana = Analyzer()
    ana.bind(x, i * 4 + j)
    ana.bind(j, Range(0, 4))
    assert fmt(ana.simplify(x // 4)) == "i"
    assert fmt(ana.simplify(x % 4)) == "j"
    assert ana.const_int_bound(x - i * 4) == IntBound(0, 3)


def test_scope_restores_bindings():
    ana = Analyzer()
    ana.bind(i, Range(0, 4))
    with ana.scope():
        ana.bind(i, Range(0, 100))
        ana.bind(j, Range(0, 2))
        assert ana.const_int_bound(i + j) == IntBound(0, 100)
    assert ana.const_int_bound(i) == IntBound(0, 3)
    assert ana.const_int_bound(j) == IntBound(None, None)


def test_symbolic_bound_of_nonlinear_parts():
    ana = Analyzer()
    ana.bind(i, Range(0, n))
    ana.bind(j, Range(0, 4))
    assert fmt(ana.symbolic_bound(min_(i, 5) + j)) == ("0", "(min((n - 1), 5) + 3)")
    assert fmt(ana.symbolic_bound((i * 4 + j) // 2)) == ("0", "((n * 2) - 1)")
    assert fmt(ana.symbolic_bound(x + i)) == ("x", "((x + n) - 1)")
    assert ana.symbolic_bound(i * x) == (None, None)


def test_errors():
    ana = Analyzer()
    with pytest.raises(pyir.Error, match="Var"):
        ana.bind("i", Range(0, 4))
    with pytest.raises(pyir.Error, match="contains it"):
        ana.bind(x, x + 1)
    with pytest.raises(pyir.Error, match="bool condition"):
        ana.can_prove(x + 1)
    with pytest.raises(pyir.Error, match="int32"):
        ana.bind(Var("v", "int32"), Range(0, 4))


def test_remembered_answers_keep_the_sign_of_zero():
    """The analyzer remembers simplifications; -0.0 must not get the answer of 0.0."""
    from pyir.ir import FloatImm
    ana = Analyzer()
    x = Var("x", "float32")
    assert ana.simplify(x * FloatImm(0.0)).b.value == 0.0
    assert str(ana.simplify(x * FloatImm(-0.0)).b.value) == "-0.0"


def test_remembered_answers_follow_new_facts():
    """A binding of a variable the remembered answers mention drops them."""
    i = Var("i")
    ana = Analyzer()
    assert fmt(ana.simplify(i // 16)) == "(i // 16)"
    ana.bind(i, Range(0, 16))
    assert fmt(ana.simplify(i // 16)) == "0"
    with ana.scope():
        ana.bind(i, Range(16, 16))
        assert fmt(ana.simplify(i // 16)) == "1"
    assert fmt(ana.simplify(i // 16)) == "0"


def test_the_same_range_bound_again_is_no_new_fact():
    """Binding a variable to the range it has keeps the remembered answers (codegen binds a
    loop again at each copy of an unrolled body); another range still drops them."""
    i, n = Var("i"), Var("n")
    ana = Analyzer()
    ana.bind(n, Range(1, 100))
    ana.bind(i, Range(0, n))
    assert fmt(ana.simplify(i // n)) == "0"
    remembered = dict(ana._memo)
    ana.bind(i, Range(0, n))
    assert ana._memo == remembered
    ana.bind(i, Range(0, n + 1))
    assert ana._memo == {}
    assert fmt(ana.simplify(i // n)) != "0"


def test_a_range_bound_in_a_scope_is_bound_again_after_it():
    """Binding the same start and extent again is skipped only while the binding is in
    force: after a scope that made it ends, it is made again."""
    i, j, n = Var("i"), Var("j"), Var("n")
    start, four = IntImm(0), IntImm(4)
    ana = Analyzer()
    ana.bind(n, Range(1, 100))
    ana.bind(i, Range(start, n))
    with ana.scope():
        ana.bind(i, Range(start, four))
        ana.bind(j, Range(start, four))
        assert fmt(ana.simplify(i // 4)) == "0"
    ana.bind(i, Range(start, n))
    ana.bind(j, Range(start, four))
    assert fmt(ana.simplify(i // n)) == "0" and fmt(ana.simplify(i // 4)) == "(i // 4)"
    assert fmt(ana.simplify(j // 4)) == "0"


def test_a_variable_bound_again_to_a_wider_fact_drops_what_the_earlier_one_gave():
    """Bound again to a fact that does not narrow its earlier one, a variable keeps nothing
    of that one: not the range of another variable read under it (``j < max(i + 1, 5)``
    is ``j <= i`` while ``i >= 5`` only), not what its range said of its extent (``n >= 1``),
    not a substitution; in a scope too, and the earlier facts are back after it."""
    ana = Analyzer()
    ana.bind(i, Range(5, 5))
    ana.bind(j, Range(0, max_(i + 1, 5)))
    assert ana.can_prove(le(j, i))
    ana.bind(i, Range(0, 10))
    assert not ana.can_prove(le(j, i))          # i = 0, j = 4
    assert ana.can_prove(lt(j, 10)) and ana.const_int_bound(j) == IntBound(0, 9)
    with ana.scope():
        ana.bind(i, Range(5, 5))
        assert ana.can_prove(le(j, i))
        ana.bind(i, Range(0, 100))
        assert not ana.can_prove(lt(j, 10))
    assert ana.can_prove(lt(j, 10)) and not ana.can_prove(le(j, i))

    ana = Analyzer()
    ana.bind(i, Range(0, n))
    assert ana.can_prove(ge(n, 1))
    ana.bind(i, Range(0, 5))
    assert not ana.can_prove(ge(n, 1)) and ana.const_int_bound(i) == IntBound(0, 4)

    ana = Analyzer()
    rng = Range(0, 100)
    ana.bind(i, rng)
    ana.bind(i, 3)
    assert ana.can_prove(eq(i, 3))
    ana.bind(i, rng)
    assert not ana.can_prove(lt(i, 10)) and ana.can_prove(lt(i, 100))
    ana.bind(x, 7)
    ana.bind(x, IntBound(0, 99))
    assert not ana.can_prove(eq(x, 7)) and ana.const_int_bound(x) == IntBound(0, 99)


def test_a_variable_bound_again_to_a_narrower_fact_keeps_the_others():
    """A fact proven to narrow the earlier one takes its place, and what the earlier one
    gave still holds (entry conditions narrow a loop by its guards in a scope)."""
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    ana.bind(i, Range(0, n))
    ana.bind(j, Range(0, i + 1))
    ana.bind(i, Range(1, n - 1))
    assert ana.can_prove(ge(n, 2)) and ana.can_prove(le(j, n - 1))
    assert ana.const_int_bound(i) == IntBound(1, None)
    ana.bind(n, 4)
    assert ana.const_int_bound(j) == IntBound(0, 3)


def test_a_range_holds_its_variable_so_its_extent_is_at_least_one():
    """Inside ``for f in range(n * ((m + 1) // 2))`` with dimensions ``n, m >= 0``, both are
    at least 1; a product whose factors may be negative says nothing."""
    n, m, f, g, a, b = (Var(x) for x in "nmfgab")
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    ana.bind(m, IntBound(0, None))
    with ana.scope():
        ana.bind(f, Range(0, n * ((m + 1) // 2)))
        assert ana.const_int_bound(n).min == 1 and ana.const_int_bound(m).min == 1
    assert ana.const_int_bound(m).min == 0
    with ana.scope():
        ana.bind(g, Range(0, (m - 5) // 4))
        assert ana.const_int_bound(m).min == 9
    ana.bind(f, Range(0, a * b))
    assert ana.const_int_bound(a).min is None


def test_bounds_of_a_division_by_a_variable_of_at_least_one():
    n, m, f = Var("n"), Var("m"), Var("f")
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    ana.bind(m, IntBound(0, None))
    ana.bind(f, Range(0, n * m))
    lo, hi = ana.symbolic_bound(f % m, [f])
    assert fmt(lo) == "0" and ana.can_prove(eq(hi, m - 1))
    lo, hi = ana.symbolic_bound(f // m, [f])
    assert fmt(lo) == "0" and ana.can_prove(le(hi, n - 1))
    assert ana.symbolic_bound(f // (m - 1), [f]) == (None, None)   # m - 1 may be 0


def test_vars_of_finds_what_walk_finds():
    from pyir.arith import vars_of
    from pyir.ir import Buffer
    from pyir.ir.node import walk
    deep = i
    for t in range(3000):                      # deeper than the recursion limit
        deep = deep + (j if t % 2 else IntImm(t))
    shared = i * n + k
    buf = Buffer("A", (n, m), "float32")
    load = buf[shared + shared, x // 4]
    for e in (deep, shared + shared, load, load + load, IntImm(3)):
        assert vars_of(e) == {v for v in walk(e) if isinstance(v, Var)}


def test_vars_of_keeps_nothing_alive():
    """The answer lives on the node: an expression and a variable asked about are freed
    when the last reference goes, by reference counting alone (no cycle through a Var's
    own set, no process-wide memo holding them)."""
    import gc
    import weakref

    from pyir.arith import vars_of
    fresh = Var("fresh")
    expr = fresh * 8 + i
    assert vars_of(expr) == {fresh, i} and vars_of(fresh) == {fresh}
    refs = [weakref.ref(fresh), weakref.ref(expr)]
    gc.disable()
    try:
        del fresh, expr
        assert [r() for r in refs] == [None, None]
    finally:
        gc.enable()


def test_constant_bounds_follow_the_facts_they_come_from():
    ana = Analyzer()
    ana.bind(n, IntBound(1, 64))
    ana.bind(i, Range(0, n))
    assert ana.const_int_bound(i) == IntBound(0, 63)
    with ana.scope():
        ana.bind(n, IntBound(1, 8))
        assert ana.const_int_bound(i) == IntBound(0, 7)
        assert ana.const_int_bound(i * 2) == IntBound(0, 14)
    assert ana.const_int_bound(i) == IntBound(0, 63)
    ana.bind(n, 4)
    assert ana.const_int_bound(i) == IntBound(0, 3)


def test_bounds_near_the_int64_limits_do_not_wrap():
    """A constant range ending past the largest int64 wrapped to an empty interval
    (``i in [2**63 - 2, -2**63 + 1]``), and a symbolic bound of ``i + (2**63 - 1)``
    was a wrapped negative number below the value at ``i = 0``."""
    ana = Analyzer()
    ana.bind(i, Range(2**63 - 2, 4))
    assert ana.const_int_bound(i) == IntBound(2**63 - 2, 2**63 - 1)
    ana.bind(j, Range(0, 8))
    lo, hi = ana.symbolic_bound(j + IntImm(2**63 - 1))
    assert hi is None or evaluate(hi, {}) >= 2**63 - 1


def test_a_loop_of_no_iterations_does_not_break_bounds():
    """Inside ``for i in range(0)``, ``i + 1`` has the empty interval [1, 0], and the
    bound of ``x // (i + 1)`` divided by its upper end: ZeroDivisionError."""
    ana = Analyzer()
    ana.bind(i, Range(0, 0))
    ana.bind(x, Range(0, 10))
    assert ana.const_int_bound(x // (i + 1)) == IntBound(None, None)
    ana.can_prove(lt(x // (i + 1), 100))       # raised too


def test_bounds_of_narrow_integers_cover_wrapped_values():
    """Intervals of narrower integers were cut to the dtype, though their values wrap:
    int32 ``a + 1`` for ``a`` in [0, 2**31 - 1] was said >= 1 (it is -2**31 at the top),
    and ``int32(x)`` for ``x`` in [0, 2**32) >= 0 -- so codegen divided
    ``int32(A[i]) // 4`` of a uint32 ``A`` by truncation (0 for 2**32 - 1, not -1)."""
    from pyir.arith.canonical import wrap
    a, u = Var("a", "int32"), Var("u", "uint8")
    ana = Analyzer()
    ana.bind(a, IntBound(0, 2**31 - 1))
    ana.bind(x, Range(0, 2**32))
    ana.bind(u, IntBound(0, 10))
    cases = [(a + IntImm(1, "int32"), {a: 2**31 - 1}, -2**31),
             (Cast("int32", x), {x: 2**31}, -2**31),
             (u - IntImm(1, "uint8"), {u: 0}, 255)]
    for e, env, wrapped in cases:
        assert wrap(evaluate(e, env), e.dtype) == wrapped
        lo, hi = ana.const_int_bound(e)
        assert lo <= wrapped <= hi, fmt(e)


def test_analyzers_share_an_answer_only_under_the_same_facts():
    """Answers are shared between analyzers under the facts of every variable they reach:
    ``i < 10`` with ``i`` in ``[0, n)`` is true when ``n <= 10`` and unknown when ``n <= 11``
    (``n`` is not in the question, only in ``i``'s bound); asked again under each, in any
    order, each analyzer gets its own answer."""
    from pyir.arith import analyzer
    analyzer.clear_cache()

    def ask(top):
        ana = Analyzer()
        ana.bind(n, IntBound(0, top))
        ana.bind(i, Range(0, n))
        return fmt(ana.simplify(lt(i, 10)))

    assert [ask(10), ask(11), ask(10), ask(11)] == ["True", "(i < 10)", "True", "(i < 10)"]
    assert analyzer._SHARED
    analyzer.clear_cache()
    assert not analyzer._SHARED


def test_analyzers_binding_one_symbolic_range_simplify_its_bounds_once(monkeypatch):
    """Fresh analyzers that bind the same symbolic range under the same facts share its
    simplified bounds (``i`` in ``[0, n * 2 + n)``: up to ``n * 3 - 1``); under other facts
    of the variables it mentions (``n <= 11``, not ``n <= 10``) they are worked out again,
    and each analyzer gets its own answer."""
    from pyir.arith import analyzer
    analyzer.clear_cache()
    worked_out = []
    simplified = Analyzer._simplified_range
    monkeypatch.setattr(Analyzer, "_simplified_range", lambda self, start, extent: (
        worked_out.append(fmt(extent)) or simplified(self, start, extent)))

    def ask(top):
        ana = Analyzer()
        ana.bind(n, IntBound(0, top))
        ana.bind(i, Range(0, n * 2 + n))
        return fmt(ana.simplify(lt(i, 30)))

    assert [ask(10), ask(10), ask(11), ask(11), ask(10)] == [
        "True", "True", "(i < 30)", "(i < 30)", "True"]
    assert worked_out == ["((n * 2) + n)"] * 2


def test_the_facts_about_an_expression_are_worked_out_again_only_when_they_change(monkeypatch):
    """Binding a variable that what an expression reaches does not mention keeps the facts
    found for it; binding one it reaches (``n`` through ``i in [0, n)``) drops them, and the
    answers follow: ``i < 10`` becomes true once ``n <= 10``."""
    from pyir.arith import analyzer
    analyzer.clear_cache()
    worked_out = []
    reached = Analyzer._facts_reached
    monkeypatch.setattr(Analyzer, "_facts_reached",
                        lambda self, found: worked_out.append(found) or reached(self, found))
    ana = Analyzer()
    ana.bind(n, IntBound(0, None))
    ana.bind(i, Range(0, n))
    assert fmt(ana.simplify(lt(i, 10))) == "(i < 10)"
    assert frozenset((i,)) in worked_out
    worked_out.clear()
    ana.bind(j, Range(0, m))   # nothing i reaches mentions j or m
    assert fmt(ana.simplify(lt(i, 11))) == "(i < 11)"
    assert frozenset((i,)) not in worked_out
    ana.bind(n, IntBound(0, 10))
    assert fmt(ana.simplify(lt(i, 10))) == "True"
    assert frozenset((i,)) in worked_out


def test_shared_answers_are_bounded(monkeypatch):
    from pyir.arith import analyzer
    analyzer.clear_cache()
    monkeypatch.setattr(analyzer, "SHARED_ANSWERS", 3)
    ana = Analyzer()
    ana.bind(i, Range(0, 8))
    for c in range(10):
        assert fmt(ana.simplify(i + c - c)) == "i"
        assert len(analyzer._SHARED) <= 3
