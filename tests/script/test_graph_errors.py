"""Parse errors in graph (R) code: each names the file and line, underlines the offending
part of the source line, and says what is wrong."""

import inspect
import textwrap

import pytest

import pyir
from pyir.errors import Error
from pyir.script import ParseError, from_source
from pyir.script import graph as R
from pyir.script import tensor as T

HEADER = "from pyir.script import ir as I, tensor as T, graph as R\n\n"
MARK = "# <-"


def parse_error(src):
    """Parse ``src`` (one line of it marked with ``# <-``); return the ParseError and the
    marked line number."""
    text = HEADER + textwrap.dedent(src)
    with pytest.raises(ParseError) as info:
        from_source(text, "model.py")
    marked = [i for i, line in enumerate(text.splitlines(), 1) if MARK in line]
    return info.value, marked[0]


def check(src, words, underlined):
    err, line = parse_error(src)
    assert (err.filename, err.line) == ("model.py", line)
    for w in words:
        assert w in err.message, err.message
    _, source, caret = str(err).splitlines()[:3]
    assert source.startswith(f"{line:>5} | ")
    assert source[caret.index("^"):caret.rindex("^") + 1] == underlined
    return err


def test_unknown_r_name():
    err = check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = R.frobnicate(x)  # <-
            return y
        """, ["unknown graph-level name R.frobnicate"], "R.frobnicate")
    assert "R.nn.softmax" in err.hint


def test_unknown_dtype():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float31")):  # <-
            return x
        """, ["unknown dtype 'float31'"], '"float31"')


def test_unknown_call_tir_callee_lists_prim_functions():
    err = check("""
        @I.ir_module
        class Module:
            @T.prim_func
            def relu(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
                for i in range(4):
                    with T.block("Y"):
                        vi = T.axis.spatial(4, i)
                        Y[vi] = T.max(X[vi], T.float32(0))

            @R.function
            def main(x: R.Tensor((4,), "float32")):
                y = R.call_tir(cls.rleu, (x,), out_sinfo=R.Tensor((4,), "float32"))  # <-
                return y
        """, ["unknown prim function 'rleu'", "relu"], "cls.rleu")
    assert "@T.prim_func" in err.hint


def test_call_tir_of_a_graph_function():
    check("""
        @I.ir_module
        class Module:
            @R.function
            def helper(x: R.Tensor((4,), "float32")):
                return x

            @R.function
            def main(x: R.Tensor((4,), "float32")):
                y = R.call_tir(Module.helper, (x,), out_sinfo=R.Tensor((4,), "float32"))  # <-
                return y
        """, ["'helper' is a graph function"], "Module.helper")


def test_call_packed_inside_dataflow():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.call_packed("log", x, sinfo_args=R.Tensor((4,), "float32"))  # <-
                R.output(y)
            return y
        """, ["R.call_packed may have effects", "not allowed inside a dataflow block"],
        'R.call_packed("log", x, sinfo_args=R.Tensor((4,), "float32"))')


def test_dataflow_variable_used_after_its_block():
    err = check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.exp(x)
                z = R.exp(y)
                R.output(z)
            return y  # <-
        """, ["'y' is a dataflow variable of the block at line 6"], "y")
    assert "R.output" in err.hint


def test_undefined_variable():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = R.add(x, xx)  # <-
            return y
        """, ["undefined variable 'xx'"], "xx")


def test_tuple_index_out_of_range():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            t = (x, x)
            return t[2]  # <-
        """, ["tuple index 2 is out of range", "2 field(s)"], "t[2]")


def test_indexing_a_tensor():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = x[0]  # <-
            return y
        """, ["cannot index", "it is not a tuple"], "x[0]")


def test_missing_out_sinfo():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = R.call_dps_packed("scale", (x,))  # <-
            return y
        """, ["R.call_dps_packed needs out_sinfo"], 'R.call_dps_packed("scale", (x,))')


def test_output_not_last():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.exp(x)
                R.output(y)  # <-
                z = R.exp(y)
            return y
        """, ["R.output(...) must be the last statement"], "R.output(y)")


def test_output_outside_dataflow():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            R.output(x)  # <-
            return x
        """, ["must be the last statement of a `with R.dataflow():` block"], "R.output(x)")


