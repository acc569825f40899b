"""An audit of the error messages of the lowering passes (pyir/transform), the IR nodes,
`pyir.ir.verify`, structural equality, IRModule and `pyir.arith`: each message no other
test reached gets a test that triggers it through the public API and asserts its words.
Also edge cases the lowering must get right: loops that never run, indices read from
memory (calls whose values would index out of bounds are refused, never run)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyir
from pyir.arith import Analyzer, IntBound, detect_iter_map, detect_linear, simplify
from pyir.errors import IRError
from pyir.ir import (Allocate, Binary, BindingBlock, Block, BlockRealize, Buffer, BufferLoad,
                     BufferRegion, BufferStore, Call, CallTIR, Cast, FloatImm, For,
                     Function, GlobalVar, GraphVar, IntImm, IRModule, IterVar, LetStmt, Not,
                     PrimFunc, PrimValue, Range, Select, SeqExpr, SeqStmt, TensorStructInfo,
                     Var, VarBinding, assert_structural_equal, convert, verify)
from pyir.script import from_source
from pyir.script import tensor as T

from llvm_kernels import dot4_ir, rows_sum_ir

A = Buffer("A", (8,), "float32")
I = Var("i")
ZERO = IntImm(0)
TRUE = IntImm(1, "bool")
STORE = BufferStore(A, FloatImm(1.0), (ZERO,))


def func(body, *params):
    return PrimFunc("f", params or (A,), body)


def loop(var, body, start=ZERO, extent=IntImm(8)):
    return For(var, start, extent, "serial", body)


def prim(params, body):
    """A prim function from script text: its parameters and its (indented) body."""
    return from_source("from pyir.script import tensor as T\n\n"
                       f"@T.prim_func\ndef f({params}):\n{textwrap.indent(body, '    ')}\n")


# ------------------------------------------------------------------ expression nodes
def test_an_int_constant_of_a_float_dtype_is_refused():
    """IntImm holds integers and bools only."""
    with pytest.raises(IRError, match=r"^IntImm cannot have float dtype float32$"):
        IntImm(1, "float32")


def test_a_float_constant_of_an_integer_dtype_is_refused():
    """FloatImm needs a float dtype."""
    with pytest.raises(IRError, match=r"^FloatImm needs a float dtype, not int32$"):
        FloatImm(1.0, "int32")


def test_an_unknown_dtype_lists_the_known_ones():
    """A dtype name that is not one of pyir's is refused with the list of those."""
    with pytest.raises(IRError, match=r"^unknown dtype 'int'; expected one of bool, int8, "
                       r"int16, int32, int64, uint8.* float64$"):
        Var("x", "int")


def test_an_unknown_binary_operator_is_refused():
    """``pow`` is an intrinsic, not a Binary operator."""
    with pytest.raises(IRError, match=r"^unknown binary operator 'pow'$"):
        Binary("pow", I, I)


def test_operands_of_two_dtypes_are_refused():
    """Both sides of a Binary have one dtype; the message names both."""
    with pytest.raises(IRError, match=r"^operands of add have different dtypes: int64 and "
                       r"int32$"):
        Binary("add", I, Var("j", "int32"))


def test_true_division_of_integers_points_to_floor_division():
    """``div`` of integers is refused with the operator to use instead."""
    with pytest.raises(IRError, match=r"^true division needs float operands, not int64; use "
                       r"// for floor division$"):
        Binary("div", I, I)


def test_logic_of_integers_is_refused():
    """``and`` / ``or`` take bools."""
    with pytest.raises(IRError, match=r"^'or' needs bool operands, not int64$"):
        Binary("or", I, I)


def test_not_of_an_integer_is_refused():
    """``Not`` takes a bool."""
    with pytest.raises(IRError, match=r"^'not' needs a bool operand, not int64$"):
        Not(I)


def test_a_select_on_an_integer_condition_is_refused():
    """A Select's condition is a bool."""
    with pytest.raises(IRError, match=r"^if_then_else condition must be bool, not int64$"):
        Select(I, I, I)


def test_a_select_with_branches_of_two_dtypes_is_refused():
    """Both branches of a Select have one dtype."""
    with pytest.raises(IRError, match=r"^if_then_else branches have different dtypes: int64 "
                       r"and float32$"):
        Select(Binary("lt", I, IntImm(1)), I, FloatImm(1.0))


