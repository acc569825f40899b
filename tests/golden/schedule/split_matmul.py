from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        for i_0 in T.serial((n + 31) // 32, annotations={"pyir.split_tail": 32}):
            for i_1, j, r in T.grid(32, m, k):
                with T.block("C"):
                    vi = T.axis.spatial(n, i_0 * 32 + i_1)
                    vj = T.axis.spatial(m, j)
                    vr = T.axis.reduce(k, r)
                    T.where(i_0 * 32 + i_1 < n)
                    T.reads(C[vi, vj], A[vi, vr], B[vr, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
