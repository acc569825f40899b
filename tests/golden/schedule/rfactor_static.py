from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def static_mm(A: T.Buffer((64, 48), "float32"),
                  B: T.Buffer((48, 96), "float32"),
                  C: T.Buffer((64, 96), "float32")):
        T.func_attr({"scheduled": True})
        C_rf = T.alloc_buffer((64, 96, 8), "float32")
        for i, j, r_0, r_1 in T.grid(64, 96, 6, 8):
            with T.block("C_rf"):
                vi, vj, vr_1, vr_0 = T.axis.remap("SSSR", [i, j, r_1, r_0])
                T.reads(C_rf[vi, vj, vr_1], A[vi, vr_0 * 8 + vr_1], B[vr_0 * 8 + vr_1, vj])
                T.writes(C_rf[vi, vj, vr_1])
                with T.init():
                    C_rf[vi, vj, vr_1] = T.float32(0.0)
                C_rf[vi, vj, vr_1] = C_rf[vi, vj, vr_1] + A[vi, vr_0 * 8 + vr_1] * B[vr_0 * 8 + vr_1, vj]
        for ax0, ax1, r_1 in T.grid(64, 96, 8):
            with T.block("C"):
                vi, vj, vr_1 = T.axis.remap("SSR", [ax0, ax1, r_1])
                T.reads(C[vi, vj], C_rf[vi, vj, vr_1])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + C_rf[vi, vj, vr_1]
