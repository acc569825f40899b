"""The kernel corpus the schedule tests run on, with numpy references and argument makers."""

import numpy as np

from pyir.script import tensor as T


@T.prim_func
def matmul(A: T.Buffer(("n", "k"), "float32"), B: T.Buffer(("k", "m"), "float32"),
           C: T.Buffer(("n", "m"), "float32")):
    for i, j, r in T.grid(n, m, k):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]


@T.prim_func
def chain(A: T.Buffer(("n", "m"), "float32"), C: T.Buffer(("n", "m"), "float32")):
    B = T.alloc_buffer((n, m), "float32")
    for i, j in T.grid(n, m):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(n, m):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def rowsum(A: T.Buffer(("n", 128), "float32"), S: T.Buffer(("n",), "float32")):
    for i, k in T.grid(n, 128):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]


@T.prim_func
def rowsum_symbolic(A: T.Buffer(("n", "m"), "float32"), S: T.Buffer(("n",), "float32")):
    for i, k in T.grid(n, m):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]


@T.prim_func
def conv1d(X: T.Buffer(("n",), "float32"), W: T.Buffer((3,), "float32"),
           Y: T.Buffer(("n",), "float32")):
    P = T.alloc_buffer((n + 2,), "float32")
    for i in range(n + 2):
        with T.block("P"):
            vi = T.axis.spatial(n + 2, i)
            P[vi] = T.if_then_else(vi >= 1 and vi <= n, X[vi - 1], T.float32(0))
    for i, r in T.grid(n, 3):
        with T.block("Y"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                Y[vi] = T.float32(0)
            Y[vi] = Y[vi] + P[vi + vr] * W[vr]


@T.prim_func
def bias_relu(A: T.Buffer(("n", 64), "float32"), bias: T.Buffer((64,), "float32"),
              D: T.Buffer(("n", 64), "float32")):
    B = T.alloc_buffer((n, 64), "float32")
    C = T.alloc_buffer((n, 64), "float32")
    for i, j in T.grid(n, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + bias[vj]
    for i, j in T.grid(n, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(B[vi, vj], T.float32(0))
    for i, j in T.grid(n, 64):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] * T.float32(3)


@T.prim_func
def mm_relu(A: T.Buffer(("n", 32), "float32"), B: T.Buffer((32, 24), "float32"),
            D: T.Buffer(("n", 24), "float32")):
    Y = T.alloc_buffer((n, 24), "float32")
    for i, j, r in T.grid(n, 24, 32):
        with T.block("Y"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vr] * B[vr, vj]
    for i, j in T.grid(n, 24):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T.prim_func
def static_mm(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 96), "float32"),
              C: T.Buffer((64, 96), "float32")):
    for i, j, r in T.grid(64, 96, 48):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


def args_for(name, size, seed=0):
    """Inputs and zeroed outputs of kernel ``name`` at ``size`` (the symbolic extent)."""
    rng = np.random.default_rng(seed)
    n = size
    if name == "matmul":
        return [_rand(rng, n, n + 2), _rand(rng, n + 2, n + 1), np.zeros((n, n + 1), "float32")]
    if name == "chain":
        return [_rand(rng, n, n + 3), np.zeros((n, n + 3), "float32")]
    if name == "rowsum":
        return [_rand(rng, n, 128), np.zeros((n,), "float32")]
    if name == "conv1d":
        return [_rand(rng, n), _rand(rng, 3), np.zeros((n,), "float32")]
    if name == "bias_relu":
        return [_rand(rng, n, 64), _rand(rng, 64), np.zeros((n, 64), "float32")]
    if name == "mm_relu":
        return [_rand(rng, n, 32), _rand(rng, 32, 24), np.zeros((n, 24), "float32")]
    if name == "static_mm":
        return [_rand(rng, 64, 48), _rand(rng, 48, 96), np.zeros((64, 96), "float32")]
    raise KeyError(name)


KERNELS = {"matmul": matmul, "chain": chain, "rowsum": rowsum, "conv1d": conv1d,
           "bias_relu": bias_relu, "mm_relu": mm_relu, "static_mm": static_mm}