def test_output_of_an_unbound_name():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.exp(x)
                R.output(y, x)  # <-
            return y
        """, ["'x' is not bound in this dataflow block"], "x")


def test_reassignment_inside_dataflow():
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.exp(x)
                y = R.exp(y)  # <-
                R.output(y)
            return y
        """, ["'y' is already bound in this dataflow block (line 7)"], "y")


def test_broadcast_mismatch_names_both_shapes():
    check("""
        @R.function
        def f(x: R.Tensor(("n", 4), "float32"), w: R.Tensor(("n", 5), "float32")):
            y = R.add(x, w)  # <-
            return y
        """, ['R.Tensor((n, 4), "float32")', 'R.Tensor((n, 5), "float32")', "do not broadcast"],
        "R.add(x, w)")


@pytest.mark.parametrize("call, dtype, words", [
    ("R.divide(x, x)", "int32", ["R.divide needs float tensors", 'R.Tensor((n,), "int32")']),
    ("R.mean(x)", "int8", ["R.mean needs float tensors"]),
    ("R.add(x, x)", "bool", ["R.add is arithmetic and does not take bool tensors"]),
    ("R.nn.relu(x)", "bool", ["R.nn.relu is arithmetic and does not take bool tensors"]),
    ("R.sum(x)", "bool", ["R.sum is arithmetic", 'R.Tensor((n,), "bool")']),
    ("R.matmul(x, x)", "bool", ["R.matmul is arithmetic and does not take bool tensors"]),
])
def test_operator_on_a_dtype_it_does_not_compute_on(call, dtype, words):
    """Refused where it is written (its legalized prim function used to fail to parse,
    pointing at generated code)."""
    check(f"""
        @R.function
        def f(x: R.Tensor(("n",), "{dtype}")):
            y = {call}  # <-
            return y
        """, words, call)


def test_matmul_batch_mismatch_names_the_tensors_and_the_dimension():
    """The batch dimensions are compared, but the message speaks of the operands (it
    showed the batch parts alone, R.Tensor((p, q)), and their dimension -1)."""
    check("""
        @R.function
        def f(x: R.Tensor(("p", "q", "n", "k"), "float32"),
              w: R.Tensor(("r", "k", "m"), "float32")):
            y = R.matmul(x, w)  # <-
            return y
        """, ['the batch dimensions of R.Tensor((p, q, n, k), "float32") and '
              'R.Tensor((r, k, m), "float32") do not broadcast (dimension -3 differs: q and r)'],
        "R.matmul(x, w)")


@pytest.mark.parametrize("call", ["R.max(x, axis=1)", "R.min(x)"])
def test_max_or_min_over_an_axis_known_empty(call):
    """Refused where it is written (it built, and the call said "requires False")."""
    check(f"""
        @R.function
        def f(x: R.Tensor((3, 0), "float32")):
            y = {call}  # <-
            return y
        """, ['axis 1 of R.Tensor((3, 0), "float32") is empty, and an empty '
              f'{call[2:5]}imum has no value'], call)


def test_matmul_inner_dimension_mismatch():
    check("""
        @R.function
        def f(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(("m", "k"), "float32")):
            y = R.matmul(x, w)  # <-
            return y
        """, ["R.matmul: inner dimensions", 'R.Tensor((m, k), "float32")'], "R.matmul(x, w)")


def test_undefined_shape_variable_in_body():
    err = check("""
        @R.function
        def f(x: R.Tensor(("n",), "float32")):
            y = R.call_dps_packed("f", (x,), out_sinfo=R.Tensor((n, q), "float32"))  # <-
            return y
        """, ["undefined shape variable 'q'"], "q")
    assert "R.match_cast" in err.hint


def test_annotation_contradicting_the_value():
    check("""
        @R.function
        def f(x: R.Tensor(("n",), "float32")):
            y: R.Tensor((4,), "float32") = R.exp(x)  # <-
            return y
        """, ['annotation R.Tensor((4,), "float32") does not match', 'R.Tensor((n,), "float32")'],
        'R.Tensor((4,), "float32")')


