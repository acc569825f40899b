"""detect_iter_map: affine, bijective block bindings over loops."""

import pytest

import pyir
from pyir.arith import detect_iter_map
from pyir.ir import Range, Var, and_, lt

from arith_helpers import fmt

i, j, i0, i1, f, n, m = (Var(s) for s in ("i", "j", "i0", "i1", "f", "n", "m"))


def extents(im):
    return tuple(fmt(r.extent) for r in im.ranges)


def test_split_is_bijective():
    im = detect_iter_map([i0 * 32 + i1, j], {i0: Range(0, 4), i1: Range(0, 32), j: Range(0, n)})
    assert im.bijective and extents(im) == ("128", "n")


def test_symbolic_fuse_is_bijective():
    im = detect_iter_map([f // m, f % m], {f: Range(0, n * m)})
    assert im.bijective and extents(im) == ("n", "m")


def test_split_of_split():
    im = detect_iter_map([(i // 4) % 8, i % 4, i // 32], {i: Range(0, 64)})
    assert im.bijective and extents(im) == ("8", "4", "2")


def test_tail_guard_predicate():
    loops = {i0: Range(0, (n + 31) // 32), i1: Range(0, 32)}
    im = detect_iter_map([i0 * 32 + i1], loops, predicate=lt(i0 * 32 + i1, n))
    assert im.bijective and extents(im) == ("n",)
    im = detect_iter_map([i0 * 32 + i1], loops)
    assert im.bijective and extents(im) == ("(((n + 31) // 32) * 32)",)
    im = detect_iter_map([i0 * 32 + i1], loops, predicate=and_(lt(i0 * 32 + i1, n), lt(i1, 7)))
    assert not im.bijective


def test_not_bijective():
    assert not detect_iter_map([i0 * 32 + i1, i0], {i0: Range(0, 4), i1: Range(0, 32)}).bijective
    assert not detect_iter_map([i // 4, i % 4], {i: Range(0, 10)}).bijective
    assert not detect_iter_map([i * 2], {i: Range(0, 10)}).bijective
    assert not detect_iter_map([i], {i: Range(0, 10), j: Range(0, 2)}).bijective
    assert detect_iter_map([i], {i: Range(0, 10), j: Range(0, 1)}).bijective
    im = detect_iter_map([i0 * 16 + i1], {i0: Range(0, 4), i1: Range(0, 32)})
    assert not im.bijective and extents(im) == ("80",)


def test_not_affine():
    assert detect_iter_map([i * i], {i: Range(0, 8)}) is None
    assert detect_iter_map([0 - i], {i: Range(0, 8)}) is None
    assert detect_iter_map([i // j], {i: Range(0, 8), j: Range(0, 2)}) is None


def test_constant_offset_and_errors():
    im = detect_iter_map([i + 3], {i: Range(0, 8)})
    assert im.bijective and fmt(im.ranges[0]) == "[3, +8)"
    with pytest.raises(pyir.Error, match="start at 0"):
        detect_iter_map([i], {i: Range(1, 8)})
