from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        B_global = T.alloc_buffer(((m + 15) // 16, k, 16), "float32")
        for ax0, ax1 in T.grid(k, m):
            with T.block("B_global"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v0, v1])
                T.writes(B_global[v1 // 16, v0, v1 % 16])
                B_global[v1 // 16, v0, v1 % 16] = B[v0, v1]
        for i, j, r in T.grid(n, m, k):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                T.reads(C[vi, vj], A[vi, vr], B_global[vj // 16, vr, vj % 16])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B_global[vj // 16, vr, vj % 16]
