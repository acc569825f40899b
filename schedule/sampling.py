"""Sampling: random choices a schedule makes with its seeded generator, recorded in the
trace with the value chosen so that a replay makes the same choice."""

import math

from pyir.ir import IntImm

from .errors import ScheduleError
from .loops import is_int


#: The most tiles a sample may ask for: a loop splits into at most as many non-trivial
#: factors as its extent has prime factors (62 for an int64 extent).
MAX_TILES = 64
#: The longest loop whose tilings are sampled (finding an extent's divisors takes up to its
#: square root in steps: 65536 here).
MAX_EXTENT = 1 << 32


def _divisors(n):
    """The divisors of ``n``, ascending, in O(sqrt(n)) steps."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def sample_perfect_tile(loop, n, max_innermost_factor, decision, rng):
    """``n`` factors whose product is exactly the constant extent of ``loop``, the
    innermost at most ``max_innermost_factor``; ``decision`` (a replayed choice) is
    checked and returned instead of drawing.

    Example: a loop over 96 with ``n=3, max_innermost_factor=8`` may give ``[3, 4, 8]``;
    ``sch.split(loop, factors=[v0, v1, v2])`` then splits it with no tail guard.
    """
    prim, subject = "sample_perfect_tile", f"loop {loop.loop_var.name}"
    if not is_int(n) or not 1 <= n <= MAX_TILES:
        raise ScheduleError(prim, subject, f"n (the number of tiles) must be an int from 1 to "
                            f"{MAX_TILES}, got {n!r}")
    if max_innermost_factor is not None and not (is_int(max_innermost_factor)
                                                 and max_innermost_factor >= 1):
        raise ScheduleError(prim, subject, "max_innermost_factor must be a positive int or "
                            f"None, got {max_innermost_factor!r}")
    if not isinstance(loop.extent, IntImm):
        raise ScheduleError(prim, subject, "the loop's extent is not a constant, so it has no "
                            "perfect tiling to sample")
    extent = loop.extent.value
    if extent < 1:
        raise ScheduleError(prim, subject, f"the loop's extent is {extent}, so it has no "
                            "tiling into positive factors")
    if extent > MAX_EXTENT:
        raise ScheduleError(prim, subject, f"the loop's extent {extent} is past 2**32, the "
                            "longest loop whose tilings are sampled")
    if n == 1 and max_innermost_factor is not None and extent > max_innermost_factor:
        raise ScheduleError(prim, subject, f"one tile is the whole extent {extent}, more than "
                            f"max_innermost_factor {max_innermost_factor}")
    if decision is not None:
        if not isinstance(decision, (list, tuple)):
            raise ScheduleError(prim, subject, f"decision must be a list of {n} factors, got "
                                f"{decision!r}")
        for f in decision:
            if not (is_int(f) and f >= 1):
                raise ScheduleError(prim, subject, f"decision factor {f!r} is not a positive "
                                    f"int, in decision {list(decision)}")
        decision = [int(f) for f in decision]
        if len(decision) != n or math.prod(decision) != extent:
            raise ScheduleError(prim, subject, f"decision {decision} is not {n} factors of "
                                f"{extent}")
        if max_innermost_factor is not None and decision[-1] > max_innermost_factor:
            raise ScheduleError(prim, subject, f"decision {decision} has innermost factor "
                                f"{decision[-1]}, more than max_innermost_factor "
                                f"{max_innermost_factor}")
        return decision
    if n == 1:
        return [extent]
    cap = max_innermost_factor or extent
    inner = rng.choice([d for d in _divisors(extent) if d <= cap])
    factors = [inner]
    rest = extent // inner
    for _ in range(n - 2):
        f = rng.choice(_divisors(rest))
        factors.append(f)
        rest //= f
    factors.append(rest)
    return list(reversed(factors))
