from pyir.script import tensor as T


@T.prim_func
def split(A: T.Buffer((128,), "float32"), S: T.Buffer((1,), "float32")):
    for ko, ki in T.grid(8, 16):
        with T.block("S"):
            vk = T.axis.reduce(128, ko * 16 + ki)
            v0 = T.axis.spatial(1, 0)
            T.reads(S[v0], A[vk])
            T.writes(S[v0])
            with T.init():
                S[v0] = T.float32(0.0)
            S[v0] = S[v0] + A[vk]
