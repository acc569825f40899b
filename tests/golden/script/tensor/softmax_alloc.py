from pyir.script import tensor as T


@T.prim_func
def softmax(A: T.Buffer(("n", 64), "float32"), B: T.Buffer(("n", 64), "float32")):
    row_max = T.alloc_buffer((n,), "float32")
    row_sum = T.alloc_buffer((n,), "float32")
    for i, k in T.grid(n, 64):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(row_max[vi], A[vi, vk])
            T.writes(row_max[vi])
            with T.init():
                row_max[vi] = T.float32("-inf")
            row_max[vi] = T.max(row_max[vi], A[vi, vk])
    for i, k in T.grid(n, 64):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(row_sum[vi], A[vi, vk], row_max[vi])
            T.writes(row_sum[vi])
            with T.init():
                row_sum[vi] = T.float32(0.0)
            row_sum[vi] = row_sum[vi] + T.exp(A[vi, vk] - row_max[vi])
    for i, j in T.grid(n, 64):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], row_max[vi], row_sum[vi])
            T.writes(B[vi, vj])
            B[vi, vj] = T.exp(A[vi, vj] - row_max[vi]) / row_sum[vi]
