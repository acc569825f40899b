"""A corpus of ``@T.prim_func`` definitions covering the tensor-level script language.

Each case is a function that defines one prim function (indented, as users write them in
notebooks and tests) and returns it, so that one broken case fails alone. ``CASES`` maps
the case name to its builder.
"""

from pyir.script import ir as I
from pyir.script import tensor as T

CASES = {}


def case(builder):
    CASES[builder.__name__] = builder
    return builder


@case
def matmul():
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"), B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        for i, j, r in T.grid(n, m, k):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
    return matmul


@case
def elementwise_all_dtypes():
    @T.prim_func
    def elementwise(a32: T.Buffer(("n",), "float32"), b32: T.Buffer(("n",), "float32"),
                    a64: T.Buffer(("n",), "float64"), b64: T.Buffer(("n",), "float64"),
                    a16: T.Buffer(("n",), "float16"), b16: T.Buffer(("n",), "float16"),
                    i8: T.Buffer(("n",), "int8"), o8: T.Buffer(("n",), "int8"),
                    i32: T.Buffer(("n",), "int32"), o32: T.Buffer(("n",), "int32"),
                    i64: T.Buffer(("n",), "int64"), o64: T.Buffer(("n",), "int64"),
                    u8: T.Buffer(("n",), "uint8"), ou8: T.Buffer(("n",), "uint8"),
                    m: T.Buffer(("n",), "bool"), om: T.Buffer(("n",), "bool")):
        for i in range(n):
            with T.block("ew"):
                vi = T.axis.spatial(n, i)
                b32[vi] = a32[vi] * 2.0 + 1.0
                b64[vi] = a64[vi] / T.float64(3) - 0.25
                b16[vi] = a16[vi] * a16[vi]
                o8[vi] = i8[vi] // 2 - T.int8(1)
                o32[vi] = i32[vi] % 7 + i32[vi] * 3
                o64[vi] = i64[vi] * vi - 5
                ou8[vi] = u8[vi] + T.uint8(200)
                om[vi] = not m[vi] or a32[vi] > 0.5
    return elementwise


@case
def add_float16():
    @T.prim_func
    def add(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"),
            C: T.Buffer((16, 16), "float16")):
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]
    return add


@case
def broadcast_bias():
    @T.prim_func
    def bias_add(X: T.Buffer(("n", "c"), "float32"), bias: T.Buffer(("c",), "float32"),
                 Y: T.Buffer(("n", "c"), "float32")):
        for i, j in T.grid(n, c):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = X[vi, vj] + bias[vj]
    return bias_add


@case
def reduce_sum():
    @T.prim_func
    def row_sum(A: T.Buffer(("n", "m"), "float64"), S: T.Buffer(("n",), "float64")):
        for i, k in T.grid(n, m):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float64(0)
                S[vi] += A[vi, vk]
    return row_sum


@case
def reduce_max():
    @T.prim_func
    def row_max(A: T.Buffer((8, 128), "float32"), M: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 128):
            with T.block("M"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    M[vi] = T.float32("-inf")
                M[vi] = T.max(M[vi], A[vi, vk])
    return row_max


@case
def argmax_with_let():
    @T.prim_func
    def argmax(A: T.Buffer(("n", "m"), "float32"), idx: T.Buffer(("n",), "int64"),
               best: T.Buffer(("n",), "float32")):
        for i, k in T.grid(n, m):
            with T.block("argmax"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    idx[vi] = -1
                    best[vi] = T.float32("-inf")
                value = A[vi, vk]
                better = value > best[vi]
                idx[vi] = T.if_then_else(better, vk, idx[vi])
                best[vi] = T.if_then_else(better, value, best[vi])
    return argmax


@case
def transpose():
    @T.prim_func
    def transpose(A: T.Buffer(("n", "m"), "int32"), B: T.Buffer(("m", "n"), "int32")):
        for i, j in T.grid(m, n):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi]
    return transpose


@case
def conv2d_nchw():
    @T.prim_func
    def conv2d(X: T.Buffer((1, 3, 10, 10), "float32"), W: T.Buffer((8, 3, 3, 3), "float32"),
               Y: T.Buffer((1, 8, 8, 8), "float32")):
        for n, f, y, x, c, ky, kx in T.grid(1, 8, 8, 8, 3, 3, 3):
            with T.block("conv"):
                vn, vf, vy, vx, vc, vky, vkx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ky, kx])
                with T.init():
                    Y[vn, vf, vy, vx] = T.float32(0)
                Y[vn, vf, vy, vx] += X[vn, vc, vy + vky, vx + vkx] * W[vf, vc, vky, vkx]
    return conv2d


