"""Parse errors of the tensor-level dialect: each names the file and line, shows the source
line with a caret under the mistake, and says what was expected."""

import textwrap

import pytest

from pyir.script import ParseError, from_source
from pyir.script import tensor as T

from source_lines import line_in

HEADER = "from pyir.script import tensor as T\n\n\n"


def text_error(body):
    """The ParseError of ``from_source`` on a prim function ``f`` whose body is ``body``,
    and the text it parsed."""
    text = HEADER + "@T.prim_func\n" + textwrap.dedent(body).lstrip("\n")
    with pytest.raises(ParseError) as info:
        from_source(text)
    return info.value, text


def line_of(text, needle):
    lines = [k for k, line in enumerate(text.splitlines(), 1) if needle in line]
    assert lines, f"{needle!r} is not in the text"
    return lines[0]


def check(err, text, needle, *words, filename="<string>"):
    """``err`` points at the first line of ``text`` holding ``needle``, with a caret, and
    its message holds ``words``."""
    assert err.filename == filename
    assert err.line == line_of(text, needle)
    shown = str(err)
    for word in words:
        assert word in shown, f"{word!r} missing from:\n{shown}"
    source_line, caret_line = shown.splitlines()[1:3]
    assert needle.strip() in source_line
    assert caret_line.strip() and set(caret_line.strip()) == {"^"}
    assert shown.startswith(f"{filename}:{err.line}:")


# ---------------------------------------------------------------- decorated functions
def test_undefined_variable_in_decorated_function():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = A[i] * scale_factor  # noqa: F821
    err = info.value
    assert err.filename == __file__
    assert err.line == line_in(test_undefined_variable_in_decorated_function,
                                      "* scale_factor")
    assert "undefined variable 'scale_factor'" in str(err)
    assert "a plain constant (number, string, tuple) from the enclosing Python scope" in str(err)
    assert "A[i] = A[i] * scale_factor" in str(err).splitlines()[1]


def test_non_plain_python_object_in_decorated_function():
    helper = [object()]
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = helper
    err = info.value
    assert err.line == line_in(test_non_plain_python_object_in_decorated_function,
                                      "A[i] = helper")
    assert "helper is a list from the Python scope" in str(err)
    assert "only plain constants" in str(err)


def test_python_function_is_never_called_from_decorated_function():
    calls = []

    def side_effect():
        calls.append(1)
        return 4

    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(side_effect()):
                A[i] = 0.0
    assert calls == []
    assert info.value.line == line_in(
        test_python_function_is_never_called_from_decorated_function, "range(side_effect())")
    assert "only T.* builtins can be called" in str(info.value)


# ---------------------------------------------------------------- from_source text
def test_wrong_remap_kinds_length():
    err, text = text_error("""
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi, vj = T.axis.remap("SSS", [i, j])
                    A[vi, vj] = 0.0
    """)
    check(err, text, "T.axis.remap(", "kinds 'SSS' has 3 letter(s) but 2 iterator(s)",
          "one letter S or R per iterator")


def test_wrong_remap_kinds_letter():
    err, text = text_error("""
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi, vj = T.axis.remap("SX", [i, j])
                    A[vi, vj] = 0.0
    """)
    check(err, text, "T.axis.remap(", "contains 'X'", "only 'S' (spatial) and 'R' (reduce)")


def test_remap_of_a_non_loop_variable():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.remap("S", [i + 1])
                    A[vi] = 0.0
    """)
    check(err, text, "T.axis.remap(", "binds block iterators to loop variables",
          "T.axis.spatial(extent, binding)")


def test_unknown_t_name():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.maximum(A[i], 0.0)
    """)
    check(err, text, "T.maximum", "unknown name T.maximum; did you mean T.max?")


def test_unknown_t_name_in_loop():
    err, text = text_error("""
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.gird(4, 4):
                A[i, j] = 0.0
    """)
    check(err, text, "T.gird", "unknown name T.gird; did you mean T.grid?")


