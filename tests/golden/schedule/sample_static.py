from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def static_mm(A: T.Buffer((64, 48), "float32"),
                  B: T.Buffer((48, 96), "float32"),
                  C: T.Buffer((64, 96), "float32")):
        T.func_attr({"scheduled": True})
        for i, j_0, j_1, j_2, r in T.grid(64, 1, 8, 12, 48):
            with T.block("C"):
                vi = T.axis.spatial(64, i)
                vj = T.axis.spatial(96, (j_0 * 8 + j_1) * 12 + j_2)
                vr = T.axis.reduce(48, r)
                T.reads(C[vi, vj], A[vi, vr], B[vr, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
