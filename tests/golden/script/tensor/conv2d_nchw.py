from pyir.script import tensor as T


@T.prim_func
def conv2d(X: T.Buffer((1, 3, 10, 10), "float32"),
           W: T.Buffer((8, 3, 3, 3), "float32"),
           Y: T.Buffer((1, 8, 8, 8), "float32")):
    for n, f, y, x, c, ky, kx in T.grid(1, 8, 8, 8, 3, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vky, vkx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ky, kx])
            T.reads(Y[vn, vf, vy, vx], X[vn, vc, vy + vky, vx + vkx], W[vf, vc, vky, vkx])
            T.writes(Y[vn, vf, vy, vx])
            with T.init():
                Y[vn, vf, vy, vx] = T.float32(0.0)
            Y[vn, vf, vy, vx] = Y[vn, vf, vy, vx] + X[vn, vc, vy + vky, vx + vkx] * W[vf, vc, vky, vkx]
