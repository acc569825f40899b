"""Hand-built prim functions for the transform and codegen tests (until the script
language can write them)."""

from pyir.ir import (Allocate, Binary, Block, BlockRealize, Buffer, BufferStore, Call, Cast,
                     FloatImm, For, IfThenElse, IntImm, IRModule, IterVar, PrimFunc, Var, const,
                     seq)
from pyir.ir import expr as E
from pyir.transform.regions import infer_regions

TRUE = IntImm(1, "bool")


def shape_of(shape):
    """Shape entries: ints stay, strings become shared int64 Vars (memoized per call)."""
    vars_ = {}
    out = []
    for s in shape:
        if isinstance(s, str):
            out.append(vars_.setdefault(s, Var(s)))
        else:
            out.append(s)
    return tuple(out), vars_


def loops(extents, body_fn, kinds=None, names="ijklmn"):
    """Nested serial loops over ``extents``; ``body_fn(*loop_vars)`` builds the body."""
    vs = [Var(names[k]) for k in range(len(extents))]
    body = body_fn(*vs)
    kinds = kinds or ["serial"] * len(extents)
    for v, ext, kind in reversed(list(zip(vs, extents, kinds))):
        body = For(v, IntImm(0), ext, kind, body)
    return body


def block(name, iters, body_fn, init_fn=None, predicate=TRUE, allocs=()):
    """A BlockRealize; ``iters`` is a list of (extent, kind, binding). Its reads and writes
    are the regions its body accesses."""
    ivs = [IterVar(Var(f"v{name}{k}"), ext, kind) for k, (ext, kind, _) in enumerate(iters)]
    vs = [iv.var for iv in ivs]
    body, init = body_fn(*vs), None if init_fn is None else init_fn(*vs)
    blk = Block(name, tuple(ivs), *infer_regions(body, init, tuple(allocs)), body, init,
                tuple(allocs))
    return BlockRealize(tuple(b for _, _, b in iters), predicate, blk)


def module(*funcs):
    return IRModule(tuple((f.name, f) for f in funcs))


def elementwise(dtype="float32", shape=("n",), op="add", name="ew"):
    """C = A op B over ``shape``."""
    shp, _ = shape_of(shape)
    A, B, C = (Buffer(x, shp, dtype) for x in "ABC")

    def body(*ls):
        def inner(*vs):
            return BufferStore(C, Binary(op, A[vs], B[vs]), tuple(vs))
        return block("C", [(e, "S", l) for e, l in zip(shp, ls)], inner)

    return PrimFunc(name, (A, B, C), loops(list(shp), body))


def unary(fn, dtype="float32", shape=("n",), name="un"):
    """B = fn(A)."""
    shp, _ = shape_of(shape)
    A, B = Buffer("A", shp, dtype), Buffer("B", shp, dtype)

    def body(*ls):
        return block("B", [(e, "S", l) for e, l in zip(shp, ls)],
                     lambda *vs: BufferStore(B, fn(A[vs]), tuple(vs)))

    return PrimFunc(name, (A, B), loops(list(shp), body))


def matmul(n="n", m="m", k="k", dtype="float32", name="matmul"):
    (n, m, k), _ = shape_of((n, m, k))
    A, B, C = Buffer("A", (n, k), dtype), Buffer("B", (k, m), dtype), Buffer("C", (n, m), dtype)

    def body(i, j, r):
        return block("C", [(n, "S", i), (m, "S", j), (k, "R", r)],
                     lambda vi, vj, vr: BufferStore(C, C[vi, vj] + A[vi, vr] * B[vr, vj],
                                                   (vi, vj)),
                     init_fn=lambda vi, vj, vr: BufferStore(C, const(0, dtype), (vi, vj)))

    return PrimFunc(name, (A, B, C), loops([n, m, k], body))


def row_sum(dtype="float32", acc="float32", name="row_sum"):
    """S[i] = sum_j cast(acc, X[i, j])."""
    (n, m), _ = shape_of(("n", "m"))
    X, S = Buffer("X", (n, m), dtype), Buffer("S", (n,), acc)

    def body(i, j):
        return block("S", [(n, "S", i), (m, "R", j)],
                     lambda vi, vj: BufferStore(S, S[vi] + Cast(acc, X[vi, vj]), (vi,)),
                     init_fn=lambda vi, vj: BufferStore(S, const(0, acc), (vi,)))

    return PrimFunc(name, (X, S), loops([n, m], body))


def window_sum(name="window"):
    """Y[i] = X[i] + X[i+1] + X[i+2] for i < p; X has shape (q,)."""
    p, q = Var("p"), Var("q")
    X, Y = Buffer("X", (q,), "float32"), Buffer("Y", (p,), "float32")

    def body(i, r):
        return block("Y", [(p, "S", i), (IntImm(3), "R", r)],
                     lambda vi, vr: BufferStore(Y, Y[vi] + X[vi + vr], (vi,)),
                     init_fn=lambda vi, vr: BufferStore(Y, FloatImm(0.0), (vi,)))

    return PrimFunc(name, (X, Y), loops([p, IntImm(3)], body))


def scaled_copy_via_temp(size="n", name="via_temp"):
    """T = A * 2 (an allocated buffer); B = T + 1."""
    (n,), _ = shape_of((size,))
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
    T = Buffer("T", (n,), "float32")
    first = loops([n], lambda i: block("T", [(n, "S", i)],
                                       lambda v: BufferStore(T, A[v] * FloatImm(2.0), (v,))))
    second = loops([n], lambda i: block("B", [(n, "S", i)],
                                        lambda v: BufferStore(B, T[v] + FloatImm(1.0), (v,))))
    body = seq(first, second)
    root = BlockRealize((), TRUE, Block("root", (), *infer_regions(body, None, (T,)), body,
                                        alloc_buffers=(T,)))
    return PrimFunc(name, (A, B), root)


def clamp_if(name="clamp_if"):
    """B[i] = A[i] if A[i] > 0 else -A[i] * 3, with an if/else statement."""
    (n,), _ = shape_of(("n",))
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")

    def inner(v):
        return IfThenElse(E.gt(A[v], FloatImm(0.0)), BufferStore(B, A[v], (v,)),
                          BufferStore(B, A[v] * FloatImm(-3.0), (v,)))

    return PrimFunc(name, (A, B), loops([n], lambda i: block("B", [(n, "S", i)], inner)))


def math_call(op, dtype="float32", name=None):
    return unary(lambda x: Call(dtype, op, (x,)), dtype=dtype, name=name or f"m_{op}")


def lowered_loop(name="plain"):
    """A prim function written without blocks: B[i] = A[i] + 1."""
    n = Var("n")
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
    i = Var("i")
    return PrimFunc(name, (A, B), For(i, IntImm(0), n, "serial",
                                      BufferStore(B, A[i] + FloatImm(1.0), (i,))))


def allocate_plain(size, name="alloc_plain"):
    """Already lowered code with an Allocate of ``size`` (an int) elements:
    T[i] = i; B[j] = A[j] + T[j % size]."""
    n = Var("n")
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
    T = Buffer("T", (size,), "float32")
    i, j = Var("i"), Var("j")
    fill = For(i, IntImm(0), IntImm(size), "serial", BufferStore(T, Cast("float32", i), (i,)))
    use = For(j, IntImm(0), n, "serial",
              BufferStore(B, A[j] + T[Binary("floormod", j, IntImm(size))], (j,)))
    return PrimFunc(name, (A, B), Allocate(T, seq(fill, use)))
