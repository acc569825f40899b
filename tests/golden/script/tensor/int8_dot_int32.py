from pyir.script import tensor as T


@T.prim_func
def dot(A: T.Buffer(("n", 64), "int8"), B: T.Buffer((64,), "int8"), C: T.Buffer(("n",), "int32")):
    for i, k in T.grid(n, 64):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(C[vi], A[vi, vk], B[vk])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.int32(0)
            C[vi] = C[vi] + T.cast(A[vi, vk], "int32") * T.cast(B[vk], "int32")
