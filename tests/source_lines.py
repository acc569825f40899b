"""Where a test's own source lines are: for checking that an error points at the line of a
decorated function written inside a test."""

import inspect


def line_in(func, needle):
    """The file line of the first line holding ``needle`` in the source of ``func`` (a test
    function)."""
    lines, start = inspect.getsourcelines(func)
    return start + next(k for k, line in enumerate(lines) if needle in line)