def test_unknown_dtype():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float31")):
            T.evaluate(0)
    """)
    check(err, text, "float31", "unknown dtype 'float31'; did you mean 'float32'?", "int64")


def test_assignment_to_attribute():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            A.x = 1
    """)
    check(err, text, "A.x = 1", "only buffer elements (A[i] = value) and scalar names")


def test_assignment_to_element_of_scalar():
    err, text = text_error("""
        def f(A: T.Buffer(("n",), "float32"), n: T.int64):
            n[0] = 1
    """)
    check(err, text, "n[0] = 1", "cannot assign to an element: n is a scalar (int64), not a "
                                 "buffer")


def test_wrong_number_of_grid_loop_variables():
    err, text = text_error("""
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4, 4):
                A[i, j] = 0.0
    """)
    check(err, text, "T.grid(4, 4, 4)", "T.grid has 3 extent(s) but 2 loop variable(s)")


def test_wrong_rank_indexing():
    err, text = text_error("""
        def f(A: T.Buffer((4, 4), "float32")):
            for i in range(4):
                A[i] = 0.0
    """)
    check(err, text, "A[i] = 0.0", "buffer A has 2 dimension(s) but is indexed with 1",
          "A[i0, i1]")


def test_dtype_mismatch_suggests_cast():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
            for i in range(4):
                A[i] = A[i] + B[i]
    """)
    check(err, text, "A[i] + B[i]", "dtype mismatch: the operands are float32 and int32",
          "T.cast(x, \"float32\")")


def test_store_of_wrong_dtype():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float64")):
            for i in range(4):
                A[i] = B[i]
    """)
    check(err, text, "A[i] = B[i]", "storing a float64 value into float32 buffer A",
          "T.cast(value, \"float32\")")


def test_non_int64_index():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            A[T.int32(1)] = 0.0
    """)
    check(err, text, "A[T.int32(1)]", "index 0 of A must be int64, but this expression is int32")


def test_return_in_prim_function():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            return A
    """)
    check(err, text, "return A", "a prim function does not return a value", "C[i] = value")


def test_while_loop():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            while True:
                A[0] = 1.0
    """)
    check(err, text, "while True", "a while loop is not supported in tensor-level (T) code")


def test_init_outside_block():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.init():
                    A[i] = 0.0
    """)
    check(err, text, "with T.init()", "T.init() is only valid directly inside a with T.block")


def test_axis_outside_block():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                vi = T.axis.spatial(4, i)
                A[vi] = 0.0
    """)
    check(err, text, "T.axis.spatial(4, i)",
          "T.axis.spatial is only valid directly inside a with T.block")


def test_calling_a_non_t_function():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = float(i)
    """)
    check(err, text, "float(i)", "only T.* builtins can be called in a prim function")


def test_duplicate_block_iterator():
    err, text = text_error("""
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    vi = T.axis.spatial(4, j)
                    A[vi, vi] = 0.0
    """)
    check(err, text, "vi = T.axis.spatial(4, j)", "block 'A' declares iterator 'vi' twice")


def test_where_with_block_iterator():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    T.where(vi < 3)
                    A[vi] = 0.0
    """)
    check(err, text, "T.where(vi < 3)", "T.where uses block iterator vi", "loop variables only")


def test_float_literal_into_int_buffer():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "int32")):
            for i in range(4):
                A[i] = 0.5
    """)
    check(err, text, "A[i] = 0.5", "the float literal 0.5 cannot be used as int32")


def test_true_division_of_integers():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "int64")):
            for i in range(4):
                A[i] = i / 2
    """)
    check(err, text, "i / 2", "'/' is true division and needs float operands, not int64",
          "// for floor division")


def test_if_condition_must_be_bool():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                if i:
                    A[i] = 0.0
    """)
    check(err, text, "if i:", "an if condition must be bool, not int64")


