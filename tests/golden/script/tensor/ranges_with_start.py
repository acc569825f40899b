from pyir.script import tensor as T


@T.prim_func
def shifted(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(1, n - 1):
        with T.block("stencil"):
            vi = T.axis.spatial(n - 2, i - 1)
            T.reads(A[vi:vi + 3])
            T.writes(B[vi + 1])
            B[vi + 1] = (A[vi] + A[vi + 1] + A[vi + 2]) / 3.0
    for i in T.parallel(2, n):
        with T.block("copy"):
            vi = T.axis.spatial(n, i)
            T.where(i < n - 1)
            T.reads(B[vi])
            T.writes(B[vi])
            B[vi] = B[vi] * 0.5
