from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def rowsum(A: T.Buffer(("n", 128), "float32"), S: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        S_rf = T.alloc_buffer((n, 4), "float32")
        for i, k_0, k_1 in T.grid(n, 4, 32):
            with T.block("S_rf"):
                vi, vk_0, vk_1 = T.axis.remap("SSR", [i, k_0, k_1])
                T.reads(S_rf[vi, vk_0], A[vi, vk_0 * 32 + vk_1])
                T.writes(S_rf[vi, vk_0])
                with T.init():
                    S_rf[vi, vk_0] = T.float32(0.0)
                S_rf[vi, vk_0] = S_rf[vi, vk_0] + A[vi, vk_0 * 32 + vk_1]
        for ax0, k_0 in T.grid(n, 4):
            with T.block("S"):
                vi, vk_0 = T.axis.remap("SR", [ax0, k_0])
                T.reads(S[vi], S_rf[vi, vk_0])
                T.writes(S[vi])
                with T.init():
                    S[vi] = T.float32(0.0)
                S[vi] = S[vi] + S_rf[vi, vk_0]
