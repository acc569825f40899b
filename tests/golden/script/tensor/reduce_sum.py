from pyir.script import tensor as T


@T.prim_func
def row_sum(A: T.Buffer(("n", "m"), "float64"), S: T.Buffer(("n",), "float64")):
    for i, k in T.grid(n, m):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(S[vi], A[vi, vk])
            T.writes(S[vi])
            with T.init():
                S[vi] = T.float64(0.0)
            S[vi] = S[vi] + A[vi, vk]
