from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def fill(A: T.Buffer(("n",), "float32"), value: T.float32):
        for i in range(n):
            with T.block("fill"):
                vi = T.axis.remap("S", [i])
                T.reads()
                T.writes(A[vi])
                A[vi] = value

    @T.prim_func
    def double(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("double"):
                vi = T.axis.remap("S", [i])
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * 2.0
