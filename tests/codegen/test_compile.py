"""Machine code generation options: loop strength reduction is off for "fast" IR only, and
back on for everything else afterwards (LLVM's option is process-wide); a `Machine` readies
module after module; emission outside llvmlite's lock makes the same object code."""

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


@pytest.mark.parametrize("level", ["fast", "O3"])
def test_a_machine_prepares_module_after_module(level):
    """A `Machine` keeps its "fast" pipeline for the next module; LLVM's default pipelines
    (which fail an assertion when run twice) are built anew each time. Every module comes
    out the same."""
    import llvmlite.binding as llvm
    machine = C.Machine(Target.from_string("llvm"))
    texts = [str(machine.prepare(STRIDED, level, llvm.create_context())) for _ in range(3)]
    assert texts[0] == texts[1] == texts[2]
    assert len(machine._pipelines) == (level == "fast")


def test_unlocked_emission_makes_the_same_object_code():
    machine = C.Machine(Target.from_string("llvm"))
    mod = machine.prepare(STRIDED, "fast")
    with C.machine_code("fast"):
        assert C.emit_object_unlocked(machine.tm, mod) == machine.tm.emit_object(mod)
