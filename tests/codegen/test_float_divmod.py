"""Float ``//`` and ``%`` against numpy's floor_divide and remainder, bit for bit: hard
values (signed zeros, infinities, NaN, subnormals, huge and tiny ratios) and random ones,
for every float dtype, scalar and vectorized, at every IR optimization level, with
constant operands (folded by LLVM) and in an exported library.

They were ``floor(a / b)`` and ``a - floor(a / b) * b``: ``7.0 // 0.1`` was 70.0 (numpy:
69.0) and ``7.0 % 0.1`` 0.0 (numpy: 0.0999...), ``-5.0 // inf`` -0.0 (numpy: -1.0), ``5.0 %
inf`` NaN (numpy: 5.0), ``inf // 3.0`` inf (numpy: NaN), ``0.0 % -5.0`` 0.0 (numpy: -0.0).
"""

import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyir
from pyir.script import from_source

FLOATS = ["float16", "float32", "float64"]
LEVELS = ["none", "fast", "O3"]

SOURCE = '''from pyir.script import tensor as T

@T.prim_func
def {name}(A: T.Buffer(("n",), "{d}"), B: T.Buffer(("n",), "{d}"), Q: T.Buffer(("n",), "{d}"),
           R: T.Buffer(("n",), "{d}")):
    for i in T.serial(n):
        with T.block("O"):
            vi = T.axis.spatial(n, i)
            Q[vi] = A[vi] // B[vi]
            R[vi] = A[vi] % B[vi]
'''


def hard_values(dtype):
    """Both signs of values where floor division is delicate, as ``dtype`` (no repeats)."""
    fi = np.finfo(dtype)
    tiny = float(fi.smallest_subnormal)
    magnitudes = [0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 1 / 3, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0,
                  5.0, 6.0, 7.0, 10.0, 100.0, 1e5, 1e-5, 1e10, 1e-10, 1e30, 1e-30, 1e300,
                  1e-300, 1e-320, float(fi.max), float(fi.max) / 2, float(fi.tiny), tiny,
                  3 * tiny, float(fi.eps), 1 - float(fi.epsneg), 1 + float(fi.eps),
                  2.0 ** (fi.nmant + 1), 2.0 ** fi.nmant + 1, np.inf, np.nan]
    with np.errstate(over="ignore"):
        values = np.array([s * m for m in magnitudes for s in (1, -1)]).astype(dtype)
    bits = f"u{values.itemsize}"
    return np.unique(values.view(bits)).view(dtype)


def operands(dtype, seed=0, n=3000):
    """Every pair of hard values, then random bit patterns and random scaled numbers."""
    hard = hard_values(dtype)
    a, b = (x.ravel() for x in np.meshgrid(hard, hard))
    rng = np.random.default_rng(seed)
    bits = f"u{np.dtype(dtype).itemsize}"
    raw = lambda: rng.integers(0, np.iinfo(bits).max, n, dtype=bits, endpoint=True).view(dtype)
    with np.errstate(over="ignore"):
        scaled = lambda: (rng.uniform(-100, 100, n) * 10.0 ** rng.integers(-6, 6, n)).astype(
            dtype)
        a = np.concatenate([a, raw(), scaled(), scaled()])
        b = np.concatenate([b, raw(), scaled(), rng.uniform(-1, 1, n).astype(dtype)])
    return a, b


def expected(a, b):
    with np.errstate(all="ignore"):
        return np.floor_divide(a, b), np.remainder(a, b)


def assert_same_bits(got, want, a, b, what):
    """Equal bit for bit (so -0.0 is not 0.0), except that any NaN matches any NaN."""
    bits = f"u{got.itemsize}"
    nan = np.isnan(want)
    bad = (np.isnan(got) != nan) | (~nan & (got.view(bits) != want.view(bits)))
    assert not bad.any(), [f"{x!r} {what} {y!r} = {g!r}, numpy {w!r}" for x, y, g, w in
                           zip(a[bad][:8], b[bad][:8], got[bad][:8], want[bad][:8])]


def run(lib, name, a, b):
    q, r = np.empty_like(a), np.empty_like(a)
    lib[name](a, b, q, r)
    return q, r


