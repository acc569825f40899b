from pyir.script import tensor as T


@T.prim_func
def kinds(A: T.Buffer((4, 8, 16, 4), "float32"), B: T.Buffer((4, 8, 16, 4), "float32")):
    for i in T.parallel(4):
        for j in T.serial(8, annotations={"pragma_auto_unroll_max_step": 16}):
            for k in T.vectorized(16):
                for u in T.unroll(4, annotations={"hint": "full", "tile": (2, 2)}):
                    with T.block("B"):
                        vi, vj, vk, vu = T.axis.remap("SSSS", [i, j, k, u])
                        T.reads(A[vi, vj, vk, vu])
                        T.writes(B[vi, vj, vk, vu])
                        B[vi, vj, vk, vu] = A[vi, vj, vk, vu] + 1.0
