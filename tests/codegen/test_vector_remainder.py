"""Vectorized loops whose constant extent is not a whole number of vectors: the rest runs as
narrower vectors (12 float32 lanes on AVX2: 8 + 4), also in a register tile."""

import importlib.util
import pathlib
import re

import numpy as np
import pytest
from pyir.codegen.emit_stmt import MAX_VECTOR_UNROLL
from pyir.codegen.target import Target
from pyir.codegen.vectorize import vector_chunks
from pyir.script import from_source

import pyir

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "matmul.py"
_spec = importlib.util.spec_from_file_location("bench_matmul_remainder", _PATH)
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)

EXTENTS = [1, 3, 4, 7, 12, 20, 77]
ROWS = 5
GUARD = 16
rng = np.random.default_rng(0)

ELEMENTWISE_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def ew(A: T.Buffer(({rows}, {e}), "{d}"), B: T.Buffer(({rows}, {e}), "{d}")):
    for i in range({rows}):
        for j in T.vectorized({e}):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * {d_}(2) - {d_}(1)
'''

VIA_TEMP_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def via_temp(A: T.Buffer(({e},), "float32"), B: T.Buffer(({e},), "float32")):
    L = T.alloc_buffer(({e},), "float32")
    for j in T.vectorized({e}):
        with T.block("L"):
            vj = T.axis.spatial({e}, j)
            L[vj] = A[vj] * T.float32(2)
    for j in T.vectorized({e}):
        with T.block("B"):
            vj = T.axis.spatial({e}, j)
            B[vj] = L[vj] + T.float32(1)
'''


def lanes(dtype):
    return Target.from_string("llvm").vector_bits // np.dtype(dtype).itemsize // 8


def guarded(shape, dtype, fill):
    """An array of ``shape`` inside a larger one: ``(view, whole)``; the GUARD elements on
    either side show writes out of bounds."""
    size = int(np.prod(shape))
    whole = np.full(size + 2 * GUARD, fill, dtype)
    return whole[GUARD:GUARD + size].reshape(shape), whole


def random(shape, dtype):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("extent", list(range(0, 40)) + [77, 1031])
@pytest.mark.parametrize("width", [2, 4, 8, 16])
def test_chunks_cover_the_extent_in_powers_of_two_narrow_first(extent, width):
    chunks = vector_chunks(extent, width)
    covered = sorted(j for offset, w in chunks for j in range(offset, offset + w))
    assert covered == list(range(extent))
    assert all(w & (w - 1) == 0 and w <= width and offset % w == 0 for offset, w in chunks)
    assert [w for _, w in chunks] == sorted(w for _, w in chunks)
    assert len([w for _, w in chunks if w < width]) == bin(extent % width).count("1")


def test_chunks_examples():
    assert vector_chunks(12, 8) == [(8, 4), (0, 8)]
    assert vector_chunks(20, 8) == [(16, 4), (0, 8), (8, 8)]
    assert vector_chunks(6, 8) == [(4, 2), (0, 4)]
    assert vector_chunks(7, 8) == [(6, 1), (4, 2), (0, 4)]
    assert vector_chunks(16, 8) == [(0, 8), (8, 8)]