@pytest.mark.parametrize("opt_level", LEVELS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_floor_div_and_mod_match_numpy(dtype, opt_level):
    """Scalar code (no schedule) and vector code (the default schedule vectorizes the loop:
    frem on vectors, lane by lane) both give numpy's results."""
    func = from_source(SOURCE.format(name="f", d=dtype))
    a, b = operands(dtype)
    want_q, want_r = expected(a, b)
    for vectorized in (False, True):
        lib = pyir.build(func, default_schedule=vectorized, opt_level=opt_level)
        assert ("frem <" in lib.source("llvm")) == vectorized
        q, r = run(lib, "f", a, b)
        assert_same_bits(q, want_q, a, b, "//")
        assert_same_bits(r, want_r, a, b, "%")


@pytest.mark.parametrize("dtype, quotient, remainder", [
    ("float16", 70.0, np.float16(7.0) % np.float16(0.1)),
    ("float32", 69.0, np.float32(7.0) % np.float32(0.1)),
    ("float64", 69.0, 7.0 % 0.1)])
def test_seven_floor_div_a_tenth(dtype, quotient, remainder):
    """``7.0 // 0.1`` is 69.0 in float32 and float64 (0.1 is a little more than a tenth),
    70.0 in float16 (where it is a little less); ``7.0 % 0.1`` is what is left."""
    lib = pyir.build(from_source(SOURCE.format(name="f", d=dtype)))
    q, r = run(lib, "f", np.array([7.0], dtype), np.array([0.1], dtype))
    assert q[0] == quotient and r[0] == remainder and r[0] > 0


def literal(dtype, value):
    if np.isnan(value):
        return f'T.{dtype}("nan")'
    if np.isinf(value):
        return f'T.{dtype}("{"-" if value < 0 else ""}inf")'
    return f"T.{dtype}({float(value)!r})"


@pytest.mark.parametrize("opt_level", LEVELS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_constant_float_floor_div_and_mod_match_numpy(dtype, opt_level):
    """``T.float32(7.0) // T.float32(0.1)`` and the like with constant operands: at "O3"
    LLVM folds them while building (no frem is left), and the folded values are numpy's,
    as the computed ones are at "none"."""
    hard = hard_values(dtype)[::4]
    a, b = (x.ravel() for x in np.meshgrid(hard, hard))
    chunks = range(0, len(a), 32)   # a block of a few hundred statements nests too deeply
    lines = ["from pyir.script import ir as I, tensor as T", "", "@I.ir_module", "class M:"]
    for start in chunks:
        pairs = list(zip(a, b))[start:start + 32]
        lines += ["    @T.prim_func",
                  f'    def f{start}(Q: T.Buffer(({len(pairs)},), "{dtype}"), '
                  f'R: T.Buffer(({len(pairs)},), "{dtype}")):',
                  '        with T.block("c"):']
        for k, (x, y) in enumerate(pairs):
            x, y = literal(dtype, x), literal(dtype, y)
            lines += [f"            Q[{k}] = {x} // {y}", f"            R[{k}] = {x} % {y}"]
    lib = pyir.build(from_source("\n".join(lines) + "\n"), opt_level=opt_level)
    if opt_level == "O3":
        assert "frem" not in lib.source("llvm-opt")
    q, r = np.empty_like(a), np.empty_like(a)
    for start in chunks:
        lib[f"f{start}"](q[start:start + 32], r[start:start + 32])
    want_q, want_r = expected(a, b)
    assert_same_bits(q, want_q, a, b, "//")
    assert_same_bits(r, want_r, a, b, "%")


LOADER = """
import sys
import numpy as np
import pyir
from test_float_divmod import FLOATS, assert_same_bits, expected, operands, run
lib = pyir.load_module(sys.argv[1])
for dtype in FLOATS:
    a, b = operands(dtype, seed=1, n=500)
    q, r = run(lib, "divmod_" + dtype, a, b)
    want_q, want_r = expected(a, b)
    assert_same_bits(q, want_q, a, b, "//")
    assert_same_bits(r, want_r, a, b, "%")
print("ok")
"""


def test_float_floor_div_and_mod_in_an_exported_library(tmp_path):
    """The exported shared object resolves the fmod/fmodf calls that frem becomes (it links
    libm) and, loaded in a fresh process, gives numpy's results."""
    source = "from pyir.script import ir as I, tensor as T\n\n@I.ir_module\nclass M:\n"
    for dtype in FLOATS:
        source += textwrap.indent(SOURCE.format(name=f"divmod_{dtype}", d=dtype).split(
            "\n", 1)[1], "    ")
    path = tmp_path / "divmod.so"
    pyir.build(from_source(source)).export_library(path)
    done = subprocess.run([sys.executable, "-c", LOADER, str(path)], capture_output=True,
                          text=True, timeout=120, cwd=pathlib.Path(__file__).parent)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
