from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def chain(A: T.Buffer(("n", "m"), "float32"), C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        B_global = T.alloc_buffer((n, m), "float32")
        B = T.alloc_buffer((n, m), "float32")
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * 2.0
        for ax0, ax1 in T.grid(n, m):
            with T.block("B_global"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v0, v1])
                T.writes(B_global[v0, v1])
                B_global[v0, v1] = B[v0, v1]
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B_global[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B_global[vi, vj] + 1.0