def test_unmatched_handle():
    err, text = text_error("""
        def f(a: T.handle):
            T.evaluate(0)
    """)
    check(err, text, "def f(a: T.handle)", "handle 'a' is never matched to a buffer")


def test_shape_variable_bound_by_no_parameter():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            n = T.int64()
            for i in range(n):
                A[0] = 0.0
    """)
    check(err, text, "n = T.int64()", "shape variable n is used in the body but appears in no "
                                      "parameter's shape")


def test_reassigning_a_loop_variable():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                i = i + 1
                A[0] = 0.0
    """)
    check(err, text, "i = i + 1", "i is a loop variable, block iterator, parameter or shape "
                                  "variable and cannot be reassigned")


@pytest.mark.parametrize("body, line", [
    ("""
            s = T.float32(0)
            for i in range(4):
                s = s + A[i]
            A[0] = s""", "s = s + A[i]"),
    ("""
            for i in range(4):
                x = A[i]
                if x > 1.5:
                    x = x * 10.0
                A[i] = x""", "x = x * 10.0"),
])
def test_a_scalar_of_an_enclosing_scope_is_not_reassigned(body, line):
    """A scalar given a new value in a loop or an if kept the old one after it: the sum over
    a loop was 0, the clipped values were not clipped. Python would have updated it."""
    err, text = text_error(f"""
        def f(A: T.Buffer((4,), "float32")):{body}
    """)
    name = line[0]
    check(err, text, line, f"{name} is a scalar bound outside this loop, if or block; a scalar "
                           "is a value, not a variable, and one given here would be lost where "
                           "the body ends",
          f'a buffer for a value that changes: {name}_acc = T.alloc_buffer((1,), "float32") and '
          f"{name}_acc[0] = ...")


