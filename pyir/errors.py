"""The error classes every deliberate failure in pyir raises."""


class Error(Exception):
    """Base class of every error pyir raises on purpose."""


class ArgumentTypeError(Error, TypeError):
    """A value of the wrong kind was passed (wrong Python type, dtype, rank)."""


class ArgumentValueError(Error, ValueError):
    """A value of the right kind but an unacceptable value (shape, alignment, range)."""


class IRError(Error, ValueError):
    """Ill-formed IR: raised by node constructors and by `pyir.ir.verify`."""
