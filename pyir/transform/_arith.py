"""The one place where the passes and codegen reach `pyir.arith`.

`Scope` wraps an `pyir.arith.Analyzer` with the ranges of the loops in scope (loop
variables are defined once per function, so a loop's own binding is never undone; what a
loop implies of its extent -- at least 1 -- holds inside it only, see `Scope.loop`) and
offers the few questions the passes ask: simplify, prove, constant bounds, and relaxation
of an index over loop variables to a symbolic (min, max) pair.
"""

import contextlib

from .. import arith
from ..errors import Error
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir.stmt import Range


class Scope:
    """An analyzer plus the loop variables bound in it."""

    def __init__(self):
        self.analyzer = arith.Analyzer()

    def bind(self, var, start, extent):
        """Record ``var in [start, start + extent)``."""
        self.analyzer.bind(var, Range(start, extent))

    @contextlib.contextmanager
    def loop(self, var, start, extent):
        """Inside: ``var`` in ``[start, start + extent)``, and the extent at least 1 (what
        that says of its variables ends with the loop: ``A[0]`` after ``for i in
        range(m)`` still needs ``m >= 1``)."""
        if isinstance(extent, E.IntImm):
            self.bind(var, start, extent)
            yield
            return
        with self.analyzer.scope():
            self.bind(var, start, extent)
            yield

    def nonnegative(self, var):
        """Record ``var >= 0`` (a shape variable: a call takes it from an array dimension)."""
        self.analyzer.bind(var, arith.IntBound(0, None))

    @staticmethod
    def knows_of_let(var, value):
        """Whether `bind_let` records anything of ``var = value``: only of an integer."""
        return dt.is_integer(value.dtype) and dt.is_integer(var.dtype)

    def bind_let(self, var, value):
        """Record what is known of ``var = value`` (a let): the constant bounds of an
        integer ``value`` (``x = min(16, n - 16 * j)`` is at most 16), so that a loop up to
        ``x`` is known to stay below 16. The variable itself stays in the IR."""
        if self.knows_of_let(var, value):
            lo, hi = self.analyzer.const_int_bound(value, simplify=False)
            if lo is not None or hi is not None:
                self.analyzer.bind(var, arith.IntBound(lo, hi))

    def simplify(self, expr):
        return self.analyzer.simplify(expr)

    def can_prove(self, cond):
        return self.analyzer.can_prove(cond)

    def const_bound(self, expr):
        """(min, max) Python ints bounding an integer expression (None when unbounded)."""
        return tuple(self.analyzer.const_int_bound(expr))

    def relax(self, index, relax_vars):
        """Symbolic (min, max) of ``index`` over every value of ``relax_vars``, or None
        when it cannot be bounded."""
        try:
            (r,) = arith.relax_region((index,), self.analyzer, tuple(relax_vars))
        except Error:
            return None
        return r.start, self.simplify(r.start + r.extent - 1)


def is_const(expr, value=None):
    return isinstance(expr, E.IntImm) and (value is None or expr.value == value)