def test_call_extern_without_a_string_name_is_refused():
    """The kernel name comes first, as a StringImm (a bare str is not one)."""
    with pytest.raises(IRError, match=r"^call_extern needs the kernel name as its first "
                       r"argument$"):
        Call("void", "call_extern", ("kernel", I))


def test_an_unknown_intrinsic_is_refused():
    """Intrinsics are the ones pyir knows."""
    with pytest.raises(IRError, match=r"^unknown intrinsic 'exp2'$"):
        Call("float32", "exp2", (FloatImm(1.0),))


def test_an_intrinsic_with_too_few_arguments_is_refused():
    """checked_index takes index, extent and status."""
    with pytest.raises(IRError, match=r"^checked_index takes 3 argument\(s\), got 2$"):
        Call("int64", "checked_index", (I, IntImm(8)))


def test_a_load_with_too_many_indices_is_refused():
    """A load has one index per dimension."""
    with pytest.raises(IRError, match=r"^buffer A has 1 dimension\(s\) but is indexed with 2$"):
        BufferLoad(A, (I, I))


def test_a_buffer_with_an_int32_extent_is_refused():
    """Buffer extents are int64 expressions."""
    with pytest.raises(IRError, match=r"^buffer B: shape entries must be int64, got int32$"):
        Buffer("B", (IntImm(4, "int32"),), "float32")


def test_a_python_value_that_is_no_expression_is_refused():
    """A str extent is not converted to a variable."""
    with pytest.raises(IRError, match=r"^cannot use str 'n' as an IR expression$"):
        convert("n")


# ------------------------------------------------------------------ statement nodes
def test_an_unknown_loop_kind_lists_the_kinds():
    """A loop kind is one of FOR_KINDS."""
    with pytest.raises(IRError, match=r"^unknown loop kind 'parallelized'; expected one of "
                       r"\('serial', 'parallel', 'vectorized', 'unroll'\)$"):
        For(I, ZERO, IntImm(8), "parallelized", STORE)


def test_an_int32_loop_variable_is_refused():
    """Loop variables are int64."""
    with pytest.raises(IRError, match=r"^loop variable k must be int64$"):
        For(Var("k", "int32"), ZERO, IntImm(8), "serial", STORE)


def test_a_block_iterator_of_an_unknown_kind_is_refused():
    """Block iterators are spatial or reduce."""
    with pytest.raises(IRError, match=r"^block iterator kind must be 'S' or 'R', not 'X'$"):
        IterVar(Var("v"), IntImm(8), "X")


def test_a_region_with_a_range_per_dimension_too_many_is_refused():
    """A region has one range per dimension of its buffer."""
    with pytest.raises(IRError, match=r"^region of A has 2 ranges for 1 dimensions$"):
        BufferRegion(A, (Range(0, 1), Range(0, 1)))


def test_a_block_realize_with_too_few_bindings_is_refused():
    """Each block iterator gets one binding."""
    block = Block("b", (IterVar(Var("v"), IntImm(8), "S"),), (), (), STORE)
    with pytest.raises(IRError, match=r"^block b has 1 iterators but 0 bindings$"):
        BlockRealize((), TRUE, block)


def test_a_store_with_too_many_indices_is_refused():
    """A store has one index per dimension."""
    with pytest.raises(IRError, match=r"^buffer A has 1 dimension\(s\) but is stored with 2 "
                       r"indices$"):
        BufferStore(A, FloatImm(1.0), (I, I))


def test_a_parameter_that_is_no_buffer_nor_variable_is_refused():
    """A buffer's name is not a parameter."""
    with pytest.raises(IRError, match=r"^prim function f: parameter 'A' is neither a Buffer "
                       r"nor a Var$"):
        PrimFunc("f", ("A",), STORE)


# ------------------------------------------------------------------ IRModule, structural
def test_a_missing_function_names_the_ones_there():
    """``mod[name]`` says which functions the module has."""
    mod = IRModule.from_dict({"f": func(STORE)})
    with pytest.raises(pyir.Error, match=r"^IRModule has no function named 'g'; it has f$"):
        mod["g"]


def test_a_node_against_a_tuple_is_a_structural_difference():
    """A tuple on one side only is named as such."""
    with pytest.raises(pyir.Error, match=r"^IR differs at <root>: one side is a tuple, the "
                       r"other is not"):
        assert_structural_equal(IntImm(1), (IntImm(1),))


