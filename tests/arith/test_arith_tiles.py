"""pyir.arith.tiles: whether the boxes loop iterations touch are disjoint (or the same)."""

from pyir.arith import tiles_apart
from pyir.arith.tiles import affine_atoms
from pyir.ir import Binary, IntImm, Var

from arith_helpers import evaluate

i, j, k, f, n = Var("i"), Var("j"), Var("k"), Var("f"), Var("n")
TILE = (7, 32)


def test_affine_atoms():
    assert affine_atoms(i * 7 + j * 3 - i + n, {i, j}) == {i: 6, j: 3}
    assert affine_atoms(f // 9 * 6 + n, {f}) == {f // 9: 6}
    assert affine_atoms(f % n * 16, {f}) == {f % n: 16}
    assert affine_atoms(i * j, {i, j}) is None
    assert affine_atoms((i + 1) // 2, {i}) is None
    assert affine_atoms(n // i, {i}) is None
    assert affine_atoms(n * 2, {i}) == {}


def test_one_loop_per_dimension():
    # Tiles of 7 rows at i * 7: disjoint per i; at i * 1 they overlap (a value written for
    # one i may be read for the next).
    assert tiles_apart((i * 7, j * 32), TILE, {i, j}, {})
    assert not tiles_apart((i * 1, j * 32), TILE, {i, j}, {})
    assert not tiles_apart((i * 7 + j, IntImm(0)), TILE, {i, j}, {})
    assert tiles_apart((IntImm(0), IntImm(0)), TILE, {i, j}, {})


def test_a_mixed_radix_in_one_dimension():
    # k in [0, 4) steps 32 columns, j steps 128: apart; a step of 64 for j meets k = 2's
    # tile; an unknown number of k values proves nothing.
    assert tiles_apart((i * 7, j * 128 + k * 32), TILE, {i, j, k}, {k: 4})
    assert not tiles_apart((i * 7, j * 64 + k * 32), TILE, {i, j, k}, {k: 4})
    assert not tiles_apart((i * 7, j * 128 + k * 32), TILE, {i, j, k}, {})
    assert tiles_apart((i * 7, j * 128 + k * 32), TILE, {i, j, k}, {k: 4, j: 8})


def test_a_fused_loop():
    # f = fuse(i_0, j_0) binds i_0 = f // J, j_0 = f % J (J symbolic): one tile per f.
    J = (n + 31) // 32
    bases = (f // J * 7, f % J * 32)
    assert tiles_apart(bases, TILE, {f}, {}, one_to_one=True)
    # Only the rows move: iterations with one f // J share a tile (fine for one tile
    # serving all, not for running them at the same time).
    assert tiles_apart((f // J * 7, IntImm(0)), TILE, {f}, {})
    assert not tiles_apart((f // J * 7, IntImm(0)), TILE, {f}, {}, one_to_one=True)
    # Divisions by two different numbers do not give f back.
    assert not tiles_apart((f // J * 7, f % n * 32), TILE, {f}, {}, one_to_one=True)
    assert not tiles_apart((f // J * 3, f % J * 32), TILE, {f}, {})


def test_one_to_one_needs_every_variable_to_move_the_tile():
    assert tiles_apart((i * 7, j * 32), TILE, {i, j}, {}, one_to_one=True)
    assert not tiles_apart((i * 7, IntImm(0)), TILE, {i, j}, {}, one_to_one=True)


def test_a_negative_modulus_takes_as_many_values_as_a_positive_one():
    """``i % -4`` was said to take -4 values: the spread of the smaller atoms went negative
    and ``i + i % -4`` (``i`` in [0, 3)) gave each ``i`` a tile of its own, though ``i = 0``
    and ``i = 2`` both touch 0."""
    base = i + Binary("floormod", i, IntImm(-4))
    assert [evaluate(base, {i: v}) for v in range(3)] == [0, -2, 0]
    assert not tiles_apart([base], [1], {i}, {i: 3}, one_to_one=True)
    assert tiles_apart([i * 4 + Binary("floormod", j, IntImm(-4))], [1], {i, j}, {i: 3})
