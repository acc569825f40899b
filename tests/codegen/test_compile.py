"""Machine code generation options: loop strength reduction is off for "fast" IR only, and
back on for everything else afterwards (LLVM's option is process-wide)."""

import pytest

from pyir.codegen import compile as C
from pyir.codegen.target import Target

#: ``sum(a[i * s] + a[i * s + n])``: strength reduction turns ``i * s`` into a pointer bump.
STRIDED = '''
define float @f(ptr %a, i64 %n, i64 %s) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %acc = phi float [0.0, %entry], [%acc3, %loop]
  %x = mul i64 %i, %s
  %p = getelementptr float, ptr %a, i64 %x
  %v = load float, ptr %p
  %x2 = add i64 %x, %n
  %q = getelementptr float, ptr %a, i64 %x2
  %w = load float, ptr %q
  %acc2 = fadd float %acc, %v
  %acc3 = fadd float %acc2, %w
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret float %acc3
}
'''


def machine_asm(level):
    """Assembly of STRIDED (no IR passes) with the machine options of ``level``."""
    mod, tm = C.optimize_and_emit(STRIDED, Target.from_string("llvm"), "none")
    with C.machine_code(level):
        return tm.emit_assembly(mod)


def test_strength_reduction_is_off_for_fast_ir_only_and_comes_back():
    assert "imul" not in machine_asm("O3")
    assert "imul" in machine_asm("fast")
    assert "imul" not in machine_asm("O3")


def test_strength_reduction_comes_back_after_a_failed_compilation():
    with pytest.raises(RuntimeError):
        with C.machine_code("fast"):
            raise RuntimeError("LLVM failed")
    assert "imul" not in machine_asm("O3")
