from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def rowsum(A: T.Buffer(("n", 128), "float32"), S: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        S_local = T.alloc_buffer((n,), "float32", scope="local")
        for i, k in T.grid(n, 128):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(S_local[vi], A[vi, vk])
                T.writes(S_local[vi])
                with T.init():
                    S_local[vi] = T.float32(0.0)
                S_local[vi] = S_local[vi] + A[vi, vk]
        for ax0 in range(n):
            with T.block("S_local"):
                v0 = T.axis.remap("S", [ax0])
                T.reads(S_local[v0])
                T.writes(S[v0])
                S[v0] = S_local[v0]
