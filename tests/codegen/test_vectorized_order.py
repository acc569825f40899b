"""A vectorized loop written in a script (not checked as Schedule.vectorize checks one)
whose iterations touch one another's elements runs in the loop's order: as a scalar loop,
with the results of the serial loop, and without LLVM's complaint that it could not
vectorize it."""

import numpy as np
import pytest

import pyir
from pyir.codegen.target import Target
from pyir.codegen.vectorize import iterations_apart
from pyir.ir import Binary, Buffer, BufferLoad, BufferStore, IntImm, Var
from pyir.script import from_source


def _loop(kind, body):
    return from_source(f'''from pyir.script import tensor as T
@T.prim_func
def f(A: T.Buffer((130,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.{kind}(64):
        {body}
''')


BODIES = [
    "A[0] = A[0] + B[i]",                                        # one element, every lane
    "A[i + 1] = A[i] + B[i]",                                    # reads the previous one
    "A[i] = B[i]\n        A[i + 1] = B[i] * T.float32(2)",      # the next one's first write
    "A[2 * i] = B[i]\n        A[2 * i + 2] = A[2 * i] + B[i]",  # two apart, step 2
]


@pytest.mark.parametrize("body", BODIES)
def test_dependent_iterations_give_the_serial_loop_s_result(body, capfd):
    """A[0] = A[0] + B[i] over 64 ones gave 4 (16 lanes at once) instead of 64."""
    b = np.arange(64, dtype=np.float32) + 1
    got, want = np.ones(130, np.float32), np.ones(130, np.float32)
    pyir.build(_loop("vectorized", body))["f"](got, b)
    pyir.build(_loop("serial", body))["f"](want, b)
    np.testing.assert_array_equal(got, want)
    assert "not vectorized" not in capfd.readouterr().err


@pytest.mark.parametrize("body", [
    "A[i] = A[i] + B[i]",                                        # each its own element
    "A[2 * i] = B[i]\n        A[2 * i + 1] = B[i] * T.float32(2)",  # interleaved, disjoint
])
def test_independent_iterations_stay_vector_code(body):
    """The loops a vectorized loop is for keep their vector code, as wide as the host's
    widest vectors (it said 16 lanes, AVX-512's, and failed on an AVX2 host)."""
    func = _loop("vectorized", body)
    lanes = Target.from_string("llvm").vector_bits // 32
    assert f"<{lanes} x float>" in pyir.build(func).source("llvm")
    b = np.arange(64, dtype=np.float32)
    got, want = np.ones(130, np.float32), np.ones(130, np.float32)
    pyir.build(func)["f"](got, b)
    pyir.build(_loop("serial", body))["f"](want, b)
    np.testing.assert_array_equal(got, want)


def test_iterations_apart_reads_the_steps():
    """Two accesses a constant apart collide in other iterations exactly when the distance
    is a multiple of the step."""
    A, i = Buffer("A", (64,), "float32"), Var("i")

    def store(index, value):
        return BufferStore(A, value, (index,))

    two_i = Binary("mul", i, IntImm(2))
    load = BufferLoad(A, (Binary("add", two_i, IntImm(1)),))
    assert iterations_apart(store(two_i, load), i)                      # odd vs even
    load = BufferLoad(A, (Binary("add", two_i, IntImm(4)),))
    assert not iterations_apart(store(two_i, load), i)                  # 2 iterations on
    assert not iterations_apart(store(IntImm(3), BufferLoad(A, (i,))), i)
