from pyir.script import tensor as T


@T.prim_func
def tiled(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for io, jo in T.grid(4, 4):
        with T.block("outer"):
            vio, vjo = T.axis.remap("SS", [io, jo])
            T.reads(A[vjo * 16:vjo * 16 + 16, vio * 16:vio * 16 + 16])
            T.writes(B[vio * 16:vio * 16 + 16, vjo * 16:vjo * 16 + 16])
            for ii, ji in T.grid(16, 16):
                with T.block("inner"):
                    vi = T.axis.spatial(64, vio * 16 + ii)
                    vj = T.axis.spatial(64, vjo * 16 + ji)
                    T.reads(A[vj, vi])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vj, vi] * 2.0
