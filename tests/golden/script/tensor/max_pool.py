from pyir.script import tensor as T


@T.prim_func
def pool(X: T.Buffer(("c", "h * 2", "w * 2"), "float32"), Y: T.Buffer(("c", "h", "w"), "float32")):
    for ci, yi, xi, ry, rx in T.grid(c, h, w, 2, 2):
        with T.block("pool"):
            vc, vy, vx, vry, vrx = T.axis.remap("SSSRR", [ci, yi, xi, ry, rx])
            T.reads(Y[vc, vy, vx], X[vc, vy * 2 + vry, vx * 2 + vrx])
            T.writes(Y[vc, vy, vx])
            with T.init():
                Y[vc, vy, vx] = T.float32("-inf")
            Y[vc, vy, vx] = T.max(Y[vc, vy, vx], X[vc, vy * 2 + vry, vx * 2 + vrx])