@case
def max_pool():
    @T.prim_func
    def pool(X: T.Buffer(("c", "h * 2", "w * 2"), "float32"),
             Y: T.Buffer(("c", "h", "w"), "float32")):
        for ci, yi, xi, ry, rx in T.grid(c, h, w, 2, 2):
            with T.block("pool"):
                vc, vy, vx, vry, vrx = T.axis.remap("SSSRR", [ci, yi, xi, ry, rx])
                with T.init():
                    Y[vc, vy, vx] = T.float32("-inf")
                Y[vc, vy, vx] = T.max(Y[vc, vy, vx], X[vc, vy * 2 + vry, vx * 2 + vrx])
    return pool


@case
def softmax_alloc():
    @T.prim_func
    def softmax(A: T.Buffer(("n", 64), "float32"), B: T.Buffer(("n", 64), "float32")):
        row_max = T.alloc_buffer(("n",), "float32")
        row_sum = T.alloc_buffer(("n",), "float32")
        for i, k in T.grid(n, 64):
            with T.block("max"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    row_max[vi] = T.float32("-inf")
                row_max[vi] = T.max(row_max[vi], A[vi, vk])
        for i, k in T.grid(n, 64):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    row_sum[vi] = T.float32(0)
                row_sum[vi] += T.exp(A[vi, vk] - row_max[vi])
        for i, j in T.grid(n, 64):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj] - row_max[vi]) / row_sum[vi]
    return softmax


