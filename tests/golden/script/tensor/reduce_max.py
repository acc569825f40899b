from pyir.script import tensor as T


@T.prim_func
def row_max(A: T.Buffer((8, 128), "float32"), M: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 128):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(M[vi], A[vi, vk])
            T.writes(M[vi])
            with T.init():
                M[vi] = T.float32("-inf")
            M[vi] = T.max(M[vi], A[vi, vk])
