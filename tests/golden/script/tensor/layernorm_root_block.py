from pyir.script import tensor as T


@T.prim_func
def layernorm(X: T.Buffer(("n", 32), "float32"),
              gamma: T.Buffer((32,), "float32"),
              Y: T.Buffer(("n", 32), "float32")):
    with T.block("root"):
        T.reads(X[0:n, 0:32], gamma[0:32])
        T.writes(Y[0:n, 0:32])
        mean = T.alloc_buffer((n,), "float32")
        sq = T.alloc_buffer((n,), "float32", scope="local")
        for i, k in T.grid(n, 32):
            with T.block("stats"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(mean[vi], X[vi, vk], sq[vi])
                T.writes(mean[vi], sq[vi])
                with T.init():
                    mean[vi] = T.float32(0.0)
                    sq[vi] = T.float32(0.0)
                mean[vi] = mean[vi] + X[vi, vk] * 0.03125
                sq[vi] = sq[vi] + X[vi, vk] * X[vi, vk] * 0.03125
        for i, j in T.grid(n, 32):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(sq[vi], mean[vi], X[vi, vj], gamma[vj])
                T.writes(Y[vi, vj])
                var = sq[vi] - mean[vi] * mean[vi]
                Y[vi, vj] = (X[vi, vj] - mean[vi]) / T.sqrt(var + 1e-05) * gamma[vj]
