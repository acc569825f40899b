"""What the parser refuses beyond the grammar: what Python evaluates or lets through
before it reads a definition (an async def, the arguments of annotations, which Python
runs at ``def`` time, a repeated keyword or a ``**`` in text Python never compiled), and
what a script asserts that does not hold (a binding outside its iterator's domain, a
parallel or vectorized loop whose iterations depend on each other). Each is a ParseError
at the user's line."""

import textwrap

import pytest

import pyir
from pyir.script import ParseError, from_source
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T

from source_lines import line_in

HEADER = "from pyir.script import tensor as T\nfrom pyir.script import graph as R\n"


def f(B: T.Buffer((8,), "int32")):
    """A plain function of the name the async prim function below takes."""
    B[0] = 1


def test_an_async_prim_function_is_refused_not_another_of_its_name():
    """The source lookup found only plain defs: with a plain ``f`` in the file, the async
    ``f`` was silently that one."""
    with pytest.raises(ParseError) as info:
        @T.prim_func
        async def f(B: T.Buffer((8,), "int32")):
            B[0] = 5
    err = info.value
    assert err.message == "a prim function is a plain def, not an async def"
    assert (err.filename, err.line) == (__file__, line_in(
        test_an_async_prim_function_is_refused_not_another_of_its_name, "async def f"))


def test_an_async_function_is_refused_in_a_module_in_text_and_for_graphs():
    """The same in a module class, in from_source text and for a graph function."""
    with pytest.raises(ParseError, match="a prim function is a plain def, not an async def"):
        @I.ir_module
        class M:
            @T.prim_func
            async def g(B: T.Buffer((8,), "int32")):
                B[0] = 5
    with pytest.raises(ParseError) as info:
        from_source(HEADER + '@T.prim_func\nasync def h(B: T.Buffer((8,), "int32")):\n'
                             '    B[0] = 5\n')
    assert (info.value.line, info.value.message) == (
        4, "a prim function is a plain def, not an async def")
    with pytest.raises(ParseError, match="a graph function is a plain def, not an async def"):
        @R.function
        async def k(x: R.Tensor((4,), "float32")):
            return x


def test_wrong_buffer_annotation_arguments_are_parse_errors_at_their_line():
    """T.Buffer() raised Python's TypeError from the annotation object's __init__."""
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer()):
            pass
    assert info.value.message == "T.Buffer needs a shape"
    assert info.value.line == line_in(
        test_wrong_buffer_annotation_arguments_are_parse_errors_at_their_line,
        "def f(A: T.Buffer())")
    with pytest.raises(ParseError, match=r"T.Buffer takes \(shape, dtype, scope\)"):
        @T.prim_func
        def g(A: T.Buffer((4,), "float32", "global", 1)):
            pass


def test_wrong_struct_info_arguments_are_parse_errors():
    """R.Prim() and R.Tensor with too many arguments raised TypeError, R.Object(1) 'not
    callable' (and from text was accepted, its argument dropped)."""
    with pytest.raises(ParseError, match="R.Prim needs a dtype"):
        @R.function
        def a(x: R.Prim()):
            return x
    with pytest.raises(ParseError, match="R.Tensor takes at most 3 positional argument"):
        @R.function
        def b(x: R.Tensor((4,), "float32", 1, 2)):
            return x
    with pytest.raises(ParseError, match="R.Object takes no arguments"):
        @R.function
        def c(x: R.Object(1)):
            return x
    with pytest.raises(ParseError, match="R.Object takes no arguments"):
        from_source(HEADER + "@R.function\ndef d(x: R.Object(1)):\n    return x\n")


def test_annotation_objects_keep_what_they_were_given():
    """Evaluated by Python at def time, struct infos keep their arguments as written."""
    assert repr(R.Tensor((4, "n"), "float32")) == "R.Tensor((4, 'n'), 'float32')"
    assert repr(R.Object) == "R.Object()" and repr(R.Tuple(R.Object)) == "R.Tuple(R.Object())"


def test_a_repeated_keyword_in_text_is_refused():
    """ast.parse lets f(a=1, a=2) through (Python's compiler does not): the first was
    silently dropped."""
    text = HEADER + ('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
                     '    for i in T.serial(4, annotations={"a": 1}, annotations={"b": 2}):\n'
                     '        A[i] = T.float32(1)\n')
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert (info.value.line, info.value.message) == (5, "keyword argument annotations is "
                                                        "repeated")


