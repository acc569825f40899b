from pyir.script import tensor as T


@T.prim_func
def lowered(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for io in T.parallel((n + 7) // 8):
        tmp = T.alloc_buffer((8,), "float32", scope="local")
        for ii in range(8):
            base = io * 8
            if base + ii < n and not (ii == 3 or ii % 5 == 4):
                tmp[ii] = A[base + ii]
                B[base + ii] = tmp[ii] * -1.0
        if 0 <= io * 8 and io * 8 < n - 8:
            T.evaluate(io)
