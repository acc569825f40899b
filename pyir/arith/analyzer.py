"""The Analyzer: what is known about variables, and the questions asked under that knowledge.

Facts are ranges (``i in [0, n // 8)``), constant bounds (``n >= 0``) and substitutions
(``vi = i0 * 32 + i1``). Questions: simplify, constant bounds, symbolic bounds over the
remaining free variables, and proofs. A proof first tries constant interval arithmetic,
then replaces every bounded variable by its symbolic bound (``i <= n // 8 - 1``),
simplifies and tries again; that second step is how ``i * 8 + j < n`` is proven.
"""

import contextlib
import math

from ..errors import Error
from ..ir import Binary, IntImm, PrimExpr, Range, Select, Var, convert, dtype as dt
from ..ir.node import children, walk
from .bounds import INF, ConstBounder, IntBound
from .canonical import Poly, Unrepresentable, mono_contains
from .simplify import Simplifier

#: Symbolic proofs run at nesting depth 0 only; the simplifications they do inside use
#: constant bounds. This keeps every question polynomial.
_MAX_DEPTH = 1
#: How far beyond its one bound `Analyzer._falsified` puts a variable bounded on one side
#: only (a shape variable, >= 0): odd and past the usual tiles, so that ``n // 32`` and
#: ``n % 7`` are neither 0 nor a whole number of tiles.
_FAR = 1001
#: The points `Analyzer._falsified` tries, in order, as (at_top: each variable at the top
#: of its range, far: one bounded on one side only `_FAR` beyond its bound).
_POINTS = ((False, False), (False, True), (True, True), (True, False))


_NO_VARS = frozenset()

#: Answers of `Analyzer.simplify` and `Analyzer.symbolic_bound` (and the simplified bounds
#: of the symbolic ranges bound) shared by every analyzer, under the facts each depended on
#: (`Analyzer._facts_about`): schedule steps, passes and codegen each make analyzers that
#: know the same loops and ask the same questions. At most this many; `clear_cache`
#: empties it.
SHARED_ANSWERS = 8192
_SHARED = {}
#: Marks the keys of `Analyzer.symbolic_bound`'s answers in `_SHARED`.
_SYMBOLIC_BOUND = "symbolic_bound"
#: Marks the keys of `Analyzer._range_bounds`' answers in `_SHARED`.
_RANGE_BOUNDS = "range_bounds"


def _shared(key, work):
    """The shared answer for ``key``, worked out by ``work()`` when there is none yet."""
    hit = _SHARED.get(key)
    if hit is None:
        if len(_SHARED) >= SHARED_ANSWERS:
            _SHARED.clear()
        hit = _SHARED[key] = work()
    return hit


def clear_cache():
    """Forget the answers every analyzer shares (for measuring cold work)."""
    _SHARED.clear()


class _Facts(tuple):
    """The facts about an expression (`Analyzer._facts_about`): a tuple that keeps its hash,
    as it keys shared answers (hashing its expressions at every look-up cost more than a
    shared symbolic bound saves)."""

    def __hash__(self):
        found = self.__dict__.get("hash")
        if found is None:
            found = self.__dict__["hash"] = tuple.__hash__(self)
        return found


def vars_of(expr):
    """The Vars anywhere in ``expr`` (as `walk` finds them), computed once per node and
    kept on it (IR is immutable and shares subtrees, so a new expression costs only its
    new nodes). A Var's own set is made when asked: kept on the Var, it would refer back
    to it, and only the cyclic collector could free either."""
    found = _known_vars(expr)
    if found is not None:
        return found
    stack = [expr]                    # post-order without recursion: sums can be deep
    while stack:
        node = stack[-1]
        found, pending = _NO_VARS, False
        for k in ((node.a, node.b) if type(node) is Binary else children(node)):
            hit = _known_vars(k)
            if hit is None:
                pending = True
                stack.append(k)
            elif not pending:
                found = found | hit if found else hit
        if pending:
            continue                  # back here once the children are known
        stack.pop()
        object.__setattr__(node, "_vars", found)
    return found