@pytest.mark.parametrize("extent", EXTENTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_loads_and_stores_match_numpy_and_stay_in_bounds(extent, dtype):
    src = ELEMENTWISE_SRC.format(rows=ROWS, e=extent, d=dtype, d_="T." + dtype)
    lib = pyir.build(from_source(src), default_schedule=False)
    a = random((ROWS, extent), dtype)
    out, whole = guarded((ROWS, extent), dtype, 7)
    lib["ew"](a, out)
    np.testing.assert_array_equal(out, a * 2 - 1)  # exact, also as an FMA
    assert (whole[:GUARD] == 7).all() and (whole[-GUARD:] == 7).all()


@pytest.mark.parametrize("extent", [7, 12, 20])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_the_rest_is_narrower_vectors_not_a_scalar_loop(extent, dtype):
    """Every chunk of `vector_chunks` is one vector store of its width; no loop."""
    if extent // lanes(dtype) > MAX_VECTOR_UNROLL:
        pytest.skip("whole vectors past MAX_VECTOR_UNROLL run in a loop")
    src = ELEMENTWISE_SRC.format(rows=ROWS, e=extent, d=dtype, d_="T." + dtype)
    text = pyir.build(from_source(src), default_schedule=False).source("llvm")
    elem = {"float32": "float", "float64": "double", "int32": "i32"}[dtype]
    stores = re.findall(rf"store (<(\d+) x {elem}>|{elem}) ", text)
    expected = [w for _, w in vector_chunks(extent, lanes(dtype))]
    assert sorted(int(w or 1) for _, w in stores) == sorted(expected)
    assert len(re.findall(r"= phi\s+i64", text)) == 1  # the loop over rows only


@pytest.mark.parametrize("extent", [12, 20, 7])
def test_chunks_of_an_allocated_buffer_carry_the_alignment_their_offset_proves(extent):
    """``L`` is 64-byte aligned: a chunk of ``w`` floats at offset ``o`` (a multiple of
    ``w``) is ``min(64, 4 * w)``-byte aligned, whatever ``o``; parameters promise 4 bytes."""
    text = pyir.build(from_source(VIA_TEMP_SRC.format(e=extent)),
                      default_schedule=False).source("llvm")
    found = re.findall(r"(?:load|store) <(\d+) x float>.*, align (\d+)$", text, re.MULTILINE)
    expected = {(w, 4) for _, w in vector_chunks(extent, lanes("float32")) if w > 1}
    expected |= {(w, min(64, 4 * w)) for w, _ in expected}
    assert {(int(w), int(a)) for w, a in found} == expected
    a = random(extent, "float32")
    out = np.zeros(extent, "float32")
    pyir.build(from_source(VIA_TEMP_SRC.format(e=extent)), default_schedule=False)[
        "via_temp"](a, out)
    np.testing.assert_array_equal(out, a * 2 + 1)


# ---------------------------------------------------------------- register tiles
def matmul(n, dtype="float32"):
    return from_source(M.MATMUL_SRC.format(n=n if n else '"n"', m=n if n else "n")
                       .replace("float32", dtype))


@pytest.mark.parametrize("tile", [(6, 12), (6, 4), (4, 20)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("n", [50, 13, None])
def test_register_tiles_match_numpy_at_sizes_the_tile_does_not_divide(tile, dtype, n):
    lib = pyir.build(M.schedule_matmul(matmul(n, dtype), tile=tile).mod)
    for size in ([n] if n else [1, 13, 50]):
        a, b = random((size, size), dtype) / 8, random((size, size), dtype) / 8
        if dtype == "int32":
            a, b = (random((size, size), dtype) // 10 for _ in range(2))
        c, whole = guarded((size, size), dtype, 7)
        lib["matmul"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
        assert (whole[:GUARD] == 7).all() and (whole[-GUARD:] == 7).all()


def _tile_update_ir(tile, kind):
    """The matmul at n = 48 (no partial tiles): its only float arithmetic is the tile
    update in the k loop."""
    return pyir.build(M.schedule_matmul(M.matmul_func(48), parallel=False, tile=tile).mod
                      ).source(kind)


@pytest.mark.parametrize("tile", [(6, 12), (6, 4)])
def test_the_tile_update_is_packed_vector_arithmetic_only(tile):
    """Each row of the tile is updated by one vector multiply-add per chunk, none scalar."""
    rows, cols = tile
    text = _tile_update_ir(tile, "llvm")
    assert not re.search(r"= f(mul|add)( \w+)* float ", text)
    widths = sorted(w for _, w in vector_chunks(cols, lanes("float32")))
    for op in ("fmul", "fadd"):
        found = re.findall(rf"= {op}( \w+)* <(\d+) x float>", text)
        assert sorted(int(w) for _, w in found) == sorted(widths * rows)


@pytest.mark.parametrize("tile", [(6, 12), (6, 4)])
def test_the_tile_lives_in_vector_registers(tile):
    """After LLVM's passes the accumulators are loop-carried vector values (SROA promoted
    the tile): the k loop (LLVM may copy it when it unrolls the loop over tiles) has one
    ``phi <w x float>`` per row and chunk, no scalar one, and the tile has no memory left."""
    rows, cols = tile
    text = _tile_update_ir(tile, "llvm-opt")
    widths = sorted(w for _, w in vector_chunks(cols, lanes("float32")))
    k_loops = [sorted(int(w) for w in re.findall(r"= phi <(\d+) x float>", block))
               for block in re.split(r"\n(?=[\w.]+:)", text) if "x float>" in block]
    k_loops = [phis for phis in k_loops if phis]
    assert k_loops and all(phis == sorted(widths * rows) for phis in k_loops)
    assert not re.search(r"= phi float ", text)
    assert f"alloca [{rows * cols} x float]" not in text
