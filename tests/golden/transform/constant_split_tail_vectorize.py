from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def _add_one_and_guards(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
        T.func_attr({"entry_conditions": (), "lowered": True, "param_shapes": ((T.int64(100),), (T.int64(100),)), "scheduled": True})
        for i_0 in T.serial(7, annotations={"pyir.split_tail": 16}):
            if i_0 < 6:
                for i_1 in T.vectorized(16):
                    B[i_0 * 16 + i_1] = A[i_0 * 16 + i_1] + 1.0
            else:
                for i_1 in T.vectorized(4):
                    B[i_1 + 96] = A[i_1 + 96] + 1.0
        for j in T.vectorized(5):
            B[j] = T.float32(7.0)
