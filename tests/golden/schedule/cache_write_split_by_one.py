from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        C_local = T.alloc_buffer((n, m), "float32", scope="local")
        for i_0, j in T.grid(n, m):
            for r, i_1 in T.grid(k, 1):
                with T.block("C"):
                    vi = T.axis.spatial(n, i_0 * 1 + i_1)
                    vj = T.axis.spatial(m, j)
                    vr = T.axis.reduce(k, r)
                    T.reads(C_local[vi, vj], A[vi, vr], B[vr, vj])
                    T.writes(C_local[vi, vj])
                    with T.init():
                        C_local[vi, vj] = T.float32(0.0)
                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vr] * B[vr, vj]
            for ax0, ax1 in T.grid(1, 1):
                with T.block("C_local"):
                    v0 = T.axis.spatial(n, i_0 + ax0)
                    v1 = T.axis.spatial(m, j + ax1)
                    T.reads(C_local[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