def test_double_star_arguments_are_refused_where_written():
    """T.serial(4, **kw) said 'has no argument None'."""
    options = {}
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4, **options):
                A[i] = T.float32(1)
    assert info.value.message == "T.serial does not take **kwargs"
    assert info.value.line == line_in(test_double_star_arguments_are_refused_where_written,
                                      "**options):")


def test_decorator_arguments_stay_python():
    """A decorator's ** is Python's own call, run before the parser: not refused."""
    options = {"override": True}

    @pyir.ffi.extern("test.definition_checks.k", llvm_ir="define void @k_dc(ptr %x) {\n"
                     "  ret void\n}\n", **options)
    def kernel(x: T.Buffer((1,), "float32")): ...
    assert pyir.ffi.get_global_func("test.definition_checks.k") is kernel


def test_extern_llvm_ir_must_be_text():
    """llvm_ir=5 raised Python's TypeError from a regular expression."""
    with pytest.raises(pyir.ArgumentTypeError, match=r"^pyir.ffi.extern\('test.dc.bad'\): "
                       r"llvm_ir= is the LLVM IR text of the kernel \(a str\), got int 5$"):
        pyir.ffi.extern("test.dc.bad", llvm_ir=5)


def test_from_source_filename_must_be_text():
    """filename=5 raised Python's TypeError from ast.parse."""
    with pytest.raises(pyir.ArgumentTypeError, match=r"^pyir.script.from_source: filename= "
                       r"names where the text came from in messages \(a str\), got int 5$"):
        from_source(HEADER, filename=5)


@pytest.mark.parametrize("body, symbol, hint", [
    ("y = -x", "-", "R.negative(x)"),
    ("y = R.add(x, -x)", "-", "R.negative(x)"),
    ("y = not x", "not", "R.* calls"),
])
def test_a_unary_operator_on_a_graph_value_names_the_r_call(body, symbol, hint):
    """-x in graph code said "this value must be a constant"; a negative number stays one."""
    text = HEADER + f'@R.function\ndef g(x: R.Tensor((4,), "float32")):\n    {body}\n    return x\n'
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert (info.value.line, info.value.message, info.value.hint) == (
        5, f"Python's unary '{symbol}' of a graph value is not supported in graph-level (R) "
           "code: operators are R.* calls", hint)
    assert from_source(text.replace(body, "y = -1.0"))


@pytest.mark.parametrize("decorate", [T.prim_func, R.function,
                                      pyir.ffi.extern("test.dc.lambda", llvm_ir=(
                                          "define void @k_lam(ptr %x) {\n  ret void\n}\n"))])
def test_a_lambda_cannot_be_a_definition(decorate):
    """A lambda has no def to read: it said "cannot find the definition of '<lambda>' ...
    was the file changed after it was imported?"."""
    with pytest.raises(ParseError) as info:
        decorate(lambda x: x)
    assert info.value.message == "a lambda cannot be read as a definition; write it with def"
    assert (info.value.filename, info.value.line) == (
        __file__, line_in(test_a_lambda_cannot_be_a_definition, "decorate(lambda"))


@pytest.mark.parametrize("statement, words", [("yield", "yield"), ("yield A[0]", "yield"),
                                              ("yield from A", "yield from")])
def test_yield_in_a_prim_function_is_named(statement, words):
    """yield said "this expression statement has no effect"."""
    text = HEADER + f'@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    {statement}\n'
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert (info.value.line, info.value.message) == (
        5, f"{words} is not supported in tensor-level (T) expression code")


def _row_sum(axis, where=""):
    return (HEADER + '@T.prim_func\ndef f(A: T.Buffer((4, "n"), "float32"), '
            'B: T.Buffer((4,), "float32")):\n'
            "    for i, k in T.grid(4, n):\n"
            '        with T.block("B"):\n'
            "            vi = T.axis.spatial(4, i)\n"
            f"            vk = {axis}\n" + (f"            T.where({where})\n" if where else "")
            + "            with T.init():\n"
            "                B[vi] = T.float32(0)\n"
            "            B[vi] = B[vi] + A[vi, vk]\n")


