"""`walk_stmts` and `rewrite_stmts`: traversals of a statement tree that never look into its
expressions (the passes that edit loops, blocks and sequences use them)."""

import dataclasses

from pyir.ir import expr as E
from pyir.ir import stmt as S
from pyir.ir.node import walk

I, J = E.Var("i"), E.Var("j")
X = E.Buffer("X", (16,), "float32")


def _store(index, value=1.0):
    return S.BufferStore(X, E.FloatImm(value, "float32"), (index,))


def _nest():
    """for i: (X[i] = 1; for j (unrolled): X[i + j] = 2), then an allocation around
    X[0] = 3."""
    inner = S.For(J, 0, 4, "unroll", _store(E.Binary("add", I, J), 2.0))
    loop = S.For(I, 0, 8, "serial", S.SeqStmt((_store(I), inner)))
    scratch = E.Buffer("T", (4,), "float32", "local")
    return S.SeqStmt((loop, S.Allocate(scratch, _store(E.IntImm(0), 3.0))))


def test_walk_stmts_yields_the_statements_pre_order_and_no_expression():
    body = _nest()
    seen = list(S.walk_stmts(body))
    assert [type(s).__name__ for s in seen] == [
        "SeqStmt", "For", "SeqStmt", "BufferStore", "For", "BufferStore", "Allocate",
        "BufferStore"]
    assert all(isinstance(s, S.Stmt) for s in seen)
    assert seen == [n for n in walk(body) if isinstance(n, S.Stmt)]


def test_rewrite_stmts_shows_fn_statements_only_bottom_up():
    body = _nest()
    seen = []

    def fn(s):
        seen.append(s)
        if isinstance(s, S.For) and s.kind == "unroll":
            return dataclasses.replace(s, kind="serial")
        return None

    new = S.rewrite_stmts(body, fn)
    assert all(isinstance(s, S.Stmt) for s in seen)
    # Children before parents: the loop that was rewritten is seen before the one around it.
    kinds = [s.kind for s in seen if isinstance(s, S.For)]
    assert kinds == ["unroll", "serial"]
    outer = new.stmts[0]
    assert outer.body.stmts[1].kind == "serial"
    # Untouched parts are the same objects; the expressions are never rebuilt.
    assert new.stmts[1] is body.stmts[1]
    assert outer.body.stmts[0] is body.stmts[0].body.stmts[0]
    assert outer.body.stmts[1].body.indices[0] is body.stmts[0].body.stmts[1].body.indices[0]


def test_rewrite_stmts_returns_the_same_tree_when_nothing_changes():
    body = _nest()
    assert S.rewrite_stmts(body, lambda s: None) is body


def test_rewrite_stmts_rewrites_a_repeated_statement_once():
    shared = _store(I)
    body = S.SeqStmt((S.For(I, 0, 2, "serial", shared), S.For(I, 0, 3, "serial", shared)))
    calls = []

    def fn(s):
        if isinstance(s, S.BufferStore):
            calls.append(s)
            return _store(I, 5.0)
        return None

    new = S.rewrite_stmts(body, fn)
    assert len(calls) == 1
    assert new.stmts[0].body is new.stmts[1].body
    assert new.stmts[0].body.value.value == 5.0


def test_rewrite_stmts_and_walk_stmts_take_ten_thousand_nested_lets():
    body = _store(I)
    for k in range(10_000):
        body = S.LetStmt(E.Var(f"x{k}"), E.IntImm(k), body)
    assert sum(1 for _ in S.walk_stmts(body)) == 10_001
    new = S.rewrite_stmts(body, lambda s: _store(J) if isinstance(s, S.BufferStore) else None)
    depth, s = 0, new
    while isinstance(s, S.LetStmt):
        depth, s = depth + 1, s.body
    assert depth == 10_000 and s.indices[0] is J