def test_return_annotation_contradicting_the_body():
    check("""
        @R.function
        def f(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "int32"):  # <-
            return x
        """, ["does not match"], 'R.Tensor(("n",), "int32")')


def test_match_cast_that_can_never_succeed():
    check("""
        @R.function
        def f(x: R.Tensor(("n", "m"), "float32")):
            y = R.match_cast(x, R.Tensor(("k",), "float32"))  # <-
            return y
        """, ["R.match_cast can never succeed", 'R.Tensor((n, m), "float32")'],
        'R.match_cast(x, R.Tensor(("k",), "float32"))')


def test_missing_parameter_annotation():
    check("""
        @R.function
        def f(x):  # <-
            return x
        """, ["parameter 'x' needs a struct info annotation"], "x")


def test_shape_expression_cannot_call_python():
    check("""
        @R.function
        def f(x: R.Tensor((__import__("os").getpid(), 4), "float32")):  # <-
            return x
        """, ["not a valid shape expression"], '__import__("os").getpid()')


def test_error_in_a_decorated_function_points_into_this_file():
    with pytest.raises(ParseError) as info:
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = R.nn.softmax(x, axis=3)
            return y
    line = inspect.currentframe().f_lineno - 2
    err = info.value
    assert (err.filename, err.line) == (__file__, line)
    assert "R.nn.softmax: axis 3 is out of range" in err.message


@pytest.mark.parametrize("annotation, words", [
    ("T.Bufer((4,), 'float32')", r"T.Bufer is not a name of the T dialect; did you mean "
                                 r"T.Buffer\?"),
    ("R.Tensr((4,), 'float32')", r"R.Tensr is not a name of the R dialect; did you mean "
                                 r"R.Tensor\?"),
    ("T.scope", r"T.scope is not a name of the T dialect$"),
])
def test_a_name_the_dialect_does_not_have(annotation, words):
    """Python looks annotations up when it runs the def, before any parser: a misspelt one
    was a bare AttributeError of module pyir.script.tensor. It is still an AttributeError
    (hasattr works), and a pyir.Error."""
    from pyir.script.diagnostics import NotInDialect
    with pytest.raises(NotInDialect, match=words) as info:
        exec(f"def f(x: {annotation}): ...", {"T": T, "R": R})
    assert isinstance(info.value, AttributeError) and isinstance(info.value, Error)
    assert not hasattr(T, "Bufer")


def test_r_names_outside_a_function():
    with pytest.raises(Error, match="R.call_tir is only valid inside @R.function"):
        R.call_tir(None, (), out_sinfo=None)
    with pytest.raises(Error, match="R.nn.softmax is only valid inside @R.function"):
        R.nn.softmax(None)


@pytest.mark.parametrize("dim, words, underlined", [
    ("-4", "a dimension cannot be negative (-4)", "-4"),
    ("99999999999999999999999", "99999999999999999999999 does not fit in int64",
     "99999999999999999999999"),
    ('"4 // 0"', "this shape expression divides by zero", '"4 // 0"'),
])
def test_a_dimension_must_be_a_size(dim, words, underlined):
    """Accepted: -4 as T.Buffer refuses it; a literal past int64 wrapped; 4 // 0 was a raw
    ZeroDivisionError in the argument binder at the call."""
    check(f"""
        @R.function
        def f(x: R.Tensor(({dim},), "float32")):  # <-
            return x
        """, [words], underlined)


