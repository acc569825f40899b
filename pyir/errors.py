"""The error classes every deliberate failure in pyir raises, and `with_article` and
`kind_of` for their messages."""


class Error(Exception):
    """Base class of every error pyir raises on purpose."""


class ArgumentTypeError(Error, TypeError):
    """A value of the wrong kind was passed (wrong Python type, dtype, rank)."""


class ArgumentValueError(Error, ValueError):
    """A value of the right kind but an unacceptable value (shape, alignment, range)."""


class IRError(Error, ValueError):
    """Ill-formed IR: raised by node constructors and by `pyir.ir.verify`."""


class MissingNameError(Error, KeyError):
    """A name that is not there: a function a module, an executable or the ffi registry does
    not hold (a KeyError, as for a dict; its text is the message, unquoted)."""

    def __str__(self):
        return Exception.__str__(self)


#: What a RecursionError while reading, printing, scheduling or compiling a function means
#: (sequences of statements, however long, are followed in loops).
TOO_DEEP = ("an expression in it, or its loops, ifs and blocks inside one another, nest "
            "deeper than Python's recursion limit")


def with_article(name):
    """``name`` with its article, for messages: "an int", "a str", "an IfThenElse"."""
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def kind_of(value):
    """``value``'s type with its article (`with_article`)."""
    return with_article(type(value).__name__)
