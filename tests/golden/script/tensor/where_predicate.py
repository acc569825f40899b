from pyir.script import tensor as T


@T.prim_func
def tail(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for io, ii in T.grid((n + 7) // 8, 8):
        with T.block("B"):
            vi = T.axis.spatial(n, io * 8 + ii)
            T.where(io * 8 + ii < n)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + 1.0
