"""The LLVM backend's error messages, each triggered through the public API."""

import pytest

import kernels as K
import pyir
from pyir.codegen.emit_stmt import CodegenError
from pyir.codegen.llvm import codegen, codegen_units
from pyir.ir import (Buffer, BufferStore, Evaluate, FloatImm, For, IntImm, PrimFunc, StringImm,
                     Var)
from pyir.script import ir as I
from pyir.script import tensor as T


@I.ir_module
class Unflat:
    @T.prim_func
    def copy(A: T.Buffer((4, 6), "float32"), B: T.Buffer((24,), "float32")):
        for i, j in T.grid(4, 6):
            B[i * 6 + j] = A[i, j]


@pytest.mark.parametrize("generate", [lambda m: codegen(m),
                                      lambda m: codegen_units(m, lambda text: None)],
                         ids=["codegen", "codegen_units"])
def test_a_block_free_function_with_a_2d_buffer_is_refused(generate):
    """A function without blocks but with a 2-D buffer is refused before being lowered."""
    with pytest.raises(CodegenError, match=r"^prim function copy: buffer A has 2 dimensions; "
                       r"lower it with pyir\.transform\.lower first$"):
        generate(Unflat)


def test_an_allocate_without_a_storage_plan_is_refused():
    """An Allocate that lowering has not planned storage for names its buffer."""
    with pytest.raises(CodegenError, match=r"^prim function alloc_plain: allocated buffer T has "
                       r"no storage plan; lower the function with pyir\.transform\.lower first$"):
        codegen(K.module(K.allocate_plain(8)))


def _one_loop(name, body_fn):
    """``for i in range(n): body_fn(A, i)`` over a float32 buffer A of shape (n,)."""
    n, i = Var("n"), Var("i")
    A = Buffer("A", (n,), "float32")
    return K.module(PrimFunc(name, (A,), For(i, IntImm(0), n, "serial", body_fn(A, i))))


def test_a_variable_with_no_value_is_a_codegen_error():
    """A variable that is neither a parameter nor bound anywhere is named in the error."""
    x = Var("x", "float32")
    mod = _one_loop("free", lambda A, i: BufferStore(A, x, (i,)))
    with pytest.raises(CodegenError, match=r"^prim function free: variable x is used but has "
                       r"no value here$"):
        codegen(mod)


@pytest.mark.ir_without_script
def test_a_string_used_as_a_value_is_a_codegen_error():
    """A StringImm outside call_extern cannot be compiled, and the error says so."""
    A = Buffer("A", (Var("n"),), "float32")
    mod = K.module(PrimFunc("strimm", (A,), Evaluate(StringImm("hello"))))
    with pytest.raises(CodegenError, match=r"^prim function strimm: cannot compile a StringImm "
                       r"expression$"):
        pyir.build(mod)


def test_a_buffer_neither_a_parameter_nor_allocated_is_named():
    """Another Buffer object of a parameter's name (IR built by hand) was a KeyError."""
    mod = K.module(PrimFunc("stray", (Buffer("A", (8,), "float32"),),
                            BufferStore(Buffer("A", (8,), "float32"), FloatImm(1.0),
                                        (IntImm(0),))))
    with pytest.raises(CodegenError, match=r"^prim function stray: buffer A is accessed but is "
                       r"neither a parameter of the function nor allocated in it$"):
        codegen(mod)
