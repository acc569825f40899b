from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        for i in T.parallel(n):
            for j, r in T.grid(m, k):
                with T.block("C"):
                    vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                    T.reads(C[vi, vj], A[vi, vr], B[vr, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
