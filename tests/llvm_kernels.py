"""LLVM IR of small kernels that tests in several folders declare with pyir.ffi.extern."""


def rows_sum_ir(symbol):
    """``void @symbol(ptr a, ptr out, i64 lda)``: adds up 4 elements of each of 3 rows of
    ``a``, ``lda`` elements apart, into ``out[0]``."""
    return ROWS_SUM.replace("@rows_sum(", f"@{symbol}(")


def dot4_ir(symbol):
    """``void @symbol(ptr x, ptr y, ptr out)``: the dot product of 4 elements of ``x`` and
    ``y`` into ``out[0]``."""
    return DOT4.replace("@dot4(", f"@{symbol}(")


ROWS_SUM = r"""
define void @rows_sum(ptr %a, ptr %out, i64 %lda) {
entry:
  br label %loop
loop:
  %r = phi i64 [0, %entry], [%r1, %loop]
  %acc = phi <4 x float> [zeroinitializer, %entry], [%acc1, %loop]
  %off = mul i64 %r, %lda
  %p = getelementptr float, ptr %a, i64 %off
  %v = load <4 x float>, ptr %p, align 4
  %acc1 = fadd <4 x float> %acc, %v
  %r1 = add i64 %r, 1
  %done = icmp eq i64 %r1, 3
  br i1 %done, label %exit, label %loop
exit:
  %s = call float @llvm.vector.reduce.fadd.v4f32(float 0.0, <4 x float> %acc1)
  store float %s, ptr %out, align 4
  ret void
}
declare float @llvm.vector.reduce.fadd.v4f32(float, <4 x float>)
"""

DOT4 = r"""
define void @dot4(ptr %x, ptr %y, ptr %out) {
  %a = load <4 x float>, ptr %x, align 4
  %b = load <4 x float>, ptr %y, align 4
  %m = fmul <4 x float> %a, %b
  %r = call float @llvm.vector.reduce.fadd.v4f32(float 0.0, <4 x float> %m)
  store float %r, ptr %out, align 4
  ret void
}
declare float @llvm.vector.reduce.fadd.v4f32(float, <4 x float>)
"""