def _known_vars(node):
    kind = type(node)
    if kind is Var:
        return frozenset((node,))
    if kind is IntImm:
        return _NO_VARS
    return getattr(node, "_vars", None)


class Analyzer:
    """Symbolic integer analysis under bound variables. See the module docstring."""

    def __init__(self):
        self._bounds = {}   # Var -> (lo expr | None, hi expr | None), inclusive
        self._subst = {}    # Var -> PrimExpr
        self._entered = ({}, {})   # Var -> when it entered _bounds, _subst (_facts_about)
        self._ticks = 0
        self._depth = 0
        self._visiting = set()
        self._bounder = ConstBounder(self._var_interval)
        self._memo = {}     # expr -> simplified, under the current facts (see simplify)
        self._memo_vars = set()   # the Vars of the expressions in _memo
        self._fact_vars = set()   # a superset of the Vars the facts mention
        self._last_range = {}     # Var -> (start, extent, bounds) of its last Range binding
        self._intervals = {}      # Var -> its constant interval under the current facts
        self._points = {}         # the points of `_falsified` under the current facts
        self._facts = {}          # Vars of an expression -> what it reaches (_reach)
        self._bindings = {}       # Var -> what it is bound to, in the order bound (_replay)

    # -- facts ---------------------------------------------------------------------------
    def bind(self, var, value):
        """Bind ``var``: a `Range` bounds it to ``[start, start + extent)`` (and, since the
        range holds ``var``, an extent that is a variable is known to be >= 1); an `IntBound`
        bounds it by constants (None = open); an expression or int substitutes it.

        A variable bound again has the new fact instead of the earlier one. When the new
        fact is proven to narrow the earlier one, it takes its place: what was worked out
        under the earlier fact (the bounds of other variables, remembered answers) still
        holds. Otherwise every fact is made again from the bindings in force, as if the
        earlier one had never been made: a range of ``j`` read under ``i in [5, 10)``, or
        what ``i in [0, n)`` says of ``n``, need not hold once ``i`` is in ``[0, 10)``."""
        if not isinstance(var, Var):
            raise Error(f"Analyzer.bind expects a Var, got {type(var).__name__} {var!r}")
        # Remembered answers stay valid when ``var`` is new to them and to every fact.
        stale = var in self._memo_vars or var in self._fact_vars
        if isinstance(value, Range):
            # The same range again, still in force: codegen binds a loop at each copy of
            # an unrolled body.
            last = self._last_range.get(var)
            if (last is not None and last[0] is value.start and last[1] is value.extent
                    and self._bounds.get(var) is last[2] and var not in self._subst):
                return
            for part in (value.start, value.extent):
                if part.dtype != var.dtype:
                    raise Error(f"cannot bind {var.name} ({var.dtype}) to a range of "
                                f"{part.dtype}")
            start, extent, bounds = self._range_bounds(value)
            if self._bounds.get(var) == bounds and var not in self._subst:
                self._last_range[var] = (value.start, value.extent, self._bounds[var])
                self._bindings.setdefault(var, value)
                return   # the same fact again
            fact = bounds
        elif isinstance(value, IntBound):
            if dt.is_float(var.dtype):
                raise Error(f"cannot bind {var.name} ({var.dtype}) to integer bounds {value}")
            fact = tuple(None if v is None else IntImm(v, var.dtype) for v in value)
        elif isinstance(value, (int, PrimExpr)) and not isinstance(value, bool):
            fact = convert(value, var.dtype)
            if fact.dtype != var.dtype:
                raise Error(f"cannot bind {var.name} ({var.dtype}) to an expression of "
                            f"{fact.dtype}")
            if any(n is var for n in walk(fact)):
                raise Error(f"cannot bind {var.name} to an expression that contains it")
        else:
            raise Error(f"Analyzer.bind: cannot bind {var.name} to {type(value).__name__} "
                        f"{value!r}; expected a Range, IntBound, PrimExpr or int")
        again = var in self._bindings
        self._bindings.pop(var, None)
        self._bindings[var] = value
        if again and not self._narrows(var, fact):
            self._replay()
            return
        self._fact_vars.add(var)
        if isinstance(value, Range):
            self._set(0, var, fact)
            self._last_range[var] = (value.start, value.extent, fact)
            self._fact_vars |= vars_of(start) | vars_of(extent)
            stale |= self._nonempty(extent)
        elif isinstance(value, IntBound):
            self._set(0, var, fact)
        else:
            self._set(1, var, fact)
            self._fact_vars |= vars_of(fact)
        if stale:
            self._forget()

    def _narrows(self, var, fact):
        """Whether the new ``fact`` of ``var`` (inclusive bounds, or the expression it
        stands for) is proven to lie within what is known of ``var``."""
        if var in self._subst:
            return isinstance(fact, PrimExpr) and fact == self._subst[var]
        lo, hi = fact if isinstance(fact, tuple) else (fact, fact)
        old_lo, old_hi = self._bounds.get(var, (None, None))
        return ((old_lo is None or lo is not None and self.can_prove(Binary("ge", lo, old_lo)))
                and (old_hi is None or hi is not None
                     and self.can_prove(Binary("le", hi, old_hi))))

    def _replay(self):
        """Make every fact again from the bindings in force, in the order they were made."""
        bindings = self._bindings
        self._bounds, self._subst, self._entered = {}, {}, ({}, {})
        self._bindings, self._last_range = {}, {}
        self._bounds_changed()
        self._forget()
        for var, value in bindings.items():
            self.bind(var, value)

    def _set(self, which, var, value):
        """Set ``var``'s bounds (``which`` 0) or substitution (1) to ``value``, remembering
        when ``var`` entered that dict: the place it takes in the dict's order."""
        facts, entered = (self._bounds, self._subst)[which], self._entered[which]
        if var not in facts:
            entered[var] = self._ticks
            self._ticks += 1
        facts[var] = value
        self._bounds_changed(var)

    def _bounds_changed(self, var=None):
        """Forget the remembered constant intervals of variables (`_var_interval`) and facts
        about expressions (`_facts_about`): a bound or substitution changed (that of ``var``,
        or any). Only the facts of expressions that reach ``var`` change: what the others
        reach never mentions it."""
        self._intervals = {}
        self._points = {}
        if var is None:
            self._facts = {}
        elif self._facts:
            self._facts = {k: v for k, v in self._facts.items() if var not in v[0]}

    def _range_bounds(self, rng):
        """(start, extent, inclusive bounds) of a `Range`, simplified; a constant range
        (most loops) is folded directly, its last value at most the dtype's largest."""
        start, extent = rng.start, rng.extent
        dtype = start.dtype
        if type(start) is IntImm and type(extent) is IntImm and dt.is_integer(dtype):
            last = min(start.value + extent.value - 1, dt.int_range(dtype)[1])
            return start, extent, (start, IntImm(last, dtype))
        if self._depth or self._visiting:
            return self._simplified_range(start, extent)
        # Shared as one answer under the facts both parts reach: fresh analyzers bind the
        # same symbolic loops (three shared look-ups cost twice as much as one).
        facts = self._reach_vars(vars_of(start) | vars_of(extent))[1]
        return _shared((_RANGE_BOUNDS, start, extent, facts),
                       lambda: self._simplified_range(start, extent))

    def _simplified_range(self, start, extent):
        start, extent = self.simplify(start), self.simplify(extent)
        return start, extent, (start, self.simplify(start + extent - 1))

    def _nonempty(self, extent):
        """Since a range holds its variable, its extent is at least 1: so is a variable
        extent, and each factor of a product whose factors are known to be >= 0, which
        bounds the variables in them (``n * ((m + 1) // 2)`` of a fused loop: ``n >= 1``,
        ``m >= 1``). Returns whether a fact changed."""
        factors = _factors(extent)
        if len(factors) > 1 and not all(_at_least(self.const_int_bound(f, simplify=False), 0)
                                        for f in factors):
            return False
        changed = False
        for f in factors:
            changed |= self._at_least_value(f, 1)
        return changed

    def _at_least_value(self, e, need):
        """Record what ``e >= need`` says of the variables in ``e`` (``v``, ``v + c``,
        ``v * c``, ``v // c`` with constants ``c > 0``, ``a * b >= 1`` with ``a, b >= 0``)."""
        if isinstance(e, Var):
            if e in self._subst:
                return False
            lo, hi = self._bounds.get(e, (None, None))
            if lo is None or (isinstance(lo, IntImm) and lo.value < need):
                self._set(0, e, (IntImm(need, e.dtype), hi))
                return True
            return False
        if isinstance(e, Binary) and e.op == "mul" and not isinstance(e.b, IntImm) \
                and need >= 1 and all(_at_least(self.const_int_bound(x, simplify=False), 0)
                                      for x in (e.a, e.b)):
            # a * b >= 1 with both >= 0: each is >= 1
            return self._at_least_value(e.a, 1) | self._at_least_value(e.b, 1)
        if isinstance(e, Binary) and isinstance(e.b, IntImm):
            c = e.b.value
            if e.op == "add":
                return self._at_least_value(e.a, need - c)
            if e.op == "sub":
                return self._at_least_value(e.a, need + c)
            if e.op == "mul" and c > 0:
                return self._at_least_value(e.a, -(-need // c))
            if e.op == "floordiv" and c > 0:
                return self._at_least_value(e.a, need * c)
        return False

    def _forget(self):
        self._memo = {}
        self._memo_vars = set()

    @contextlib.contextmanager
    def scope(self):
        """``with ana.scope(): ana.bind(...)`` -- bindings made inside are undone on exit."""
        saved = dict(self._bounds), dict(self._subst)
        entered = tuple(dict(e) for e in self._entered)
        memo = dict(self._memo), set(self._memo_vars)
        bindings = dict(self._bindings)
        try:
            yield self
        finally:
            self._bounds, self._subst = saved
            self._bindings = bindings
            self._entered = entered
            self._bounds_changed()
            self._memo, self._memo_vars = memo   # answers under the facts restored

    # -- questions -----------------------------------------------------------------------
    def simplify(self, expr):
        """The canonical, simplified form of ``expr`` under the known facts.

        Answers to outermost questions are remembered until the facts change (passes and
        schedule checks ask about the same indices and bounds many times); questions asked
        from inside a proof are not, as their answers depend on the proof's depth. A
        constant is its own answer."""
        expr = _as_expr(expr)
        if type(expr) is IntImm:
            return expr
        if self._depth or self._visiting:
            return Simplifier(self)(expr)
        hit = self._memo.get(expr)
        if hit is None:
            hit = _shared((expr, self._facts_about(expr)), lambda: Simplifier(self)(expr))
            self._memo[expr] = hit
            self._memo_vars |= vars_of(expr)
        return hit

    def _facts_about(self, expr):
        """The facts an answer about ``expr`` can depend on: the bounds and substitution of
        each variable it reaches (its own, and in turn those their facts mention), in the
        order the variables were bound (which orders symbolic relaxation): sorted by when
        they entered each dict, not by a scan of every fact (a function has thousands)."""
        return self._reach(expr)[1]

    def _reach(self, expr):
        """(the variables an answer about ``expr`` reaches, the facts about them: see
        `_facts_about`), remembered per set of variables until a fact changes
        (`_bounds_changed`)."""
        return self._reach_vars(vars_of(expr))

    def _reach_vars(self, found):
        """`_reach` by the set of variables ``found`` (of one expression or several)."""
        hit = self._facts.get(found)
        if hit is None:
            hit = self._facts[found] = self._facts_reached(found)
        return hit

    def _facts_reached(self, found):
        """`_reach` of an expression whose variables are ``found``."""
        bounds, subst = self._bounds, self._subst
        todo, reach = list(found), set()
        while todo:
            var = todo.pop()
            if var in reach:
                continue
            reach.add(var)
            for e in (*bounds.get(var, ()), subst.get(var)):
                if e is not None and type(e) is not IntImm:
                    todo.extend(vars_of(e))
        out = []
        for facts, entered in zip((bounds, subst), self._entered):
            known = [v for v in reach if v in facts]
            if len(known) > 1:
                known.sort(key=entered.__getitem__)
            out.append(tuple((v, facts[v]) for v in known))
        return frozenset(reach), _Facts(out)

    def const_int_bound(self, expr, simplify=True):
        """`IntBound` of an integer expression (``simplify=False``: of the expression as
        written, by interval arithmetic alone -- cheaper, possibly looser)."""
        e = self.simplify(expr) if simplify else _as_expr(expr)
        _require_int(e, "const_int_bound")
        return IntBound.from_interval(self._bounder.expr(e))

    def symbolic_bound(self, expr, relax_vars=None):
        """``(lo, hi)``: inclusive bounds of ``expr`` as expressions free of the variables
        bound on both sides (or of ``relax_vars`` only); None on a side that cannot be
        bounded. One-sided bounds (``IntBound(0, None)``) leave a variable symbolic.

        Outermost answers are shared as those of `simplify` are, under the facts and the
        variables relaxed that the relaxation can reach (schedule steps ask about the same
        regions under the same loops)."""
        e = self.simplify(expr)
        _require_int(e, "symbolic_bound")
        relax = self._ranged() if relax_vars is None else set(relax_vars)
        if self._depth or self._visiting:
            return self._symbolic_bound(e, relax)
        reach, facts = self._reach(e)
        return _shared((_SYMBOLIC_BOUND, e, reach & relax, facts),
                       lambda: self._symbolic_bound(e, relax))

    def _symbolic_bound(self, e, relax):
        """`symbolic_bound` of the simplified ``e`` over the variables of ``relax``."""
        simp = Simplifier(self)
        try:
            p = simp.poly(e)
            return tuple(None if b is None else b.to_expr()
                         for b in (self._relax(p, False, relax), self._relax(p, True, relax)))
        except Unrepresentable:     # a constant beyond int64 on the way
            return None, None

    def can_prove(self, cond):
        """True only if the bool expression ``cond`` holds for every value of the
        variables allowed by the facts."""
        e = self.simplify(cond)
        if e.dtype != "bool":
            raise Error(f"can_prove expects a bool condition, got {e.dtype} expression {e!r}")
        return isinstance(e, IntImm) and e.value == 1

    def can_prove_equal(self, a, b):
        """True only if ``a == b`` is proven (at once for two integer expressions written
        alike, as relaxed regions of one access often are)."""
        a = _as_expr(a)
        b = convert(b, a.dtype) if isinstance(b, int) and not isinstance(b, bool) else _as_expr(b)
        if a.dtype != b.dtype:
            return False
        if a == b and not dt.is_float(a.dtype):
            return True
        return self.can_prove(Binary("eq", a, b))

    # -- used by the simplifier ------------------------------------------------------------
    def _var_interval(self, var):
        """The constant interval of ``var`` (remembered while no variable is being visited:
        inside such a visit, an interval may be looser than under the facts alone)."""
        if self._visiting:
            return self._compute_var_interval(var)
        hit = self._intervals.get(var)
        if hit is None:
            hit = self._intervals[var] = self._compute_var_interval(var)
        return hit

    def _compute_var_interval(self, var):
        if var in self._subst:
            return self._bounder.expr(self._subst[var])
        bounds = self._bounds.get(var)
        if bounds is None or var in self._visiting:
            return (-INF, INF)
        self._visiting.add(var)
        try:
            lo = -INF if bounds[0] is None else self._bounder.expr(bounds[0])[0]
            hi = INF if bounds[1] is None else self._bounder.expr(bounds[1])[1]
        finally:
            self._visiting.discard(var)
        return (lo, hi)

    def _interval(self, p):
        return self._bounder.poly(p)

    def _prove_nonneg(self, p):
        """Whether the Poly ``p`` is provably >= 0."""
        if self._bounder.poly(p)[0] >= 0 or self._nonneg_through_divisions(p):
            return True
        if self._falsified(p):
            return False
        sides = self._sides(p)
        if sides is not None:
            return all(self._prove_nonneg(q) for q in sides)
        if self._depth >= _MAX_DEPTH:
            return False
        relax = self._ranged(symbolic_only=True)
        if not any(self._mentions(a, relax) for a in _atoms(p)):
            return False
        self._depth += 1
        try:
            lower = self._relax(p, False, relax)
            return lower is not None and (self._bounder.poly(lower)[0] >= 0
                                          or self._nonneg_through_divisions(lower))
        except Unrepresentable:
            return False
        finally:
            self._depth -= 1

    def _falsified(self, p):
        """Whether values the facts allow make the int64 Poly ``p`` negative, so that no
        proof of ``p >= 0`` can succeed: such a point costs less than the symbolic
        relaxation of a proof that fails (most of those a build asks, as of ``j < n // 32``
        in a loop of ``(n + 31) // 32``). At each point of `_POINTS` every variable is at
        its lowest or at its highest value given the values of the variables its facts
        mention (one bounded on one side only: at its bound, or `_FAR` beyond); the values
        are remembered until a fact changes."""
        if p.dtype != "int64":
            return False
        names = [v for a in _atoms(p) for v in vars_of(a)]
        for point in _POINTS:
            values, bounder = self._points.get(point) or self._new_point(point)
            if all(self._value_at(v, values, bounder, *point) is not None for v in names) \
                    and bounder.poly(p)[1] < 0:
                return True
        return False

    def _new_point(self, point):
        """The values (none yet) and the bounder of ``point`` under the current facts."""
        values = {}
        made = self._points[point] = (values, ConstBounder(lambda v: (values[v], values[v])))
        return made

    def _value_at(self, var, values, bounder, at_top, far):
        """``var``'s value at a point of `_falsified` (``values`` holds the point so far),
        or None when the facts give it none (an empty range, a fact that is not one value,
        a variable not int64, facts in a cycle)."""
        if var in values:
            return values[var]
        values[var] = None   # until found (a cycle meets None)
        if var.dtype != "int64":
            return None
        sub = self._subst.get(var)
        facts = (sub,) if sub is not None else self._bounds.get(var, (None, None))
        if any(self._value_at(w, values, bounder, at_top, far) is None
               for e in facts if e is not None for w in vars_of(e)):
            return None
        if sub is not None:
            lo, hi = bounder.expr(sub)
            if lo != hi:
                return None
        else:
            lo = None if facts[0] is None else bounder.expr(facts[0])[1]
            hi = None if facts[1] is None else bounder.expr(facts[1])[0]
        if lo is not None and hi is not None:
            value = hi if at_top else lo
        elif lo is not None:
            value = lo + _FAR if far else lo
        elif hi is not None:
            value = hi - _FAR if far else hi
        else:
            value = _FAR if far else 0
        if value in (INF, -INF) or (lo is not None and hi is not None and lo > hi):
            return None
        values[var] = value
        return value

    def _nonneg_through_divisions(self, p):
        """Whether the constant bounds of ``s * p`` (``s >= 1``) with each term
        ``k * (x // c)`` (a constant ``c > 0``) bounded through ``x`` show ``p >= 0``:
        ``c * (x // c)`` lies in ``[x - c + 1, x]``, so ``n // 4 <= n`` for ``n >= 0``.
        ``s * p`` above ``-s`` is enough: ``p`` is an integer."""
        divisions = [m for m in p.terms if len(m) == 1 and type(m[0]) is Binary
                     and m[0].op == "floordiv" and type(m[0].b) is IntImm and m[0].b.value > 0]
        if not divisions:
            return False
        scaled, s = p, 1
        for mono in divisions:
            k = scaled.terms.get(mono)
            if k is None:
                continue
            c = mono[0].b.value
            t = c // math.gcd(k, c)
            k *= t
            x = Poly.from_expr(mono[0].a)
            scaled = scaled.scale(t).add(x if k < 0 else x.add(Poly(x.dtype, const=1 - c)),
                                         k // c)
            scaled._add_term(mono, -k)
            s *= t
        return self._bounder.poly(scaled)[0] > -s

    def _sides(self, p):
        """For ``p`` with a term ``k * max(a, b)``, ``k < 0`` (or ``k * min(a, b)``, ``k > 0``):
        ``p`` with ``a`` and with ``b`` in its place, both >= 0 exactly where ``p`` is (it
        is the smaller of the two); else None."""
        for mono, k in p.terms.items():
            atom = mono[0]
            if len(mono) == 1 and type(atom) is Binary and atom.op == ("max" if k < 0 else "min"):
                rest = p.copy()
                del rest.terms[mono]
                return [rest.add(Poly.from_expr(side), k) for side in (atom.a, atom.b)]
        return None

    # -- symbolic bounds -------------------------------------------------------------------
    def _ranged(self, symbolic_only=False):
        """The variables bounded on both sides: those a symbolic bound replaces. Proofs
        replace only those with a non-constant bound: constant bounds lose nothing when
        applied at the end, and keeping the variable keeps ``j - j`` at zero."""
        return {v for v, (lo, hi) in self._bounds.items() if lo is not None and hi is not None
                and not (symbolic_only and isinstance(lo, IntImm) and isinstance(hi, IntImm))}

    def _relax(self, p, upper, relax):
        """Bound ``p`` by replacing the variables of ``relax`` one at a time, simplifying
        in between; a variable goes before those its own bounds mention (``j`` in
        ``[i, n)`` before ``i``), so ``j - i`` stays >= 0."""
        simp = Simplifier(self)
        reach = self._reachable(p, relax)
        if self._independent(p, reach):
            # Linear in variables whose bounds mention none of the others: one substitution
            # gives what the variable-at-a-time loop below would.
            p = self._sym_poly(p, upper, reach)
            return None if p is None else simp.poly(p.to_expr())
        for var in self._dependency_order(reach):
            if any(self._mentions(a, {var}) for a in _atoms(p)):
                p = self._sym_poly(p, upper, {var})
                if p is None:
                    return None
                p = simp.poly(p.to_expr())
        return p

    def _reachable(self, p, relax):
        """The variables of ``relax`` that relaxing ``p`` can meet: those of ``p`` and, in
        turn, those the bounds of each mention (ordering only these keeps a relaxation
        proportional to the expression, not to every loop in scope)."""
        todo = [v for a in _atoms(p) for v in vars_of(a) if v in relax]
        seen = set()
        while todo:
            var = todo.pop()
            if var not in seen:
                seen.add(var)
                for b in self._bounds.get(var, ()):
                    if b is not None:
                        todo.extend(w for w in vars_of(b) if w in relax)
        return seen

    def _independent(self, p, relax):
        """Whether every term of ``p`` holds at most one atom that mentions ``relax``, that
        atom a variable, and no variable of ``relax`` is bounded in terms of another."""
        for mono in p.terms:
            hot = [a for a in mono if self._mentions(a, relax)]
            if len(hot) > 1 or (hot and not isinstance(hot[0], Var)):
                return False
        return not any(b is not None and self._mentions(b, relax)
                       for v in relax for b in self._bounds.get(v, ()))

    def _dependency_order(self, relax):
        order, done = [], set()

        def visit(var):
            if var in done:
                return
            done.add(var)
            for other in self._bounds:
                if other in relax and other not in done and any(
                        b is not None and self._mentions(b, {var}) for b in self._bounds[other]):
                    visit(other)
            order.append(var)

        for var in [v for v in self._bounds if v in relax] + [v for v in relax
                                                               if v not in self._bounds]:
            visit(var)
        return order

    def _mentions(self, expr, relax):
        return not vars_of(expr).isdisjoint(relax)

    def _sym_poly(self, p, upper, relax):
        """A Poly bounding ``p`` from above (``upper``) or below, free of ``relax``."""
        out = Poly(p.dtype, const=p.const)
        for mono, coeff in p.terms.items():
            term = Poly(p.dtype, {mono: coeff})
            hot = [a for a in mono if self._mentions(a, relax)]
            bound = None
            if not hot:
                bound = term
            elif len(hot) == 1:
                rest = mono_contains(mono, hot[:1])
                rest_iv = self._bounder.poly(Poly(p.dtype, {rest: 1}) if rest
                                             else Poly(p.dtype, const=1))
                sign = 1 if coeff > 0 else -1
                if rest_iv[1] <= 0:
                    sign = -sign
                if rest_iv[0] >= 0 or rest_iv[1] <= 0:
                    atom = self._sym_atom(hot[0], upper == (sign > 0), relax)
                    bound = None if atom is None else atom.mul_mono(rest).scale(coeff)
            if bound is None:
                side = self._bounder.poly(term)[1 if upper else 0]
                if side in (INF, -INF):
                    return None
                bound = Poly(p.dtype, const=side)
            out = out.add(bound)
        return out

    def _sym_divmod(self, atom, upper, relax, simp):
        """Bounds of ``a // d`` or ``a % d`` for a divisor ``d`` that is not a constant but
        known to be >= 1 and free of ``relax``: ``a % d`` in ``[0, d - 1]``; ``a // d``
        between ``lo(a) // d`` and ``hi(a) // d`` for ``a >= 0``."""
        d = atom.b
        if self._mentions(d, relax) or not _at_least(self.const_int_bound(d), 1):
            return None
        dp = Poly.from_expr(d)
        if atom.op == "floormod":
            return dp.add(Poly(dp.dtype, const=-1)) if upper else Poly(dp.dtype)
        inner = Poly.from_expr(atom.a)
        lo = self._sym_poly(inner, False, relax)
        if lo is None or self._bounder.poly(lo)[0] < 0:
            return None
        side = lo if not upper else self._sym_poly(inner, True, relax)
        return None if side is None else simp.divmod("floordiv", side, dp, positive=True)

    def _sym_atom(self, atom, upper, relax):
        dtype = atom.dtype
        if isinstance(atom, Var):
            bounds = self._bounds.get(atom)
            side = None if bounds is None else bounds[1 if upper else 0]
            if side is None or atom in self._visiting:
                return None
            self._visiting.add(atom)
            try:
                return self._sym_poly(Poly.from_expr(side), upper, relax)
            finally:
                self._visiting.discard(atom)
        simp = Simplifier(self)
        if isinstance(atom, Binary) and atom.op in ("floordiv", "floormod"):
            if not isinstance(atom.b, IntImm):
                return self._sym_divmod(atom, upper, relax, simp)
            if atom.b.value <= 0:
                return None
            c = Poly(dtype, const=atom.b.value)
            inner = Poly.from_expr(atom.a)
            if atom.op == "floordiv":
                b = self._sym_poly(inner, upper, relax)
                return None if b is None else simp.divmod("floordiv", b, c)
            lo, hi = self._sym_poly(inner, False, relax), self._sym_poly(inner, True, relax)
            if (lo is not None and hi is not None and self._bounder.poly(lo)[0] >= 0
                    and self._bounder.poly(hi)[1] < c.const):
                return hi if upper else lo
            return Poly(dtype, const=c.const - 1 if upper else 0)
        if isinstance(atom, Binary) and atom.op in ("min", "max"):
            parts, combine = (atom.a, atom.b), atom.op
            either = (atom.op == "min") == upper    # one side's bound is enough
        elif isinstance(atom, Select):
            parts, combine, either = (atom.true_value, atom.false_value), \
                ("max" if upper else "min"), False
        else:
            return None
        a, b = (self._sym_poly(simp.poly(x), upper, relax) for x in parts)
        if a is None or b is None:
            return (b if a is None else a) if either else None
        return simp.poly(Binary(combine, a.to_expr(), b.to_expr()))

def _at_least(bound, value):
    return bound[0] is not None and bound[0] >= value


def _factors(e):
    """The factors of a product (``e`` itself when it is not one)."""
    if isinstance(e, Binary) and e.op == "mul":
        return _factors(e.a) + _factors(e.b)
    return [e]


def _atoms(p):
    return [a for mono in p.terms for a in mono]


def _as_expr(expr):
    if isinstance(expr, PrimExpr):
        return expr
    if isinstance(expr, (int, bool)):
        return convert(expr)
    raise Error(f"expected a PrimExpr, got {type(expr).__name__} {expr!r}")


def _require_int(e, what):
    if not dt.is_integer(e.dtype) and e.dtype != "bool":
        raise Error(f"{what} needs an integer expression, got {e.dtype} expression {e!r}")


def simplify(expr, ranges=None):
    """Simplify ``expr``; ``ranges`` maps Var -> Range (or IntBound) for known bounds."""
    ana = Analyzer()
    for var, rng in (ranges or {}).items():
        ana.bind(var, rng)
    return ana.simplify(expr)
