from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def static_mm(A: T.Buffer((64, 48), "float32"),
                  B: T.Buffer((48, 96), "float32"),
                  C: T.Buffer((64, 96), "float32")):
        T.func_attr({"scheduled": True})
        for i_j_r_fused in range(294912):
            with T.block("C"):
                vi = T.axis.spatial(64, i_j_r_fused // 4608)
                vj = T.axis.spatial(96, i_j_r_fused // 48 % 96)
                vr = T.axis.reduce(48, i_j_r_fused % 48)
                T.reads(C[vi, vj], A[vi, vr], B[vr, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
