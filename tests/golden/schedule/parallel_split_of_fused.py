from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def chain(A: T.Buffer(("n", "m"), "float32"), C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        B = T.alloc_buffer((n, m), "float32")
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * 2.0
        for i_j_fused_0 in T.parallel((m * n + 4) // 5, annotations={"pyir.split_tail": 5}):
            for i_j_fused_1 in range(5):
                with T.block("C"):
                    vi = T.axis.spatial(n, (i_j_fused_0 * 5 + i_j_fused_1) // m)
                    vj = T.axis.spatial(m, (i_j_fused_0 * 5 + i_j_fused_1) % m)
                    T.where(i_j_fused_0 * 5 + i_j_fused_1 < m * n)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + 1.0
