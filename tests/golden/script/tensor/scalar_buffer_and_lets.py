from pyir.script import tensor as T


@T.prim_func
def scalar(A: T.Buffer((), "float32"), B: T.Buffer((4,), "float32")):
    a = A[()]
    b = a * a
    for i in range(4):
        c = b + T.cast(i, "float32")
        B[i] = c
        c_1 = c * 2.0
        B[i] = B[i] + c_1