def test_sequences_of_two_lengths_are_a_structural_difference():
    """The lengths are in the message, and the path to the tuple."""
    with pytest.raises(pyir.Error, match=r"^IR differs at <root>.stmts: tuple lengths differ "
                       r"\(1 vs 2\)"):
        assert_structural_equal(SeqStmt((STORE,)), SeqStmt((STORE, STORE)))


def test_a_variable_used_for_two_is_a_structural_difference():
    """``x + x`` is not ``y + z``: the second x refers to another variable."""
    x, y, z = Var("x"), Var("y"), Var("z")
    with pytest.raises(pyir.Error, match=r"^IR differs at <root>.b: refers to a different "
                       r"definition"):
        assert_structural_equal(Binary("add", x, x), Binary("add", y, z))


# ------------------------------------------------------------------ verify (prim functions)
def test_verify_of_something_else_is_refused():
    """verify takes modules and functions, not expressions."""
    with pytest.raises(IRError, match=r"^cannot verify an IntImm$"):
        verify(IntImm(1))


def test_an_expression_as_a_function_body_is_refused_by_verify():
    """A PrimFunc's body is not checked when built; verify names what is there."""
    with pytest.raises(IRError, match=r"^prim function f: unexpected IntImm where a statement "
                       r"belongs$"):
        verify(func(IntImm(0)))


def test_a_buffer_allocated_twice_is_refused_by_verify():
    """Each buffer is defined once."""
    tmp = Buffer("tmp", (8,), "float32")
    body = Allocate(tmp, Allocate(tmp, BufferStore(tmp, FloatImm(0.0), (ZERO,))))
    with pytest.raises(IRError, match=r"^prim function f: buffer tmp is defined twice$"):
        verify(func(body))


def test_an_int32_loop_start_is_refused_by_verify():
    """Loop bounds are int64, like the variable."""
    with pytest.raises(IRError, match=r"^prim function f: loop i: start is int32, not int64$"):
        verify(func(loop(I, STORE, start=IntImm(0, "int32"))))


def test_an_int32_block_binding_is_refused_by_verify():
    """Block bindings are int64."""
    block = Block("b", (IterVar(Var("v"), IntImm(8), "S"),), (), (), STORE)
    realize = BlockRealize((IntImm(0, "int32"),), TRUE, block)
    with pytest.raises(IRError, match=r"^prim function f: block b: binding .* is int32, not "
                       r"int64$"):
        verify(func(realize))


def test_an_int32_load_index_is_refused_by_verify():
    """A load's indices are int64, as a store's are."""
    B = Buffer("B", (8,), "float32")
    store = BufferStore(B, BufferLoad(A, (IntImm(0, "int32"),)), (ZERO,))
    with pytest.raises(IRError, match=r"^prim function f: index of A in a store to B is int32, "
                       r"not int64$"):
        verify(func(store, A, B))


def test_a_region_of_a_buffer_out_of_scope_is_refused_by_verify():
    """A block's reads and writes name buffers in scope."""
    other = Buffer("other", (8,), "float32")
    block = Block("b", (), (BufferRegion(other, (Range(0, 1),)),), (), STORE)
    with pytest.raises(IRError, match=r"^prim function f: block b names buffer other in its "
                       r"reads/writes but it is not in scope$"):
        verify(func(BlockRealize((), TRUE, block)))


def test_a_let_of_another_dtype_is_refused_by_verify():
    """A let variable has its value's dtype."""
    let = LetStmt(Var("x", "int32"), IntImm(1), STORE)
    with pytest.raises(IRError, match=r"^prim function f: let x: variable is int32 but value is "
                       r"int64$"):
        verify(func(let))


# ------------------------------------------------------------------ graph IR
VEC = TensorStructInfo((Var("n"),), "float32")


def test_a_struct_info_whose_ndim_contradicts_its_shape_is_refused():
    """ndim, when given with a shape, is its length."""
    with pytest.raises(IRError, match=r"^tensor struct info: ndim=2 but shape has 1 entries$"):
        TensorStructInfo((4,), "float32", ndim=2)