def test_a_binding_outside_its_iterator_s_domain_is_refused_at_its_line():
    """vk = T.axis.reduce(4, k) over k in range(n) summed n elements, and for n = 0 left
    the output as it was (the init runs at vk == 0)."""
    with pytest.raises(ParseError) as info:
        from_source(_row_sum("T.axis.reduce(4, k)"))
    assert (info.value.line, info.value.message) == (
        8, "block iterator vk is bound to values from 0 to n - 1 over the loops around the "
           "block, outside its domain [0, 4)")
    for where in ("", "k < 4"):   # a predicate leaves the binding to it, not the extent
        with pytest.raises(ParseError, match="block iterator vk has the negative extent -4"):
            from_source(_row_sum("T.axis.reduce(-4, k)", where))


def test_bindings_inside_their_domains_or_cut_by_a_predicate_are_accepted():
    """The loops' own extent, or a T.where that keeps the binding in the domain."""
    import numpy as np
    lib = pyir.build(from_source(_row_sum("T.axis.reduce(n, k)")))
    a, b = np.arange(12, dtype=np.float32).reshape(4, 3), np.full(4, 7, np.float32)
    lib["f"](a, b)
    np.testing.assert_array_equal(b, a.sum(axis=1))
    assert from_source(_row_sum("T.axis.reduce(4, k)", "k < 4"))


def _concurrent(kind, block):
    return (HEADER + '@T.prim_func\ndef f(A: T.Buffer((65,), "float32"), '
            'B: T.Buffer((64,), "float32")):\n'
            f"    for i in T.{kind}(64):\n"
            '        with T.block("s"):\n'
            + textwrap.indent(textwrap.dedent(block).strip("\n"), "            ") + "\n")


SUM = """
vi = T.axis.reduce(64, i)
with T.init():
    A[0] = T.float32(0)
A[0] = A[0] + B[vi]
"""
SCAN = """
vi = T.axis.spatial(64, i)
A[vi + 1] = A[vi] + B[vi]
"""


@pytest.mark.parametrize("kind", ["parallel", "vectorized"])
@pytest.mark.parametrize("block, why", [
    (SUM, 'block "s" reduces into A over loop i, so its iterations depend on each other'),
    (SCAN, 'block "s" accesses A at regions that differ between iterations, so the order of '
           "its iterations matters"),
])
def test_a_concurrent_loop_whose_iterations_depend_on_each_other_is_refused(kind, block, why):
    """T.parallel and T.vectorized in a script are checked as Schedule.parallel and
    vectorize check them: a parallel sum into A[0] raced, a vectorized one added 16 lanes
    at once."""
    with pytest.raises(ParseError) as info:
        from_source(_concurrent(kind, block))
    assert (info.value.line, info.value.message) == (
        5, f"{why}; the iterations of {kind} loop i cannot run at the same time")


@pytest.mark.parametrize("kind", ["parallel", "vectorized"])
def test_a_concurrent_loop_of_independent_iterations_is_accepted(kind):
    import numpy as np
    lib = pyir.build(from_source(_concurrent(kind, """
        vi = T.axis.spatial(64, i)
        A[vi] = A[vi] + B[vi]
        """)))
    a, b = np.ones(65, np.float32), np.arange(64, dtype=np.float32)
    lib["f"](a, b)
    np.testing.assert_array_equal(a[:64], b + 1)


def test_a_binding_past_its_domain_under_a_predicated_inner_block_is_accepted():
    """A split with a tail, blockized: the outer block binds past n, and the inner block's
    T.where cuts that off (a schedule prints this; reading it back was refused)."""
    text = HEADER + '''@T.prim_func
def f(A: T.Buffer(("n",), "float32")):
    for i_0 in range((n + 1) // 2):
        with T.block("B_o"):
            vi_o = T.axis.spatial((n + 1) // 2 * 2, i_0 * 2)
            for i_1 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(n, vi_o + i_1)
                    T.where(i_0 * 2 + i_1 < n)
                    A[vi] = T.float32(1)
'''
    assert from_source(text)
    with pytest.raises(ParseError, match="block iterator vi is bound to values from"):
        from_source(text.replace("                    T.where(i_0 * 2 + i_1 < n)\n", ""))


def test_a_concurrent_loop_of_one_iteration_is_not_checked():
    """One iteration runs with none other (a schedule's parallel(1) read back was refused)."""
    assert from_source(_concurrent("parallel", SCAN).replace("T.parallel(64)", "T.parallel(1)"))
