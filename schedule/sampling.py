"""Sampling: random choices a schedule makes with its seeded generator, recorded in the
trace with the value chosen so that a replay makes the same choice."""

from pyir.ir import IntImm

from .errors import ScheduleError


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def sample_perfect_tile(loop, n, max_innermost_factor, decision, rng):
    """``n`` factors whose product is exactly the constant extent of ``loop``, the
    innermost at most ``max_innermost_factor``; ``decision`` (a replayed choice) is
    checked and returned instead of drawing.

    Example: a loop over 96 with ``n=3, max_innermost_factor=8`` may give ``[3, 4, 8]``;
    ``sch.split(loop, factors=[v0, v1, v2])`` then splits it with no tail guard.
    """
    subject = f"loop {loop.loop_var.name}"
    if not isinstance(loop.extent, IntImm):
        raise ScheduleError("sample_perfect_tile", subject, "the loop's extent is not a "
                            "constant, so it has no perfect tiling to sample")
    if not isinstance(n, int) or n < 1:
        raise ScheduleError("sample_perfect_tile", subject, f"n must be a positive int, got {n!r}")
    extent = loop.extent.value
    if decision is not None:
        prod = 1
        for f in decision:
            prod *= f
        if len(decision) != n or prod != extent:
            raise ScheduleError("sample_perfect_tile", subject, f"decision {decision} is not "
                                f"{n} factors of {extent}")
        return [int(f) for f in decision]
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
