from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def sum2(A: T.Buffer(("n", "k", 3), "float32"), S: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        S_rf = T.alloc_buffer((k * 3, n), "float32")
        for i, k_l_fused in T.grid(n, k * 3):
            with T.block("S_rf"):
                vi, vk_l_fused = T.axis.remap("SS", [i, k_l_fused])
                T.reads(S_rf[vk_l_fused, vi], A[vi, vk_l_fused // 3, vk_l_fused % 3])
                T.writes(S_rf[vk_l_fused, vi])
                with T.init():
                    S_rf[vk_l_fused, vi] = T.float32(0.0)
                S_rf[vk_l_fused, vi] = S_rf[vk_l_fused, vi] + A[vi, vk_l_fused // 3, vk_l_fused % 3]
        for ax0, k_l_fused in T.grid(n, k * 3):
            with T.block("S"):
                vi, vk_l_fused = T.axis.remap("SR", [ax0, k_l_fused])
                T.reads(S[vi], S_rf[vk_l_fused, vi])
                T.writes(S[vi])
                with T.init():
                    S[vi] = T.float32(0.0)
                S[vi] = S[vi] + S_rf[vk_l_fused, vi]
