from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def rowsum(A: T.Buffer(("n", 128), "float32"), S: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        for i, k_0 in T.grid(n, 8):
            with T.block("S_o"):
                vi_o, vk_o = T.axis.remap("SR", [i, k_0])
                T.reads(S[vi_o], A[vi_o, vk_o * 16:vk_o * 16 + 16])
                T.writes(S[vi_o])
                for k_1 in range(16):
                    with T.block("S"):
                        vi = T.axis.spatial(n, vi_o)
                        vk = T.axis.reduce(128, vk_o * 16 + k_1)
                        T.reads(S[vi], A[vi, vk])
                        T.writes(S[vi])
                        with T.init():
                            S[vi] = T.float32(0.0)
                        S[vi] = S[vi] + A[vi, vk]
