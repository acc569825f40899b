"""Node constructors refuse ill-formed IR built by hand (the script front end refuses the
same inputs with its own messages): an expression where a statement belongs, a math
intrinsic of the wrong dtype, a constant outside its dtype, an operand or a name that is no
node of the kind its field holds."""

import re

import pytest

import pyir
from pyir.errors import IRError
from pyir.ir import (Allocate, Binary, Block, Buffer, BufferLoad, BufferStore, Call, Evaluate,
                     FloatImm, For, IfThenElse, IntImm, LetStmt, SeqStmt, Var, binary)

A = Buffer("A", (8,), "float32")
I = Var("i")
LOAD = BufferLoad(A, (I,))
STORE = BufferStore(A, FloatImm(1.0), (I,))


@pytest.mark.parametrize("make, where", [
    (lambda body: For(I, IntImm(0), IntImm(8), "serial", body), "body of a For"),
    (lambda body: SeqStmt((STORE, body)), "part of a SeqStmt"),
    (lambda body: IfThenElse(IntImm(1, "bool"), body), "then_case of an IfThenElse"),
    (lambda body: IfThenElse(IntImm(1, "bool"), STORE, body), "else_case of an IfThenElse"),
    (lambda body: LetStmt(Var("x"), IntImm(1), body), "body of a LetStmt"),
    (lambda body: Allocate(Buffer("T", (8,), "float32"), body), "body of an Allocate"),
    (lambda body: Block("b", (), (), (), body), "body of a Block"),
    (lambda body: Block("b", (), (), (), STORE, init=body), "init of a Block"),
])
def test_an_expression_where_a_statement_belongs_is_refused(make, where):
    """Each statement field names itself, the expression's kind and how to evaluate one."""
    with pytest.raises(IRError, match=rf"^the {where} must be a statement, not a BufferLoad "
                       r"\(an expression runs as a statement in Evaluate\)$"):
        make(LOAD)


def test_a_statement_field_holding_no_node_is_refused():
    """A value that is not IR at all gets no advice about expressions."""
    with pytest.raises(IRError, match=r"^the body of a For must be a statement, not a str$"):
        For(I, IntImm(0), IntImm(8), "serial", "A[i] = 1")


def test_statements_in_their_fields_are_accepted():
    """The checks let well-formed statements through, an expression inside Evaluate too."""
    loop = For(I, IntImm(0), IntImm(8), "serial", SeqStmt((STORE, Evaluate(LOAD))))
    assert loop.body.stmts[1].value == LOAD


@pytest.mark.parametrize("op", ["exp", "erf", "sqrt", "rsqrt", "floor", "tanh"])
def test_a_float_math_intrinsic_of_integers_is_refused(op):
    """Every float intrinsic refuses an integer dtype when built (erf had crashed in codegen
    with a KeyError, sqrt reached LLVM, exp was called unsupported by the backend)."""
    x = BufferLoad(Buffer("N", (8,), "int32"), (I,))
    with pytest.raises(IRError, match=rf"^{op} needs a float argument, not int32$"):
        Call("int32", op, (x,))


def test_pow_of_two_dtypes_is_refused():
    """A math intrinsic's arguments and result have one dtype."""
    with pytest.raises(IRError, match=r"^pow of float32, float64 cannot return float32: its "
                       r"arguments and result have one dtype$"):
        Call("float32", "pow", (FloatImm(2.0), FloatImm(3.0, "float64")))


def test_abs_of_a_bool_is_refused_and_of_an_integer_accepted():
    """abs takes any number, integers included, but not a bool."""
    with pytest.raises(IRError, match=r"^abs needs a number, not bool$"):
        Call("bool", "abs", (IntImm(1, "bool"),))
    assert Call("int32", "abs", (IntImm(-3, "int32"),)).dtype == "int32"


@pytest.mark.parametrize("value, dtype, shown", [
    (300, "int8", "300 does not fit in int8 ([-128, 127])"),
    (2**64, "int64", f"{2**64} does not fit in int64 ([{-2**63}, {2**63 - 1}])"),
    (2, "bool", "2 does not fit in bool ([0, 1])"),
    (-1, "uint8", "-1 does not fit in uint8 ([0, 255])"),
])
def test_an_integer_constant_outside_its_dtype_is_refused(value, dtype, shown):
    """IntImm(300, "int8") held 44 in the machine code, and an index of 2**64 wrote A[0]."""
    with pytest.raises(IRError, match=rf"^{re.escape(shown)}$"):
        IntImm(value, dtype)
    assert IntImm(255, "uint8").value == 255 and IntImm(-128, "int8").value == -128


def test_an_operand_that_is_no_expression_is_named():
    """Binary("add", x, 1) raised AttributeError ('int' object has no attribute 'dtype')."""
    with pytest.raises(IRError, match=r"^an operand of add is an int 1, not an expression "
                                      r"\(pyir.ir.binary converts Python numbers\)$"):
        Binary("add", I, 1)
    assert binary("add", I, 1) == Binary("add", I, IntImm(1))


def test_a_let_binds_a_var_and_an_allocate_a_buffer():
    """A name in their place raised AttributeError in verify and in the passes."""
    with pytest.raises(IRError, match=r"^a LetStmt binds a Var, not a str 'x'$"):
        LetStmt("x", IntImm(1), STORE)
    with pytest.raises(IRError, match=r"^an Allocate allocates a Buffer, not a str 'T'$"):
        Allocate("T", STORE)


def test_a_call_keeps_its_arguments_as_a_tuple():
    """A list of arguments made the node unhashable ("unhashable type: 'list'" at build)."""
    call = Call("float32", "exp", [FloatImm(1.0)])
    assert call.args == (FloatImm(1.0),) and hash(call) == hash(Call("float32", "exp",
                                                                      (FloatImm(1.0),)))


def test_an_unrepresentable_polynomial_is_a_pyir_error():
    """detect_linear(x * 2**62 * 4, x) raised a bare ArithmeticError from the arith core."""
    from pyir.arith import detect_linear
    with pytest.raises(pyir.Error, match="an int64 polynomial with a coefficient outside int64"):
        detect_linear(Binary("mul", Binary("mul", I, IntImm(2**62)), IntImm(4)), I)


def test_a_python_int_index_becomes_an_int64_constant():
    """BufferStore(A, 1.0, (0,)) built by hand: lowering took it, verify raised a TypeError
    from dataclasses; other values are refused by name."""
    from pyir.ir import PrimFunc, verify
    store = BufferStore(A, FloatImm(1.0), (0,))
    assert store.indices == (IntImm(0),) and BufferLoad(A, [3]).indices == (IntImm(3),)
    verify(PrimFunc("f", (A,), store))
    with pytest.raises(IRError, match=r"^an index is an int64 expression, not a str 'i'$"):
        BufferLoad(A, ("i",))


def test_binding_a_float_variable_to_integer_bounds_says_so():
    """It said "IntImm cannot have float dtype float32"."""
    from pyir.arith import Analyzer, IntBound
    with pytest.raises(pyir.Error, match=r"^cannot bind x \(float32\) to integer bounds "
                                         r"IntBound\(min=0, max=4\)$"):
        Analyzer().bind(Var("x", "float32"), IntBound(0, 4))
