"""Whether the boxes that loop iterations touch are apart: the question behind shrinking a
buffer to one tile (`pyir.transform.register_tiles`) and behind running iterations at the
same time (`pyir.schedule`'s parallel and vectorize).

A box starts, in each dimension, at a ``base`` that is affine in *atoms* -- the varying
loop variables, and ``v // d`` / ``v % d`` of one (what a fused loop binds) -- plus terms
free of them, and spans a constant extent there. In a dimension whose atoms form a mixed
radix (in order of ``|coefficient|``, each at least the extent plus the spread of the
smaller ones: ``j_0 * 64 + j_1 * 16`` with ``j_1`` in ``[0, 4)`` and 16 columns), different
values of those atoms give disjoint boxes.
"""

import math

from ..ir import expr as E
from .analyzer import vars_of


def affine_atoms(expr, varying):
    """``{atom: c}`` with ``expr == sum(c * atom) + (terms free of varying)``, or None when
    ``expr`` uses a varying variable otherwise (a product of two, ``v // d`` of an
    expression, a ``d`` that varies, ...)."""
    if not vars_of(expr) & varying:
        return {}
    if isinstance(expr, E.Var):
        return {expr: 1}
    if not isinstance(expr, E.Binary):
        return None
    if expr.op in ("add", "sub"):
        a, b = affine_atoms(expr.a, varying), affine_atoms(expr.b, varying)
        if a is None or b is None:
            return None
        sign = 1 if expr.op == "add" else -1
        out = dict(a)
        for atom, c in b.items():
            out[atom] = out.get(atom, 0) + sign * c
        return {atom: c for atom, c in out.items() if c}
    if expr.op == "mul":
        for x, y in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(y, E.IntImm):
                inner = affine_atoms(x, varying)
                return None if inner is None else {a: c * y.value for a, c in inner.items()
                                                   if c * y.value}
        return None
    if expr.op in ("floordiv", "floormod") and isinstance(expr.a, E.Var) \
            and not vars_of(expr.b) & varying:
        return {expr: 1}
    return None


def _values(atom, var_extents):
    """How many values ``atom`` takes, or None if unknown (``v % -4`` takes 4: -3 to 0)."""
    if isinstance(atom, E.Var):
        return var_extents.get(atom)
    if atom.op == "floormod" and isinstance(atom.b, E.IntImm) and atom.b.value:
        return abs(atom.b.value)
    return None


def tiles_apart(bases, extents, varying, var_extents, one_to_one=False):
    """Whether executions with different values of the ``varying`` variables touch boxes
    (``bases`` and constant ``extents`` per dimension) that are disjoint -- or, unless
    ``one_to_one``, the very same box. ``var_extents`` gives the number of values of the
    varying variables known to be constant. With ``one_to_one`` every varying variable must
    move the box: it is an atom itself, or both its ``// d`` and ``% d`` are."""
    separated, appearing = set(), set()
    for base, ext in zip(bases, extents):
        atoms = affine_atoms(base, varying)
        if atoms is None:
            return False
        appearing |= set(atoms)
        if not atoms or ext is None:
            continue
        span = ext
        for atom in sorted(atoms, key=lambda a: (abs(atoms[a]),
                                                 _values(a, var_extents) or math.inf)):
            if abs(atoms[atom]) < span:
                break
            count = _values(atom, var_extents)
            span += abs(atoms[atom]) * (count - 1) if count is not None else math.inf
        else:
            separated |= set(atoms)
    if not appearing <= separated:
        return False
    return not one_to_one or all(recoverable(v, separated) for v in varying)


def recoverable(var, exprs):
    """Whether ``var`` can be computed back from the values of ``exprs``: it is one of them,
    or both ``var // d`` and ``var % d`` are (one ``d``)."""
    if any(e is var for e in exprs):
        return True
    divisors = {e.b for e in exprs
                if isinstance(e, E.Binary) and e.op == "floordiv" and e.a is var}
    return any(isinstance(e, E.Binary) and e.op == "floormod" and e.a is var
               and e.b in divisors for e in exprs)