@pytest.mark.parametrize("args, words, underlined", [
    ("'a', \"int32\"", "R.prim_value(..., \"int32\") needs a number, not 'a'", "'a'"),
    ("300, \"int8\"", "300 does not fit in int8", "300"),
    ("1.5, \"int32\"", "1.5 is not a whole number, so it cannot be int32", "1.5"),
    ("2, \"bool\"", "2 does not fit in bool", "2"),
    ("1e300, \"float32\"", "1e+300 does not fit in float32", "1e300"),
    ("70000.0, \"float16\"", "70000.0 does not fit in float16", "70000.0"),
    ("1e300", "1e+300 does not fit in float32", "1e300"),
])
def test_a_typed_prim_value_must_be_a_value_of_its_dtype(args, words, underlined):
    """'a' was an internal error at line 0; 300 was stored as an int8 that does not parse
    back; 1.5 became 1; 2 became True, which did not round-trip; 1e300 as float32 and
    70000.0 as float16 were a silent infinity."""
    check(f"""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            v = R.prim_value({args})  # <-
            return x
        """, [words], underlined)


@pytest.mark.parametrize("annotation, words, underlined", [
    ("R.Shape(ndim='a')", "ndim must be a non-negative integer, not 'a'", "'a'"),
    ("R.Shape(ndim=-5)", "ndim must be a non-negative integer, not -5", "-5"),
    ("R.Shape([4], ndim=2)", "ndim=2 but the shape has 1 dimension(s)", "R.Shape([4], ndim=2)"),
])
def test_shape_ndim_is_checked_as_for_tensors(annotation, words, underlined):
    """R.Shape(ndim='a') printed as R.Shape(ndim=a), which did not parse back; ndim=2 with
    one value was dropped without a word."""
    check(f"""
        @R.function
        def f(s: {annotation}):  # <-
            return s
        """, [words], underlined)