def test_a_shape_variable_as_a_graph_parameter_is_refused():
    """Parameters of a graph function are GraphVars, not tensor-level Vars."""
    x = GraphVar("x", VEC)
    with pytest.raises(IRError, match=r"^graph function main: parameter Var\(n: int64\) is not "
                       r"a GraphVar$"):
        Function("main", (Var("n"),), SeqExpr((), x), VEC)


def test_an_undefined_symbolic_variable_in_a_value_is_refused_by_verify():
    """A shape variable a value uses comes from a parameter or a match_cast."""
    x, y = GraphVar("x", VEC), GraphVar("y", TensorStructInfo(None, "float32"))
    k = Var("k")
    block = BindingBlock((VarBinding(y, PrimValue(k)),))
    f = Function("main", (x,), SeqExpr((block,), x), VEC)
    with pytest.raises(IRError, match=r"^graph function main: symbolic variable k is used in y "
                       r"but not defined$"):
        verify(f)


def test_a_call_of_a_function_not_in_the_module_is_refused_by_verify():
    """R.call_tir calls a function of the module."""
    x, y = GraphVar("x", VEC), GraphVar("y", VEC)
    call = CallTIR(GlobalVar("missing"), (x,), (VEC,))
    f = Function("main", (x,), SeqExpr((BindingBlock((VarBinding(y, call),)),), y), VEC)
    with pytest.raises(IRError, match=r"^graph function main: y refers to missing, which is not "
                       r"in the module$"):
        verify(IRModule((("main", f),)))


# ------------------------------------------------------------------ pyir.arith
X = Var("x")


def test_binding_a_str_is_refused_with_its_type():
    """Analyzer.bind names what it got instead of a Var."""
    with pytest.raises(pyir.Error, match=r"^Analyzer.bind expects a Var, got str 'i'$"):
        Analyzer().bind("i", Range(0, 4))


def test_binding_an_int32_variable_to_an_int64_range_is_refused():
    """The range's dtype is the variable's."""
    with pytest.raises(pyir.Error, match=r"^cannot bind v \(int32\) to a range of int64$"):
        Analyzer().bind(Var("v", "int32"), Range(0, 4))


def test_binding_an_integer_variable_to_a_float_is_refused():
    """A substitution keeps the variable's dtype."""
    with pytest.raises(pyir.Error, match=r"^cannot bind x \(int64\) to an expression of "
                       r"float32$"):
        Analyzer().bind(X, FloatImm(1.0))


@pytest.mark.parametrize("value, shown", [(2.5, "float 2.5"), (True, "bool True"),
                                          ((0, 4), r"tuple \(0, 4\)")])
def test_binding_to_something_else_lists_what_a_binding_takes(value, shown):
    """A float, a bool or a tuple is none of the facts bind takes."""
    with pytest.raises(pyir.Error, match=rf"^Analyzer.bind: cannot bind x to {shown}; expected "
                       r"a Range, IntBound, PrimExpr or int$"):
        Analyzer().bind(X, value)


def test_simplify_of_a_statement_is_refused():
    """simplify takes expressions."""
    with pytest.raises(pyir.Error, match=r"^expected a PrimExpr, got BufferStore "):
        simplify(STORE)


def test_simplify_of_a_python_value_inside_an_expression_is_refused():
    """A Cast built around a Python int: the simplifier names the int."""
    with pytest.raises(pyir.Error, match=r"^simplify expects a PrimExpr, got int 3$"):
        simplify(Cast("int32", 3))


@pytest.mark.parametrize("ask", ["const_int_bound", "symbolic_bound"])
def test_bounds_of_a_float_are_refused(ask):
    """Bounds are of integer expressions."""
    with pytest.raises(pyir.Error, match=rf"^{ask} needs an integer expression, got float32 "
                       r"expression FloatImm"):
        getattr(Analyzer(), ask)(FloatImm(1.0))


def test_an_iter_map_of_a_float_binding_is_refused():
    """detect_iter_map analyses integer bindings."""
    with pytest.raises(pyir.Error, match=r"^detect_iter_map: binding FloatImm.* is not an "
                       r"integer expression$"):
        detect_iter_map([FloatImm(1.0)], {X: Range(0, 4)})


def test_detect_linear_of_a_python_int_is_refused():
    """detect_linear names the types it got."""
    with pytest.raises(pyir.Error, match=r"^detect_linear expects \(PrimExpr, Var\), got "
                       r"\(int, Var\)$"):
        detect_linear(3, X)


