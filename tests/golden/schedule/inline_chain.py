from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def chain(A: T.Buffer(("n", "m"), "float32"), C: T.Buffer(("n", "m"), "float32")):
        T.func_attr({"scheduled": True})
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * 2.0 + 1.0