def test_a_parameter_defined_twice():
    """Accepted (Python's compiler refuses it; ast.parse does not): the second x shadowed
    the first."""
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32"), x: R.Tensor((8,), "float32")):  # <-
            return x
        """, ["parameter 'x' is defined twice"], 'x: R.Tensor((8,), "float32")')


CALLEES = """
        @T.prim_func
        def add(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"),
                c: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("c"):
                    vi = T.axis.spatial(4, i)
                    c[vi] = a[vi] + b[vi]

        @T.prim_func
        def scale(x: T.Buffer(("n", 2), "float32"), s: T.float32,
                  y: T.Buffer(("n", 2), "float32")):
            for i, j in T.grid(n, 2):
                with T.block("y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    y[vi, vj] = x[vi, vj] * s
"""


@pytest.mark.parametrize("params, call, words", [
    ('x: R.Tensor((4,), "float32")',
     'R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4,), "float32"))',
     "graph function main, binding y: add takes 3 argument(s) (a, b, c) with its outputs, but "
     "the call passes 2"),
    ('x: R.Tensor((4,), "float32")',
     'R.call_tir(cls.add, ((x, x), x), out_sinfo=R.Tensor((4,), "float32"))',
     "add takes 3 argument(s) (a, b, c) with its outputs, but the call passes 4"),
    ('x: R.Tensor((4,), "int32")',
     'R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), "float32"))',
     "graph function main, binding y: add parameter 'a' expects float32 with 1 dimension(s), "
     'got R.Tensor((4,), "int32")'),
    ('x: R.Tensor((4, 1), "float32")',
     'R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), "float32"))',
     "add parameter 'a' expects float32 with 1 dimension(s), got "
     'R.Tensor((4, 1), "float32")'),
    ('x: R.Tensor(ndim=1, dtype="int32")',
     'R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), "float32"))',
     "add parameter 'a' expects float32 with 1 dimension(s), got "
     'R.Tensor((x_shape_0_,), "int32")'),
    ('x: R.Tensor((5,), "float32")',
     'R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), "float32"))',
     "add parameter 'a': dimension 0 must be 4, the value passed has 5 "
     '(R.Tensor((5,), "float32"))'),
    ('x: R.Tensor((4,), "float32")',
     'R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((8,), "float32"))',
     "add parameter 'c': dimension 0 must be 4, the value passed has 8"),
    ('x: R.Tensor((4,), "float32")',
     'R.call_tir(cls.add, (x, 1.5), out_sinfo=R.Tensor((4,), "float32"))',
     "add parameter 'b' is a buffer; the value passed is R.Prim(\"float32\"); the call "
     "passes its inputs, then its outputs, to the parameters (a, b, c) in this order"),
    ('x: R.Tensor(("m", 2), "float32")',
     'R.call_tir(cls.scale, (x, R.prim_value(2)), out_sinfo=R.Tensor((m, 2), "float32"))',
     "scale parameter 's' is a float32 scalar, got R.Prim(\"int64\")"),
    ('x: R.Tensor(("m", 2), "float32")',
     'R.call_tir(cls.scale, (x, 0.5), out_sinfo=R.Tensor((m, 3), "float32"))',
     "scale parameter 'y': dimension 1 must be 2, the value passed has 3"),
    ('x: R.Tensor(("m", 2), "float32")',
     'R.call_tir(cls.scale, (x, 0.5), out_sinfo=R.Tensor((m + 1, 2), "float32"))',
     "scale parameter 'y': dimension 0 must be m, the value passed has m + 1"),
])
def test_a_call_tir_that_does_not_fit_its_prim_function(params, call, words):
    """Reported only by pyir.build, without the line; the prim functions are defined below
    the graph function that calls them."""
    check(f"""
        @I.ir_module
        class Module:
            @R.function
            def main({params}):
                y = {call}  # <-
                return y
{textwrap.indent(CALLEES, "    ")}
        """, [words], call)


def test_a_call_tir_in_the_return_names_the_binding_return():
    check(f"""
        @I.ir_module
        class Module:
{textwrap.indent(CALLEES, "    ")}
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                return R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4,), "float32"))  # <-
        """, ["graph function main, binding return: add takes 3 argument(s)"],
        'R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4,), "float32"))')


def test_what_only_the_build_knows_is_left_to_it():
    """A tensor of unknown shape may fit (a parameter's dimensions are read at the call),
    and a call_packed result is an object until it is cast: the parser says nothing."""
    pyir.ffi.register_func("test.anything", lambda x: x, override=True)
    mod = from_source(HEADER + textwrap.dedent(f"""
        @I.ir_module
        class Module:
{textwrap.indent(CALLEES, "    ")}
            @R.function
            def main(x: R.Tensor(ndim=1, dtype="float32")):
                o = R.call_packed("test.anything", x)
                y = R.call_tir(cls.add, (x, o), out_sinfo=R.Tensor((4,), "float32"))
                z = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), "float32"))
                return (y, z)
        """))
    with pytest.raises(Error, match="graph function main, binding y: add parameter 'b' is a "
                                    "buffer; the value passed is R.Object"):
        pyir.build(mod)


def test_a_float_argument_past_float32_is_refused():
    """R.call_packed("f", x, 1e300) passed a float32 infinity."""
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = R.call_packed("demo.f", x, 1e300, sinfo_args=R.Object)  # <-
            return y
        """, ["1e+300 does not fit in float32"], "1e300")


def test_an_operator_given_double_star_kwargs():
    """R.add(x, **attrs) said "attribute None must be a constant"."""
    check("""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = R.add(x, **x)  # <-
            return y
        """, ["R.add does not take **kwargs"], "R.add(x, **x)")


@pytest.mark.parametrize("call, words, underlined", [
    ("R.add(x, y=x)", ["R.add has no attribute 'y' (its attributes: none); its 2 operand(s) "
                       "are passed by position"], "y=x"),
    ("R.add(x, y=1)", ["R.add has no attribute 'y'", "2 operand(s)"], "y=1"),
    ("R.nn.relu(data=x)", ["R.nn.relu has no attribute 'data' (its attributes: none); its 1 "
                           "operand(s) are passed by position"], "data=x"),
    ("R.sum(x, dim=0)", ["R.sum has no attribute 'dim' (its attributes: axis, keepdims)"],
     "dim=0"),
])
def test_an_operand_given_by_keyword_is_not_an_attribute(call, words, underlined):
    """R.add(x, y=x) said "attribute y must be a constant", R.add(x, y=1) that R.add "got 1"
    argument, R.nn.relu(data=x) "attribute data must be a constant"."""
    check(f"""
        @R.function
        def f(x: R.Tensor((4,), "float32")):
            y = {call}  # <-
            return y
        """, words, underlined)