def test_detect_linear_of_a_float_is_refused():
    """Only integer expressions are linear in a variable here."""
    with pytest.raises(pyir.Error, match=r"^detect_linear needs an integer expression, got "
                       r"float32$"):
        detect_linear(FloatImm(1.0), X)


def test_facts_bound_one_sided_keep_simplifications_sound():
    """``x // 4 * 4 + x % 4`` is x; with x >= 0 known, ``x % 4 < 4`` and ``x >= 0``."""
    ana = Analyzer()
    ana.bind(X, IntBound(0, None))
    assert ana.simplify(X // 4 * 4 + X % 4) == X
    assert ana.can_prove(Binary("ge", X // 3, ZERO))
    assert not ana.can_prove(Binary("lt", X // 3, IntImm(5)))


# ------------------------------------------------------------------ kernels' reach


@pytest.fixture(scope="module")
def kernels():
    """audit.rows_sum (3 rows of 4 elements, lda apart) and audit.dot4 (4 elements each)."""
    @pyir.ffi.extern("audit.rows_sum", llvm_ir=rows_sum_ir("audit_rows_sum"), writes="out",
                     override=True)
    def rows_sum(a: T.Buffer((3, "lda"), "float32"), out: T.Buffer((1,), "float32"),
                 lda: T.int64): ...

    @pyir.ffi.extern("audit.dot4", llvm_ir=dot4_ir("audit_dot4"), override=True)
    def dot4(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32"),
             out: T.Buffer((1,), "float32")): ...

    yield
    for name in ("audit.rows_sum", "audit.dot4"):
        pyir.ffi.remove_global_func(name)


def _lower(f):
    return pyir.transform.lower(IRModule.from_dict({"f": f}))


def test_a_row_stride_from_a_loop_variable_is_refused(kernels):
    """``i - 2`` as rows_sum's row stride may be negative, and no entry check can say."""
    f = prim('x: T.Buffer((4, 8), "float32"), d: T.Buffer((1,), "float32")',
             'for i in range(4):\n'
             '    T.call_extern("audit.rows_sum", x[0, 0], d, i - 2, dtype="void")')
    with pytest.raises(pyir.Error, match=r"^prim function f: T.call_extern\('audit.rows_sum', "
                       r"...\): argument 1 takes i - 2 as an extent of x, which cannot be "
                       r"bounded by the shapes to be at least 0$"):
        _lower(f)


def test_a_kernel_reaching_past_the_last_row_is_refused(kernels):
    """From row 2 of 4, three rows reach row 4: past the extent, whatever n is."""
    f = prim('x: T.Buffer((4, "n"), "float32"), d: T.Buffer((1,), "float32")',
             'T.call_extern("audit.rows_sum", x[2, 0], d, n, dtype="void")')
    with pytest.raises(pyir.Error, match=r"^prim function f: T.call_extern\('audit.rows_sum', "
                       r"...\): argument 1 reaches x from x\[2, 0\] up to index 4 in dimension "
                       r"0: past its extent 4$"):
        _lower(f)


def test_a_kernel_reach_from_an_unbounded_index_is_refused(kernels):
    """``x[i * k]`` with k a parameter of any sign: where dot4's 4 elements end is unknown."""
    f = prim('x: T.Buffer((8,), "float32"), d: T.Buffer((1,), "float32"), k: T.int64',
             'for i in range(4):\n'
             '    T.call_extern("audit.dot4", x[i * k], x, d, dtype="void")')
    with pytest.raises(pyir.Error, match=r"^prim function f: T.call_extern\('audit.dot4', "
                       r"...\): argument 1 reaches 4 elements of x from x\[i \* k\], and where "
                       r"that ends cannot be bounded by the shapes$"):
        _lower(f)


def test_a_kernel_reach_by_rows_from_an_unbounded_row_says_so(kernels):
    """``x[i * k, 0]`` with k a parameter of any sign: the message said "up to index None"."""
    f = prim('x: T.Buffer((4, "n"), "float32"), d: T.Buffer((1,), "float32"), k: T.int64',
             'for i in range(4):\n'
             '    T.call_extern("audit.rows_sum", x[i * k, 0], d, n, dtype="void")')
    with pytest.raises(pyir.Error, match=r"^prim function f: T.call_extern\('audit.rows_sum', "
                       r"...\): argument 1 reaches x from x\[i \* k, 0\] up to an index in "
                       r"dimension 0, and where that ends cannot be bounded by the shapes$"):
        _lower(f)


# ------------------------------------------------------------------ edge cases of lowering
def test_loops_that_never_run_need_no_bounds():
    """``range(-3)`` and ``range(0)`` run nothing: ``A[i + 100]`` in them is no access."""
    f = prim('A: T.Buffer((8,), "float32")',
             'for i in range(-3):\n    A[i + 100] = T.float32(1)\n'
             'for j in range(0):\n    A[j + 100] = T.float32(2)\n'
             'A[7] = T.float32(3)')
    assert _lower(f)["f"].attr("entry_conditions") == ()
    a = np.zeros(8, "float32")
    pyir.build(f)["f"](a)
    np.testing.assert_array_equal(a, [0] * 7 + [3])


def test_a_symbolic_extent_below_zero_runs_nothing():
    """``range(n - 10)`` over ``A[i + 10]``: n = 3 runs no iteration, n = 12 writes two."""
    lib = pyir.build(prim('A: T.Buffer(("n",), "float32")',
                          'for i in range(n - 10):\n    A[i + 10] = T.float32(1)'))
    small = np.zeros(3, "float32")
    lib["f"](small)
    np.testing.assert_array_equal(small, [0, 0, 0])
    big = np.zeros(12, "float32")
    lib["f"](big)
    np.testing.assert_array_equal(big, [0] * 10 + [1, 1])


def test_an_index_read_through_an_index_is_checked_at_both_levels():
    """``A[X[Y[i]] * 2 + 1]``: a bad Y and a bad X are each refused, naming the index."""
    lib = pyir.build(prim('A: T.Buffer((8,), "float32"), X: T.Buffer((4,), "int64"), '
                          'Y: T.Buffer((4,), "int64"), B: T.Buffer((4,), "float32")',
                          'for i in range(4):\n    B[i] = A[X[Y[i]] * 2 + 1]'))
    a, b = np.arange(8, dtype="float32"), np.zeros(4, "float32")
    lib["f"](a, np.arange(4), np.array([3, 2, 1, 0]), b)
    np.testing.assert_array_equal(b, [7, 5, 3, 1])
    with pytest.raises(pyir.ArgumentValueError, match=r"^f: X is read at index Y\[i\] in "
                       r"dimension 0 of X, which must lie in \[0, 4\), but it did not as the "
                       r"function ran$"):
        lib["f"](a, np.arange(4), np.array([3, 2, 1, 4]), b)
    with pytest.raises(pyir.ArgumentValueError, match=r"^f: A is read at index X\[Y\[i\]\] \* 2 "
                       r"\+ 1 in dimension 0 of A, which must lie in \[0, 8\)"):
        lib["f"](a, np.array([0, 1, 2, 4]), np.array([3, 2, 1, 0]), b)


FLOAT_INDEX = """
import numpy as np, pyir
from pyir.script import from_source
f = from_source('''from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((8,), "float32"), X: T.Buffer((4,), "float32"),
      U: T.Buffer((4,), "uint64")):
    for i in range(4):
        A[T.cast(X[i], "int64")] = A[T.cast(U[i], "int64")] + T.float32(1)
''')
lib = pyir.build(f)
for x, u in (([0, 1, 2, 3], [0, 1, 2, 3]), ([0, np.nan, 2, 3], [0] * 4),
             ([0, 1e30, 2, 3], [0] * 4), ([0, -np.inf, 2, 3], [0] * 4),
             ([0, 1, 2, 3], [0, 2**64 - 1, 0, 0])):
    a = np.zeros(8, "float32")
    try:
        lib["f"](a, np.array(x, "float32"), np.array(u, "uint64"))
        print("ran", a.tolist())
    except pyir.ArgumentValueError as e:
        print("refused", str(e).split(" in dimension")[0])
"""


def test_indices_cast_from_floats_and_uint64_are_checked_in_a_subprocess():
    """A NaN, an infinity or 1e30 cast to an index, and 2**64 - 1 read as int64 (-1), are
    refused where used; the process survives."""
    done = subprocess.run([sys.executable, "-c", FLOAT_INDEX], check=False, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    written = "refused f: A is written at index int64(X[i])"
    assert done.stdout.splitlines() == [
        "ran [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]", written, written, written,
        "refused f: A is read at index int64(U[i])"]
