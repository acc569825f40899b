from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        B_local = T.alloc_buffer((k, m), "float32", scope="local")
        for i, j, r in T.grid(n, m, k):
            for ax0, ax1 in T.grid(1, 1):
                with T.block("B_local"):
                    v0 = T.axis.spatial(k, r + ax0)
                    v1 = T.axis.spatial(m, j + ax1)
                    T.reads(B[v0, v1])
                    T.writes(B_local[v0, v1])
                    B_local[v0, v1] = B[v0, v1]
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                T.reads(C[vi, vj], A[vi, vr], B_local[vr, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B_local[vr, vj]
