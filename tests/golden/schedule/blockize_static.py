from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def static_mm(A: T.Buffer((64, 48), "float32"),
                  B: T.Buffer((48, 96), "float32"),
                  C: T.Buffer((64, 96), "float32")):
        T.func_attr({"scheduled": True})
        for i_0 in range(8):
            with T.block("C_o"):
                vi_o = T.axis.remap("S", [i_0])
                T.reads(C[vi_o * 8:vi_o * 8 + 8, 0:96], A[vi_o * 8:vi_o * 8 + 8, 0:48], B[0:48, 0:96])
                T.writes(C[vi_o * 8:vi_o * 8 + 8, 0:96])
                for i_1, j, r in T.grid(8, 96, 48):
                    with T.block("C"):
                        vi = T.axis.spatial(64, vi_o * 8 + i_1)
                        vj = T.axis.spatial(96, j)
                        vr = T.axis.reduce(48, r)
                        T.reads(C[vi, vj], A[vi, vr], B[vr, vj])
                        T.writes(C[vi, vj])
                        with T.init():
                            C[vi, vj] = T.float32(0.0)
                        C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
