from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def bias_relu(A: T.Buffer(("n", 64), "float32"),
                  bias: T.Buffer((64,), "float32"),
                  D: T.Buffer(("n", 64), "float32")):
        T.func_attr({"scheduled": True})
        B = T.alloc_buffer((n, 64), "float32")
        C = T.alloc_buffer((n, 64), "float32")
        for i in range(n):
            for j in range(64):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj], bias[vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] + bias[vj]
            for ax0, ax1 in T.grid(1, 64):
                with T.block("C"):
                    vi = T.axis.spatial(n, i + ax0)
                    vj = T.axis.spatial(64, ax1)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(B[vi, vj], T.float32(0.0))
            for ax0, ax1 in T.grid(1, 64):
                with T.block("D"):
                    vi = T.axis.spatial(n, i + ax0)
                    vj = T.axis.spatial(64, ax1)
                    T.reads(C[vi, vj])
                    T.writes(D[vi, vj])
                    D[vi, vj] = C[vi, vj] * 3.0
