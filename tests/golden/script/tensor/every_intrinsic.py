from pyir.script import tensor as T


@T.prim_func
def math(A: T.Buffer((8,), "float32"), B: T.Buffer((8, 13), "float32"), C: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("math"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi])
            T.writes(B[vi, 0:13], C[vi])
            x = A[vi]
            B[vi, 0] = T.exp(x)
            B[vi, 1] = T.log(x)
            B[vi, 2] = T.sqrt(x)
            B[vi, 3] = T.tanh(x)
            B[vi, 4] = T.abs(x)
            B[vi, 5] = T.floor(x)
            B[vi, 6] = T.ceil(x)
            B[vi, 7] = T.sigmoid(x)
            B[vi, 8] = T.sin(x)
            B[vi, 9] = T.cos(x)
            B[vi, 10] = T.pow(x, T.float32(2.0))
            B[vi, 11] = T.erf(x)
            B[vi, 12] = T.rsqrt(T.min(x, T.float32(1.0)))
            C[vi] = T.abs(T.cast(x, "int32")) - T.max(T.int32(3), T.int32(4))
