from pyir.script import tensor as T


@T.prim_func
def argmax(A: T.Buffer(("n", "m"), "float32"),
           idx: T.Buffer(("n",), "int64"),
           best: T.Buffer(("n",), "float32")):
    for i, k in T.grid(n, m):
        with T.block("argmax"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk], best[vi], idx[vi])
            T.writes(idx[vi], best[vi])
            with T.init():
                idx[vi] = -1
                best[vi] = T.float32("-inf")
            value = A[vi, vk]
            better = value > best[vi]
            idx[vi] = T.if_then_else(better, vk, idx[vi])
            best[vi] = T.if_then_else(better, value, best[vi])
