"""Hand-written LLVM IR kernels following `pyir.codegen.abi`, with their FuncInfo, for
testing the runtime independently of the lowering passes and codegen."""

from pyir.codegen.abi import Condition, FuncInfo, ParamInfo
from pyir.ir import expr as E

n, m, p = E.Var("n"), E.Var("m"), E.Var("p")

IR = r"""
define i32 @"pyir.entry.add"(ptr noalias %slots) {
entry:
  %a = load ptr, ptr %slots
  %bs = getelementptr i64, ptr %slots, i64 1
  %b = load ptr, ptr %bs
  %cs = getelementptr i64, ptr %slots, i64 2
  %c = load ptr, ptr %cs
  %ns = getelementptr i64, ptr %slots, i64 3
  %n = load i64, ptr %ns
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %pa = getelementptr float, ptr %a, i64 %i
  %va = load float, ptr %pa
  %pb = getelementptr float, ptr %b, i64 %i
  %vb = load float, ptr %pb
  %s = fadd float %va, %vb
  %pc = getelementptr float, ptr %c, i64 %i
  store float %s, ptr %pc
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i32 0
}

define i32 @"pyir.entry.axpy"(ptr noalias %slots) {
entry:
  %alpha = load float, ptr %slots
  %xs = getelementptr i64, ptr %slots, i64 1
  %x = load ptr, ptr %xs
  %ys = getelementptr i64, ptr %slots, i64 2
  %y = load ptr, ptr %ys
  %ns = getelementptr i64, ptr %slots, i64 3
  %n = load i64, ptr %ns
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %px = getelementptr float, ptr %x, i64 %i
  %vx = load float, ptr %px
  %py = getelementptr float, ptr %y, i64 %i
  %vy = load float, ptr %py
  %ax = fmul float %alpha, %vx
  %s = fadd float %ax, %vy
  store float %s, ptr %py
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i32 0
}

define i32 @"pyir.entry.fill_i8"(ptr noalias %slots) {
entry:
  %v = load i8, ptr %slots
  %os = getelementptr i64, ptr %slots, i64 1
  %o = load ptr, ptr %os
  %ns = getelementptr i64, ptr %slots, i64 2
  %n = load i64, ptr %ns
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %po = getelementptr i8, ptr %o, i64 %i
  store i8 %v, ptr %po
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i32 0
}

define i32 @"pyir.entry.window"(ptr noalias %slots) {
entry:
  %x = load ptr, ptr %slots
  %ys = getelementptr i64, ptr %slots, i64 1
  %y = load ptr, ptr %ys
  %ms = getelementptr i64, ptr %slots, i64 2
  %m = load i64, ptr %ms
  %ps = getelementptr i64, ptr %slots, i64 3
  %p = load i64, ptr %ps
  %need = add i64 %p, 2
  %ok = icmp sge i64 %m, %need
  br i1 %ok, label %start, label %fail
fail:
  ret i32 1
start:
  %empty = icmp sle i64 %p, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %start], [%i1, %loop]
  %p0 = getelementptr float, ptr %x, i64 %i
  %v0 = load float, ptr %p0
  %p1 = getelementptr float, ptr %p0, i64 1
  %v1 = load float, ptr %p1
  %p2 = getelementptr float, ptr %p0, i64 2
  %v2 = load float, ptr %p2
  %s1 = fadd float %v0, %v1
  %s = fadd float %s1, %v2
  %py = getelementptr float, ptr %y, i64 %i
  store float %s, ptr %py
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %p
  br i1 %more, label %loop, label %done
done:
  ret i32 0
}

define i32 @"pyir.entry.repeat2"(ptr noalias %slots) {
entry:
  %a = load ptr, ptr %slots
  %bs = getelementptr i64, ptr %slots, i64 1
  %b = load ptr, ptr %bs
  %ns = getelementptr i64, ptr %slots, i64 2
  %n = load i64, ptr %ns
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %pa = getelementptr double, ptr %a, i64 %i
  %va = load double, ptr %pa
  %j = shl i64 %i, 1
  %pb = getelementptr double, ptr %b, i64 %j
  store double %va, ptr %pb
  %pb1 = getelementptr double, ptr %pb, i64 1
  store double %va, ptr %pb1
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i32 0
}

define i32 @"pyir.entry.status"(ptr noalias %slots) {
entry:
  %code = load i32, ptr %slots
  ret i32 %code
}

define i32 @"pyir.entry.rowsum"(ptr noalias %slots) {
entry:
  %a = load ptr, ptr %slots
  %os = getelementptr i64, ptr %slots, i64 1
  %o = load ptr, ptr %os
  %ns = getelementptr i64, ptr %slots, i64 2
  %n = load i64, ptr %ns
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %rows
rows:
  %i = phi i64 [0, %entry], [%i1, %rowend]
  %base = mul i64 %i, 4
  br label %cols
cols:
  %j = phi i64 [0, %rows], [%j1, %cols]
  %acc = phi float [0.0, %rows], [%acc1, %cols]
  %k = add i64 %base, %j
  %pa = getelementptr float, ptr %a, i64 %k
  %va = load float, ptr %pa
  %acc1 = fadd float %acc, %va
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, 4
  br i1 %cmore, label %cols, label %rowend
rowend:
  %po = getelementptr float, ptr %o, i64 %i
  store float %acc1, ptr %po
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %rows, label %done
done:
  ret i32 0
}
"""


def buf(name, shape, dtype="float32", writes=False):
    return ParamInfo(name, "buffer", dtype, tuple(E.convert(s) for s in shape), writes)


INFOS = [
    FuncInfo("add", (buf("A", (n,)), buf("B", (n,)), buf("C", (n,), writes=True)), (n,)),
    FuncInfo("axpy", (ParamInfo("alpha", "scalar", "float32"), buf("X", (n,)),
                      buf("Y", (n,), writes=True)), (n,)),
    FuncInfo("fill_i8", (ParamInfo("value", "scalar", "int8"),
                         buf("out", (n,), "int8", writes=True)), (n,)),
    FuncInfo("window", (buf("X", (m,)), buf("Y", (p,), writes=True)), (m, p),
             (Condition(E.ge(m, p + 2), "X is read up to index p + 1"),)),
    FuncInfo("repeat2", (buf("A", (n,), "float64"), buf("B", (n * 2,), "float64", writes=True)),
             (n,)),
    FuncInfo("rowsum", (buf("A", (n, 4)), buf("out", (n,), writes=True)), (n,)),
    FuncInfo("status", (ParamInfo("code", "scalar", "int32"),), ()),
]