def test_statement_call_used_as_expression():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.reads(A[i])
    """)
    check(err, text, "T.reads(A[i])", "T.reads cannot be used here",
          "as a statement directly inside a with T.block")


def test_unused_expression_value():
    err, text = text_error("""
        def f(A: T.Buffer((4,), "float32")):
            T.max(A[0], A[1])
    """)
    check(err, text, "T.max(A[0], A[1])", "the value of T.max(...) is not used", "T.evaluate")


def test_unmatched_handle_used_as_value():
    err, text = text_error("""
        def f(a: T.handle, B: T.Buffer((4,), "float32")):
            B[0] = a
    """)
    check(err, text, "B[0] = a", "a is a T.handle; it has no value until it is matched",
          "T.match_buffer(a, shape, dtype)")


def test_block_name_used_twice():
    err, text = text_error('''
        def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    A[vi] = A[vi] * T.float32(2)
            for i in range(8):
                with T.block("B"):   # second
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] + T.float32(1)
        ''')
    check(err, text, 'with T.block("B"):   # second',
          f'block name "B" is already used at line {line_of(text, "with T.block")} of prim '
          "function f", "found by name (sch.get_block)")


def test_caret_after_non_ascii_names():
    """ast counts columns in UTF-8 bytes: the caret was one place right per Ä."""
    err, text = text_error('''
        def f(Ä: T.Buffer((8,), "float32")):
            for i in range(8):
                Ä[i] = Ä[i] + Ä[i] + T.bogus(1.0)
        ''')
    check(err, text, "T.bogus(1.0)", "unknown name T.bogus")
    source, caret = str(err).splitlines()[1:3]
    assert source[caret.index("^"):caret.rindex("^") + 1] == "T.bogus"


@pytest.mark.parametrize("dtype, literal", [("int8", "300"), ("uint8", "-1"),
                                            ("int64", "9223372036854775808")])
def test_an_integer_literal_must_fit_its_dtype(dtype, literal):
    """Stored as written, 300 printed as T.int8(300), which does not parse back; 2**63 into
    int64 wrapped to -2**63."""
    err, text = text_error(f'''
        def f(A: T.Buffer((4,), "{dtype}")):
            A[0] = {literal}
        ''')
    check(err, text, f"A[0] = {literal}", f"{literal} does not fit in {dtype}")


def test_an_integer_literal_too_large_for_a_float():
    big = "1" * 400
    err, text = text_error(f'''
        def f(A: T.Buffer((4,), "float32")):
            A[0] = {big}
        ''')
    check(err, text, f"A[0] = {big[:20]}", f"{big} does not fit in float32")


@pytest.mark.parametrize("dim", ['"n // 0"', '"n % 0"'])
def test_a_shape_entry_may_not_divide_by_zero(dim):
    """The argument binder computed the shape in Python: a raw ZeroDivisionError at the
    call."""
    err, text = text_error(f'''
        def f(A: T.Buffer(("n", {dim}), "float32")):
            A[0, 0] = T.float32(1)
        ''')
    check(err, text, "def f(", "this shape entry divides by zero")


def test_too_deep_an_expression_points_at_its_line():
    """The error was at line 0 without the source line: the spans were gone by then."""
    err, text = text_error('''
        def f(B: T.Buffer((4,), "float32"), x: T.float32):
            B[0] = T.float32(1)
            B[1] = ''' + " + ".join(["x"] * 2000) + '''
        ''')
    check(err, text, "B[1] = x + x", "this is nested too deeply for the parser")


@pytest.mark.parametrize("text, words, line", [
    (None, "pyir.script.from_source expects the text of a Python module (a str), got NoneType",
     None),
    ("x = 1\ny = '\udcff'\n", "<string>:2:6: character '\\udcff' is not valid Unicode text", 2),
    (HEADER + "x = " + " + ".join(["1"] * 5000) + "\n",
     "the text is nested too deeply for Python's own parser", 4),
])
def test_text_python_cannot_read_is_a_clear_error(text, words, line):
    """Each escaped from_source as a raw TypeError, UnicodeEncodeError or RecursionError."""
    import pyir
    with pytest.raises(pyir.Error) as info:
        from_source(text)
    assert words in str(info.value)
    assert getattr(info.value, "line", None) == line


def test_a_form_feed_does_not_end_a_line():
    """str.splitlines ended lines at the form feed, so the line shown was the one before."""
    text = HEADER + textwrap.dedent('''
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            # page\x0cbreak
            A[0] = T.float32(1)
            A[1] = T.bogus
        ''').lstrip("\n")
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert info.value.line == text.split("\n").index("    A[1] = T.bogus") + 1
    assert str(info.value).splitlines()[1].endswith("| A[1] = T.bogus")


def test_an_annotation_value_must_be_finite():
    """An infinite annotation value printed as a bare name that does not parse back."""
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4, annotations={"a": INFINITY}):
                A[i] = T.float32(1)
    err = info.value
    assert err.line == line_in(test_an_annotation_value_must_be_finite, "annotations=")
    assert "the annotation value inf is not finite" in err.message


INFINITY = float("inf")


@pytest.mark.parametrize("written", ["1e400", "-1e400", "T.float32(1e400)", "T.max(A[i], 1e400)"])
def test_a_float_literal_beyond_the_largest_float_is_refused(written):
    """Python reads 1e400 as inf, which was stored without a word (1e300 in float32 is
    refused as too large): the literal is named, and the way to write infinity."""
    err, text = text_error(f'''
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = {written}
        ''')
    check(err, text, "1e400", "the literal 1e400 is beyond the largest float (Python reads it "
          "as infinity)", 'T.float32("inf") for infinity')
    assert err.col == text.splitlines()[err.line - 1].index("1e400")


def test_a_prim_function_in_a_plain_class_is_parsed_at_once():
    """Only an @I.ir_module class parses its functions as a whole: in any other class they
    were left Python functions, their mistakes never reported."""
    class Kernels:
        @T.prim_func
        def fine(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

    from pyir.ir import PrimFunc
    assert isinstance(Kernels.fine, PrimFunc)
    with pytest.raises(ParseError) as info:
        class Broken:
            @T.prim_func
            def wrong(A: T.Buffer((4,), "float32")):
                A[0] = T.bogus
    assert info.value.filename == __file__
    assert info.value.line == line_in(
        test_a_prim_function_in_a_plain_class_is_parsed_at_once, "A[0] = T.bogus")


@pytest.mark.parametrize("body, needle", [
    ('''
     def f(A: T.Buffer((4,), "float32")):
         T.func_attr({"a": 1, "a": 2})
         A[0] = 1.0
     ''', '"a": 2'),
    ('''
     def f(A: T.Buffer((4,), "float32")):
         T.func_attr({"a": 1})
         T.func_attr({"a": 2})
         A[0] = 1.0
     ''', '{"a": 2}'),
    ('''
     def f(A: T.Buffer((4,), "float32")):
         for i in T.serial(4, annotations={"u": 1, "u": 2}):
             A[i] = 1.0
     ''', '"u": 2'),
    ('''
     def f(A: T.Buffer((4,), "float32")):
         for i in range(4):
             with T.block("A"):
                 vi = T.axis.remap("S", [i])
                 T.block_attr({"k": 1})
                 T.block_attr({"k": 2})
                 A[vi] = 1.0
     ''', '{"k": 2}'),
])
def test_an_attribute_key_given_twice(body, needle):
    """A repeated key in T.func_attr / T.block_attr / loop annotations was kept twice (two
    values for one key, where sch.annotate replaces a key's value)."""
    err, text = text_error(body)
    check(err, text, needle, "is given twice")


@pytest.mark.parametrize("value, needle, words", [
    ("T.float32(1e300)", "1e300", "1e+300 does not fit in float32"),
    ("A[0] + 1e300", "1e300", "1e+300 does not fit in float32"),
    ("A[0] + 1000000000000000000000000000000000000000", "1000000000000000000000000000000000000000",
     "1e+39 does not fit in float32"),
    ("T.cast(T.float16(70000.0), \"float32\")", "70000.0", "70000.0 does not fit in float16"),
])
def test_a_float_literal_past_its_dtype(value, needle, words):
    """A float literal too large for its dtype was a silent infinity (T.float32(1e300) ran
    as inf), where an integer literal too large for its dtype is refused."""
    err, text = text_error(f'''
        def f(A: T.Buffer((1,), "float32")):
            A[0] = {value}
        ''')
    check(err, text, needle, words)
    assert str(err).splitlines()[2].strip() == "^" * len(needle)


def test_a_builtin_given_a_keyword_says_so():
    """T.exp(x=1.0) said "T.exp takes 1 argument(s), got 1"."""
    err, text = text_error('''
        def f(A: T.Buffer((1,), "float32")):
            A[0] = T.exp(x=1.0)
        ''')
    check(err, text, "T.exp(x=1.0)", "T.exp takes 1 positional argument(s) and no keywords")


# ---------------------------------------------------------------- declared block regions
@pytest.mark.parametrize("reads, writes, needle, words", [
    ("T.reads(A[0])", "T.writes(A[vi])", "T.reads(A[0])",         # the body reads A[vi]
     ("block 'B' reads A[vi]", "T.reads declares only A[0]")),
    ("T.reads(A[vi])", "T.writes(A[vi])", "T.writes(A[vi])",
     ("block 'B' writes B[vi]", "T.writes does not list B")),
    ("T.reads(B[vi])", "T.writes(B[vi])", "T.reads(B[vi])",
     ("block 'B' reads A[vi]", "T.reads does not list A")),
])
def test_declared_regions_must_cover_the_body(reads, writes, needle, words):
    err, text = text_error(f"""
        def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    {reads}
                    {writes}
                    B[vi] = A[vi] + T.float32(1.0)
    """)
    check(err, text, needle, *words)


def test_declared_region_too_small_with_a_symbolic_extent():
    err, text = text_error("""
        def f(A: T.Buffer(("m", "n"), "float32"), B: T.Buffer(("m",), "float32")):
            for i in range(m):
                with T.block("B"):
                    vi = T.axis.spatial(m, i)
                    T.reads(A[vi, 0:n - 1], B[vi])
                    T.writes(B[vi])
                    B[vi] = T.float32(0)
                    for k in range(n):
                        B[vi] = B[vi] + A[vi, k]
    """)
    check(err, text, "T.reads(A[vi, 0:n - 1], B[vi])", "block 'B' reads A[vi, 0:n]",
          "T.reads declares only A[vi, 0:n - 1]")


ROW_SUM = """
from pyir.script import tensor as T


@T.prim_func
def f(A: T.Buffer(("m", 16), "float32"), B: T.Buffer(("m",), "float32")):
    for i in range(m):
        with T.block("B"):
            vi = T.axis.spatial(m, i)
            T.reads(READS)
            T.writes(B[vi])
            B[vi] = T.float32(0)
            for k in range(16):
                B[vi] = B[vi] + A[vi, k]
"""


@pytest.mark.parametrize("reads", ["A[vi, 0:16], B[vi]", "A[vi, 0:16], B[vi], A[vi, 0:16]",
                                   "A[0:m, 0:16], B[0:m]", "B[vi], A[vi, 0:8], A[vi, 8:16]"])
def test_declared_regions_that_cover_build_and_run(reads):
    import numpy as np

    import pyir
    func = from_source(ROW_SUM.replace("READS", reads))
    a = np.random.rand(5, 16).astype("float32")
    b = np.zeros(5, "float32")
    pyir.build(func)["f"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_over_declared_regions_are_legal():
    func = from_source(ROW_SUM.replace("READS", "A[0:m, 0:16], B[vi], B[0:m]").replace(
        "T.writes(B[vi])", "T.writes(B[0:m], A[vi, 0])"))
    assert [r.buffer.name for r in func.body.body.block.reads] == ["A", "B", "B"]


SCALE = """
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(({shape}, 16), "float32"), B: T.Buffer(({shape}, 16), "float32")):
    for i, j in T.grid({extent}, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


@pytest.mark.parametrize("blockize_first", [False, True])
@pytest.mark.parametrize("shape, extent", [("20", "20"), ('"n"', "n")])
def test_printed_schedule_with_predicated_tails_reparses(shape, extent, blockize_first):
    """j split by 3 has a tail: the outer block of blockize declares A[vi_o, 0:16] (or
    A[vi, vj_0 * 3:vj_0 * 3 + 3]) while its body, the predicate ignored, reaches past it."""
    from pyir.ir import assert_structural_equal
    from pyir.schedule import Schedule
    func = from_source(SCALE.format(shape=shape, extent=extent))
    sch = Schedule(func)
    i, j = sch.get_loops(sch.get_block("B"))
    if blockize_first:
        sch.blockize(i)
        _, j = sch.get_loops(sch.get_block("B"))
        sch.split(j, factors=[None, 3])
    else:
        _, inner = sch.split(j, factors=[None, 3])
        sch.blockize(inner)
    text = sch.mod.script()
    assert "T.where" in text
    assert_structural_equal(from_source(text), sch.mod)


def test_an_output_passed_by_pointer_to_an_extern_kernel_is_declared_in_writes_only():
    func = from_source(HEADER + textwrap.dedent("""
        @T.prim_func
        def f(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    T.reads(A[vi, 0:4])
                    T.writes(B[vi, 0:4])
                    T.call_extern("copy4", A[vi, 0], B[vi, 0], dtype="void")
    """))
    assert [r.buffer.name for r in func.body.body.block.reads] == ["A"]
