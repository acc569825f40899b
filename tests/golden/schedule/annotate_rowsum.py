from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def rowsum(A: T.Buffer(("n", 128), "float32"), S: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        for i in T.serial(n, annotations={"hint": True}):
            for k in range(128):
                with T.block("S"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(S[vi], A[vi, vk])
                    T.writes(S[vi])
                    with T.init():
                        S[vi] = T.float32(0.0)
                    S[vi] = S[vi] + A[vi, vk]
