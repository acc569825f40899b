"""Sizes past int64: a buffer whose constant dimensions alone hold more elements than int64
indices address is refused at build; a temporary (of a prim function or of a graph
function) whose byte size overflows int64 as it is computed at run time is "out of memory",
never a wrapped small block that the code then overruns. The calls run in a subprocess,
which must survive them."""

import pathlib
import subprocess
import sys

import pytest

import pyir
from pyir.script import tensor as T

SURVIVAL = """
import sys
import numpy as np
import pyir
from pyir.script import ir as I, graph as R, tensor as T
sys.path.insert(0, {here!r})
from sched_helpers import fresh

def report(what, f, *args):
    try:
        f(*args)
    except pyir.Error as e:
        print(what, "refused:", str(e).split(": ", 1)[1])
    else:
        print(what, "ran")

# A layout whose third dimension grows by 2**60 per row: (n - 1) * 2**60 + 1 elements.
sch = fresh("chain")
sch.transform_layout(sch.get_block("B"), "B", "i, j -> i, j, i * 1152921504606846976")
chain = pyir.build(sch.mod)["chain"]
a = np.arange(7, dtype="float32").reshape(1, 7)
c = np.zeros_like(a)
chain(a, c)
print("n=1", "right" if np.array_equal(c, a * 2 + 1) else "wrong")
for n in (2, 4):
    a = np.ones((n, 7), "float32")
    report(f"n={{n}}", chain, a, np.zeros_like(a))

# 2**61 x 2 float32 elements fit int64 indices; their 2**64 bytes do not.
@T.prim_func
def wide(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((2305843009213693952, 2), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi, 0] = A[vi]
            B[2305843009213693951, 1] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi, 0] + B[2305843009213693951, 1]

report("wide", pyir.build(wide)["wide"], np.ones(4, "float32"), np.zeros(4, "float32"))

@I.ir_module
class Spread:
    @T.prim_func
    def spread(X: T.Buffer(("n",), "float32"),
               Y: T.Buffer(("n * 1152921504606846976",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = X[vi]

    @T.prim_func
    def gather(Y: T.Buffer(("m",), "float32"), Z: T.Buffer((1,), "float32")):
        for i in range(1):
            with T.block("Z"):
                vi = T.axis.spatial(1, i)
                Z[vi] = Y[vi]

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        y = R.call_tir(cls.spread, (x,), out_sinfo=R.Tensor((n * 1152921504606846976,), "float32"))
        return R.call_tir(cls.gather, (y,), out_sinfo=R.Tensor((1,), "float32"))

report("graph", pyir.build(Spread)["main"], np.ones(2, "float32"))
print("survived")
"""


def test_temporaries_whose_size_overflows_are_out_of_memory(tmp_path):
    script = tmp_path / "survival.py"   # a file: the parser reads decorated functions' source
    script.write_text(SURVIVAL.format(here=str(pathlib.Path(__file__).parents[1] / "schedule")))
    done = subprocess.run([sys.executable, str(script)], check=False, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    oom = "out of memory while allocating a temporary buffer"
    assert done.stdout.splitlines() == [
        "n=1 right", f"n=2 refused: {oom}", f"n=4 refused: {oom}", f"wide refused: {oom}",
        f"graph refused: {oom}", "survived"]


@T.prim_func
def huge(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4611686018427387904, 4), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi, vi] = A[vi]
            B[4611686018427387903, 0] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi, vi]


def test_a_buffer_past_int64_elements_is_refused_at_build():
    """Flattened, its 2**64 elements were an extent of 0 and B[2**62 - 1, 0] was B[-4]."""
    with pytest.raises(pyir.IRError, match=r"^prim function huge: buffer B has "
                       r"18446744073709551616 elements in its constant dimensions alone, more "
                       r"than int64 indices address$"):
        pyir.build(huge)
