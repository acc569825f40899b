from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        A_global = T.alloc_buffer(((k + 3) // 4, n, 4), "float32")
        for i in range(n):
            for ax0, ax1 in T.grid(1, (k + 3) // 4 * 4):
                with T.block("A_global"):
                    v0 = T.axis.spatial(n, i + ax0)
                    v1 = T.axis.spatial(k, ax1)
                    T.where(ax1 < k)
                    T.reads(A[v0, v1])
                    T.writes(A_global[v1 // 4, v0, v1 % 4])
                    A_global[v1 // 4, v0, v1 % 4] = A[v0, v1]
            for j, r in T.grid(m, k):
                with T.block("C"):
                    vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                    T.reads(C[vi, vj], A_global[vr // 4, vi, vr % 4], B[vr, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A_global[vr // 4, vi, vr % 4] * B[vr, vj]
