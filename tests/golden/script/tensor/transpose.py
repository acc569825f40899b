from pyir.script import tensor as T


@T.prim_func
def transpose(A: T.Buffer(("n", "m"), "int32"), B: T.Buffer(("m", "n"), "int32")):
    for i, j in T.grid(m, n):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vj, vi])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vj, vi]
