from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def bias_relu(A: T.Buffer(("n", 64), "float32"),
                  bias: T.Buffer((64,), "float32"),
                  D: T.Buffer(("n", 64), "float32")):
        T.func_attr({"scheduled": True})
        B = T.alloc_buffer((4, n, 16), "float32")
        C = T.alloc_buffer((n, 64), "float32")
        for i, j in T.grid(n, 64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], bias[vj])
                T.writes(B[vj // 16, vi, vj % 16])
                B[vj // 16, vi, vj % 16] = A[vi, vj] + bias[vj]
        for i, j in T.grid(n, 64):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vj // 16, vi, vj % 16])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(B[vj // 16, vi, vj % 16], T.float32(0.0))
        for i, j in T.grid(n, 64):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = C[vi, vj] * 3.0
