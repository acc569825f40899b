from pyir.script import tensor as T


@T.prim_func
def clip(A: T.Buffer(("n",), "int32"), B: T.Buffer(("n",), "int32")):
    for i in range(n):
        with T.block("clip"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi], B[vi])
            T.writes(B[vi])
            if A[vi] < 0:
                B[vi] = T.int32(0)
            elif A[vi] > 255:
                B[vi] = T.int32(255)
            else:
                B[vi] = A[vi]
            if vi == 0:
                B[vi] = B[vi] + 1
