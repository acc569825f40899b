from pyir.script import tensor as T


@T.prim_func
def attrs(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "attrs", "tir.noalias": True})
    for i in range(4):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi])
            T.writes(A[vi])
            T.block_attr({"meta_schedule.tiling": "SSR", "level": 2})
            A[vi] = A[vi] + 1.0