@case
def layernorm_root_block():
    @T.prim_func
    def layernorm(X: T.Buffer(("n", 32), "float32"), gamma: T.Buffer((32,), "float32"),
                  Y: T.Buffer(("n", 32), "float32")):
        with T.block("root"):
            mean = T.alloc_buffer(("n",), "float32")
            sq = T.alloc_buffer(("n",), "float32", scope="local")
            for i, k in T.grid(n, 32):
                with T.block("stats"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        mean[vi] = T.float32(0)
                        sq[vi] = T.float32(0)
                    mean[vi] += X[vi, vk] * 0.03125
                    sq[vi] += X[vi, vk] * X[vi, vk] * 0.03125
            for i, j in T.grid(n, 32):
                with T.block("norm"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    var = sq[vi] - mean[vi] * mean[vi]
                    Y[vi, vj] = (X[vi, vj] - mean[vi]) / T.sqrt(var + 1e-05) * gamma[vj]
    return layernorm


@case
def int8_dot_int32():
    @T.prim_func
    def dot(A: T.Buffer(("n", 64), "int8"), B: T.Buffer((64,), "int8"),
            C: T.Buffer(("n",), "int32")):
        for i, k in T.grid(n, 64):
            with T.block("dot"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = 0
                C[vi] = C[vi] + T.cast(A[vi, vk], "int32") * T.int32(B[vk])
    return dot


@case
def bool_mask():
    @T.prim_func
    def masked(X: T.Buffer(("n",), "float32"), mask: T.Buffer(("n",), "bool"),
               Y: T.Buffer(("n",), "float32"), keep: T.Buffer(("n",), "bool")):
        for i in range(n):
            with T.block("mask"):
                vi = T.axis.spatial(n, i)
                keep[vi] = mask[vi] and X[vi] >= 0.0
                Y[vi] = T.if_then_else(keep[vi], X[vi], T.float32(0))
    return masked


@case
def where_predicate():
    @T.prim_func
    def tail(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
        for io, ii in T.grid((n + 7) // 8, 8):
            with T.block("B"):
                vi = T.axis.spatial(n, io * 8 + ii)
                T.where(io * 8 + ii < n)
                B[vi] = A[vi] + 1.0
    return tail


@case
def nested_blocks():
    @T.prim_func
    def tiled(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        for io, jo in T.grid(4, 4):
            with T.block("outer"):
                vio, vjo = T.axis.remap("SS", [io, jo])
                for ii, ji in T.grid(16, 16):
                    with T.block("inner"):
                        vi = T.axis.spatial(64, vio * 16 + ii)
                        vj = T.axis.spatial(64, vjo * 16 + ji)
                        B[vi, vj] = A[vj, vi] * 2.0
    return tiled


@case
def loop_kinds():
    @T.prim_func
    def kinds(A: T.Buffer((4, 8, 16, 4), "float32"), B: T.Buffer((4, 8, 16, 4), "float32")):
        for i in T.parallel(4):
            for j in T.serial(8, annotations={"pragma_auto_unroll_max_step": 16}):
                for k in T.vectorized(16):
                    for u in T.unroll(4, annotations={"hint": "full", "tile": (2, 2)}):
                        with T.block("B"):
                            vi, vj, vk, vu = T.axis.remap("SSSS", [i, j, k, u])
                            B[vi, vj, vk, vu] = A[vi, vj, vk, vu] + 1.0
    return kinds


@case
def ranges_with_start():
    @T.prim_func
    def shifted(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
        for i in range(1, n - 1):
            with T.block("stencil"):
                vi = T.axis.spatial(n - 2, i - 1)
                B[vi + 1] = (A[vi] + A[vi + 1] + A[vi + 2]) / 3.0
        for i in T.parallel(2, n):
            with T.block("copy"):
                vi = T.axis.spatial(n, i)
                T.where(i < n - 1)
                B[vi] = B[vi] * 0.5
    return shifted


@case
def if_elif_else():
    @T.prim_func
    def clip(A: T.Buffer(("n",), "int32"), B: T.Buffer(("n",), "int32")):
        for i in range(n):
            with T.block("clip"):
                vi = T.axis.spatial(n, i)
                if A[vi] < 0:
                    B[vi] = 0
                elif A[vi] > 255:
                    B[vi] = 255
                else:
                    B[vi] = A[vi]
                if vi == 0:
                    B[vi] = B[vi] + 1
    return clip


@case
def pad_if_then_else():
    @T.prim_func
    def pad(A: T.Buffer(("n",), "float32"), P: T.Buffer(("n + 2",), "float32")):
        for i in range(n + 2):
            with T.block("pad"):
                vi = T.axis.spatial(n + 2, i)
                P[vi] = T.if_then_else(1 <= vi and vi < n + 1, A[vi - 1], T.float32(0))
    return pad


@case
def match_buffer_handles():
    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2.0
    return scale


@case
def scalar_params():
    @T.prim_func
    def axpy(alpha: T.float32, X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32"),
             n: T.int64, offset: T.int64):
        for i in range(n - offset):
            with T.block("Y"):
                vi = T.axis.spatial(n - offset, i)
                Y[vi + offset] = alpha * X[vi + offset] + Y[vi + offset]
    return axpy


@case
def evaluate_and_extern():
    @T.prim_func
    def extern(x: T.Buffer((16,), "float32"), y: T.Buffer((16,), "float32"),
               out: T.Buffer((1,), "float32")):
        T.evaluate(0)
        T.call_extern("demo.dot16", x, y, out)
        with T.block("call"):
            T.call_extern("demo.scale", out, T.float32(2), 1, dtype="float32")
            T.evaluate(T.call_extern("demo.sync"))
    return extern


@case
def explicit_regions():
    @T.prim_func
    def tile_copy(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        for io in range(4):
            with T.block("copy"):
                vio = T.axis.spatial(4, io)
                T.reads(A[vio * 16:vio * 16 + 16, 0:64])
                T.writes([B[vio * 16:vio * 16 + 16, :]])
                for ii, j in T.grid(16, 64):
                    B[vio * 16 + ii, j] = A[vio * 16 + ii, j]
    return tile_copy


@case
def inferred_regions():
    @T.prim_func
    def row_copy(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        for io in range(4):
            with T.block("copy"):
                vio = T.axis.spatial(4, io)
                for ii, j in T.grid(16, 64):
                    shift = vio * 16 + ii
                    B[shift, j] = A[shift, j] + A[shift, 63 - j]
    return row_copy


@case
def python_constants():
    TS = 32
    SCALE = 0.5
    NAME = "tiles"
    SHAPE = (TS * 2, TS * 2)

    @T.prim_func
    def tiles(A: T.Buffer(SHAPE, "float32"), B: T.Buffer(SHAPE, "float32")):
        for i, j in T.grid(TS * 2, TS * 2):
            with T.block(NAME):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * SCALE + TS // 4
    return tiles


@case
def every_intrinsic():
    @T.prim_func
    def math(A: T.Buffer((8,), "float32"), B: T.Buffer((8, 13), "float32"),
             C: T.Buffer((8,), "int32")):
        for i in range(8):
            with T.block("math"):
                vi = T.axis.spatial(8, i)
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
                B[vi, 10] = T.pow(x, 2.0)
                B[vi, 11] = T.erf(x)
                B[vi, 12] = T.rsqrt(T.min(x, T.float32(1)))
                C[vi] = T.abs(T.cast(x, "int32")) - T.max(T.int32(3), 4)
    return math


@case
def lowered_no_blocks():
    @T.prim_func
    def lowered(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
        for io in T.parallel((n + 7) // 8):
            tmp = T.alloc_buffer((8,), "float32", scope="local")
            for ii in range(8):
                base = io * 8
                if base + ii < n and not (ii == 3 or ii % 5 == 4):
                    tmp[ii] = A[base + ii]
                    B[base + ii] = tmp[ii] * -1.0
            if 0 <= io * 8 < n - 8:
                T.evaluate(io)
    return lowered


@case
def axis_bindings():
    @T.prim_func
    def split(A: T.Buffer((128,), "float32"), S: T.Buffer((1,), "float32")):
        for ko, ki in T.grid(8, 16):
            with T.block("S"):
                vk = T.axis.reduce(128, ko * 16 + ki)
                v0 = T.axis.spatial(1, 0)
                with T.init():
                    S[v0] = T.float32(0)
                S[v0] = S[v0] + A[vk]
    return split


@case
def attributes():
    @T.prim_func
    def attrs(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "attrs", "tir.noalias": True})
        for i in range(4):
            with T.block("A"):
                vi = T.axis.spatial(4, i)
                T.block_attr({"meta_schedule.tiling": "SSR", "level": 2})
                A[vi] = A[vi] + T.float32(1)
    return attrs


@case
def scalar_buffer_and_lets():
    @T.prim_func
    def scalar(A: T.Buffer((), "float32"), B: T.Buffer((4,), "float32")):
        a = A[()]
        b: T.float32 = a * a
        for i in range(4):
            c = b + T.cast(i, "float32")
            B[i] = c
            c = c * 2.0
            B[i] = B[i] + c
    return scalar


@case
def module_of_prim_funcs():
    @I.ir_module
    class Module:
        @T.prim_func
        def fill(A: T.Buffer(("n",), "float32"), value: T.float32):
            for i in range(n):
                with T.block("fill"):
                    vi = T.axis.spatial(n, i)
                    A[vi] = value

        @T.prim_func
        def double(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
            for i in range(n):
                with T.block("double"):
                    vi = T.axis.spatial(n, i)
                    B[vi] = A[vi] * 2.0
    return Module


@case
def scoped_let_and_alloc():
    @T.prim_func
    def scoped(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        with T.block("root"):
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
    return scoped
