from pyir.script import tensor as T


@T.prim_func
def elementwise(a32: T.Buffer(("n",), "float32"),
                b32: T.Buffer(("n",), "float32"),
                a64: T.Buffer(("n",), "float64"),
                b64: T.Buffer(("n",), "float64"),
                a16: T.Buffer(("n",), "float16"),
                b16: T.Buffer(("n",), "float16"),
                i8: T.Buffer(("n",), "int8"),
                o8: T.Buffer(("n",), "int8"),
                i32: T.Buffer(("n",), "int32"),
                o32: T.Buffer(("n",), "int32"),
                i64: T.Buffer(("n",), "int64"),
                o64: T.Buffer(("n",), "int64"),
                u8: T.Buffer(("n",), "uint8"),
                ou8: T.Buffer(("n",), "uint8"),
                m: T.Buffer(("n",), "bool"),
                om: T.Buffer(("n",), "bool")):
    for i in range(n):
        with T.block("ew"):
            vi = T.axis.remap("S", [i])
            T.reads(a32[vi], a64[vi], a16[vi], i8[vi], i32[vi], i64[vi], u8[vi], m[vi])
            T.writes(b32[vi], b64[vi], b16[vi], o8[vi], o32[vi], o64[vi], ou8[vi], om[vi])
            b32[vi] = a32[vi] * 2.0 + 1.0
            b64[vi] = a64[vi] / 3.0 - 0.25
            b16[vi] = a16[vi] * a16[vi]
            o8[vi] = i8[vi] // 2 - 1
            o32[vi] = i32[vi] % 7 + i32[vi] * 3
            o64[vi] = i64[vi] * vi - 5
            ou8[vi] = u8[vi] + 200
            om[vi] = not m[vi] or a32[vi] > 0.5
