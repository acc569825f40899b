from pyir.script import tensor as T


@T.prim_func
def add(A: T.Buffer((16, 16), "float16"),
        B: T.Buffer((16, 16), "float16"),
        C: T.Buffer((16, 16), "float16")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
