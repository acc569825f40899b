"""Affine iterator maps: are block bindings a bijection of the loop space onto a box?

A binding such as ``i0 * 32 + i1`` or ``f // m`` is read as a sum of *splits* of loop
variables, ``(v // lower) % extent`` times a scale. The map from the loops to the
bindings is bijective onto ``[0, e0) x [0, e1) x ...`` when

- each binding is a mixed-radix number of its splits: scales 1, e_a, e_a * e_b, ...;
- the splits of each loop variable tile it exactly: lowers 1, x_a, x_a * x_b, ... with
  the last lower * extent equal to the loop extent (a loop of extent 1 may go unused).

The schedule asks it of bindings that are not affine (a fused loop's ``f // m``, ``f % m``:
`pyir.schedule.analysis.complete_binding`) and of what a fused loop produces per iteration
(`reverse_compute_at`). A predicate
``binding < bound`` (a split tail guard) shrinks that binding's extent to ``bound``.
Symbolic extents are compared with the `Analyzer`'s proofs.
"""

from dataclasses import dataclass

from ..errors import Error
from ..ir import Binary, IntImm, PrimExpr, Range, Var, conjuncts, dtype as dt
from ..ir.node import walk
from .analyzer import Analyzer
from .canonical import Poly, mono_contains
from .simplify import Simplifier


@dataclass(frozen=True)
class IterMap:
    """Result of `detect_iter_map`: ``ranges[k]`` holds the values binding k takes, as
    ``Range(offset, extent)``; ``bijective`` says every loop point maps to its own point
    of the box of those ranges and every point of the box is hit."""

    ranges: tuple
    bijective: bool


@dataclass(frozen=True)
class _Split:
    var: Var
    lower: Poly    # the split is (var // lower) % extent
    extent: Poly
    exact: bool    # extent divides what remains of the loop


def detect_iter_map(bindings, loop_ranges, predicate=None, analyzer=None):
    """Analyse ``bindings`` (index expressions) over ``loop_ranges`` (Var -> Range, each
    starting at 0). Returns an `IterMap`, or None if some binding is not a sum of splits
    of the loop variables with positive scales."""
    ana = analyzer or Analyzer()
    with ana.scope():
        for var, rng in loop_ranges.items():
            ana.bind(var, rng)
            if not ana.can_prove_equal(rng.start, 0):
                raise Error(f"detect_iter_map: loop {var.name} must start at 0")
        return _Detector(ana, dict(loop_ranges)).run(bindings, predicate)


class _Detector:
    def __init__(self, ana, loops):
        self.ana = ana
        self.simp = Simplifier(ana)
        self.loops = loops

    def equal(self, a, b):
        return self.ana.can_prove_equal(a.to_expr(), b.to_expr())

    def run(self, bindings, predicate):
        parsed = []
        for b in bindings:
            if not isinstance(b, PrimExpr) or not dt.is_int(b.dtype):
                raise Error(f"detect_iter_map: binding {b!r} is not an integer expression")
            terms = self.parse_sum(self.simp.poly(self.ana.simplify(b)))
            if terms is None:
                return None
            parsed.append(terms)
        bijective = self.tiles_loops([split for terms, _ in parsed for split, _ in terms])
        ranges = []
        for b, (terms, offset) in zip(bindings, parsed):
            extent = self.mixed_radix_extent(terms)
            if extent is None:
                bijective = False
                lo, hi = self.ana.symbolic_bound(b, list(self.loops))
                if lo is None or hi is None:
                    return None
                ranges.append(Range(lo, self.ana.simplify(hi - lo + 1)))
            else:
                ranges.append(Range(IntImm(offset, b.dtype), extent.to_expr()))
        if predicate is not None:
            ranges, bijective = self.apply_predicate(predicate, bindings, ranges, bijective)
        return IterMap(tuple(ranges), bijective)

    # -- reading bindings -------------------------------------------------------------
    def parse_sum(self, p):
        """``([(split, scale Poly)], offset)`` or None."""
        terms = []
        for mono, coeff in p.terms.items():
            hot = [a for a in mono if self.uses_loops(a)]
            if len(hot) != 1 or coeff <= 0:
                return None
            split = self.parse_split(hot[0])
            if split is None:
                return None
            rest = mono_contains(mono, hot)
            terms.append((split, Poly(p.dtype, const=coeff).mul_mono(rest)))
        return terms, p.const

    def uses_loops(self, expr):
        return any(isinstance(n, Var) and n in self.loops for n in walk(expr))

    def parse_split(self, atom):
        if isinstance(atom, Var):
            return _Split(atom, Poly(atom.dtype, const=1),
                          self.simp.poly(self.loops[atom].extent), True)
        if not (isinstance(atom, Binary) and atom.op in ("floordiv", "floormod")):
            return None
        if self.uses_loops(atom.b):
            return None
        inner = self.parse_split(atom.a)
        if inner is None:
            return None
        c = Poly.from_expr(atom.b)
        exact = inner.exact and self.equal(self.simp.divmod("floormod", inner.extent, c),
                                           Poly(c.dtype))
        if atom.op == "floordiv":
            whole = inner.extent if exact else inner.extent.add(c).sub(Poly(c.dtype, const=1))
            extent = self.simp.divmod("floordiv", whole, c, positive=True)  # rounded up
            return _Split(inner.var, inner.lower.mul(c), extent, exact)
        return _Split(inner.var, inner.lower, c, exact)

    # -- checks ------------------------------------------------------------------------
    def chain(self, items):
        """Order ``items`` ((step, size, payload)) so that steps go 1, s0, s0*s1, ...;
        returns (ordered payloads, total size) or None if they do not form such a chain."""
        left, ordered = list(items), []
        if not left:
            return [], None
        step = Poly(left[0][0].dtype, const=1)
        while left:
            k = next((k for k, it in enumerate(left) if self.equal(it[0], step)), None)
            if k is None:
                return None
            _, size, payload = left.pop(k)
            ordered.append(payload)
            step = step.mul(size)
        return ordered, step

    def tiles_loops(self, splits):
        for var, rng in self.loops.items():
            mine = [s for s in splits if s.var is var]
            extent = self.simp.poly(rng.extent)
            if not mine:
                if not self.equal(extent, Poly(extent.dtype, const=1)):
                    return False
                continue
            found = self.chain([(s.lower, s.extent, s) for s in mine])
            if found is None or not all(s.exact for s in mine) or not self.equal(found[1], extent):
                return False
        return True

    def mixed_radix_extent(self, terms):
        if not terms:
            return Poly("int64", const=1)
        found = self.chain([(scale, split.extent, None) for split, scale in terms])
        return None if found is None else found[1]

    def apply_predicate(self, predicate, bindings, ranges, bijective):
        ranges = list(ranges)
        for cond in conjuncts(self.ana.simplify(predicate)):
            target = None
            if isinstance(cond, Binary) and cond.op == "lt" and not self.uses_loops(cond.b):
                lhs = self.ana.simplify(cond.a)
                target = next((k for k, b in enumerate(bindings)
                               if self.ana.simplify(b) == lhs), None)
            if target is None or not self.ana.can_prove_equal(ranges[target].start, 0):
                bijective = False
                continue
            if not self.ana.can_prove(Binary("le", cond.b, ranges[target].extent)):
                bijective = False
                continue
            ranges[target] = Range(ranges[target].start, cond.b)
        return ranges, bijective


