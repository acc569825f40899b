"""Simplify every expression of a lowered prim function with `pyir.arith`, knowing the
ranges of the loops around it; drop ``if`` branches that are provably never taken and
loops that never run.

The rules of `pyir.arith` are those of indices, which never overflow (int64 for shapes and
indices): ``x + 1 > x`` is true. Arithmetic on int64 values read from memory wraps as
numpy's does (``A[i] + 1 > A[i]`` is false for ``2**63 - 1``), so an int64 expression
reading memory is kept as written, only its parts that read none (the indices of its
loads) simplified."""

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import rewrite_top_down, walk, with_fields
from ._arith import Scope, is_const
from .common import has_blocks, no_op, prim_func_pass, replace_func


class _Simplifier:
    def __init__(self):
        self.scope = Scope()

    def expr(self, e):
        if not _reads_int64(e):
            return self.scope.simplify(e)   # indices of loads inside included
        return rewrite_top_down(e, lambda n: None if _reads_int64(n) or not isinstance(
            n, E.PrimExpr) else self.scope.simplify(n))

    def stmt(self, s):
        return S.follow_tails(s, self._stmt)

    def _stmt(self, s):
        if isinstance(s, S.For):
            start, extent = self.expr(s.start), self.expr(s.extent)
            if is_const(extent) and extent.value <= 0:
                return no_op()
            with self.scope.loop(s.loop_var, start, extent):
                body = self.stmt(s.body)
            return with_fields(s, start=start, extent=extent, body=body)
        if isinstance(s, S.IfThenElse):
            cond = self.expr(s.condition)
            if is_const(cond):
                chosen = s.then_case if cond.value else s.else_case
                return no_op() if chosen is None else self.stmt(chosen)
            return S.IfThenElse(cond, self.stmt(s.then_case),
                                None if s.else_case is None else self.stmt(s.else_case))
        if isinstance(s, S.SeqStmt):
            if not s.stmts:
                return s
            head = [self.stmt(x) for x in s.stmts[:-1]]
            return S.Tail(s.stmts[-1], lambda last: S.seq(*head, last))
        if isinstance(s, S.BufferStore):
            return S.BufferStore(s.buffer, self.expr(s.value),
                                 tuple(self.expr(i) for i in s.indices))
        if isinstance(s, S.LetStmt):
            value = self.expr(s.value)
            self.scope.bind_let(s.var, value)
            return S.Tail(s.body, lambda body: S.LetStmt(s.var, value, body))
        if isinstance(s, S.Allocate):
            return S.Tail(s.body, lambda body: S.Allocate(s.buffer, body))
        if isinstance(s, S.Evaluate):
            return S.Evaluate(self.expr(s.value))
        return s


def _reads_int64(e):
    """Whether ``e`` reads an int64 value from memory, whose arithmetic wraps."""
    return any(isinstance(n, E.BufferLoad) and n.dtype == "int64" for n in walk(e))


@prim_func_pass
def simplify(func):
    """Simplify a prim function without blocks (see the module docstring)."""
    if has_blocks(func):
        return func
    return replace_func(func, body=_Simplifier().stmt(func.body))
