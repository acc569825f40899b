from pyir.script import tensor as T


@T.prim_func
def scale(A: T.Buffer(("n", 4), "float32"), B: T.Buffer(("n", 4), "float32")):
    for i, j in T.grid(n, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * 2.0
