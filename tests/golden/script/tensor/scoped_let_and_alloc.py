from pyir.script import tensor as T


@T.prim_func
def scoped(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    with T.block("root"):
        T.reads(A[0:8], B[0:8])
        T.writes(B[0:8])
        with T.alloc_buffer((8,), "float32", scope="local") as tmp:
            for i in range(8):
                tmp[i] = A[i]
            for i in range(8):
                B[i] = tmp[i]
        for i in range(8):
            with T.let(A[i] * 2.0) as x:
                B[i] = B[i] + x
            with T.alloc_buffer((1,), "float32") as acc:
                acc[0] = B[i]
                B[i] = acc[0] * acc[0]
            B[i] = B[i] - 1.0
