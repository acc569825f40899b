from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def rowsum(A: T.Buffer(("n", 128), "float32"), S: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        for i, k_0, k_1 in T.grid(n, 16, 8):
            with T.block("S"):
                vi = T.axis.spatial(n, i)
                vk = T.axis.reduce(128, k_0 * 8 + k_1)
                T.reads(S[vi], A[vi, vk])
                T.writes(S[vi])
                with T.init():
                    S[vi] = T.float32(0.0)
                S[vi] = S[vi] + A[vi, vk]
