from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        A_local = T.alloc_buffer((n, k), "float32", scope="local")
        for i_j_fused in range(m * n):
            for ax0, ax1 in T.grid(1, k):
                with T.block("A_local"):
                    v0 = T.axis.spatial(n, i_j_fused // m + ax0)
                    v1 = T.axis.spatial(k, ax1)
                    T.reads(A[v0, v1])
                    T.writes(A_local[v0, v1])
                    A_local[v0, v1] = A[v0, v1]
            for r in range(k):
                with T.block("C"):
                    vi = T.axis.spatial(n, i_j_fused // m)
                    vj = T.axis.spatial(m, i_j_fused % m)
                    vr = T.axis.reduce(k, r)
                    T.reads(C[vi, vj], A_local[vi, vr], B[vr, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A_local[vi, vr] * B[vr, vj]
