from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        for i_0_j_0_fused in T.parallel((m + 7) // 8 * ((n + 3) // 4), annotations={"pyir.fused_tails": 1}):
            for r, i_1, j_1 in T.grid(k, 4, 8):
                with T.block("C"):
                    vi = T.axis.spatial(n, i_0_j_0_fused // ((m + 7) // 8) * 4 + i_1)
                    vj = T.axis.spatial(m, i_0_j_0_fused % ((m + 7) // 8) * 8 + j_1)
                    vr = T.axis.reduce(k, r)
                    T.where(i_0_j_0_fused // ((m + 7) // 8) * 4 + i_1 < n and i_0_j_0_fused % ((m + 7) // 8) * 8 + j_1 < m)
                    T.reads(C[vi, vj], A[vi, vr], B[vr, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
