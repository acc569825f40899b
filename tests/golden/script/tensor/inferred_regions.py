from pyir.script import tensor as T


@T.prim_func
def row_copy(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for io in range(4):
        with T.block("copy"):
            vio = T.axis.remap("S", [io])
            T.reads(A[vio * 16:vio * 16 + 16, 0:64])
            T.writes(B[vio * 16:vio * 16 + 16, 0:64])
            for ii, j in T.grid(16, 64):
                shift = vio * 16 + ii
                B[shift, j] = A[shift, j] + A[shift, 63 - j]
