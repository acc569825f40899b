"""ParseError: a mistake in a decorated function, shown at the user's own line; and
`NotInDialect`, for a dialect name that does not exist (which Python itself looks up when it
evaluates a ``def``'s annotations, before any parser runs)."""

import difflib

from pyir.errors import Error


class NotInDialect(Error, AttributeError):
    """``T.scope``: a name the dialect module does not have."""


def dialect_getattr(prefix, namespace):
    """A module ``__getattr__`` for the dialect module ``prefix`` ("T") whose globals are
    ``namespace``: a missing public name is a `NotInDialect` that suggests a close one."""
    def __getattr__(name):
        if name.startswith("_"):
            raise AttributeError(name)
        public = [n for n in namespace if not n.startswith("_")]
        close = difflib.get_close_matches(name, public, n=1)
        raise NotInDialect(f"{prefix}.{name} is not a name of the {prefix} dialect"
                           + (f"; did you mean {prefix}.{close[0]}?" if close else ""))
    return __getattr__


class ParseError(Error):
    """A mistake in script text, with the file, line and column it points at.

    ``str(err)`` is the whole diagnostic: location, message, the source line with a caret
    under the offending part, and what was expected.
    """

    def __init__(self, message, filename="<unknown>", line=0, col=0, end_col=None,
                 source_line=None, hint=None):
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.end_col = end_col
        self.source_line = source_line
        self.hint = hint
        super().__init__(self._format())

    def _format(self):
        out = [f"{self.filename}:{self.line}:{self.col + 1}: {self.message}"]
        if self.source_line is not None:
            text = self.source_line.rstrip("\n")
            stripped = text.lstrip()
            indent = len(text) - len(stripped)
            end = self.end_col if self.end_col and self.end_col > self.col else self.col + 1
            end = min(end, len(text)) if len(text) > self.col else self.col + 1
            gutter = f"{self.line:>5} | "
            out.append(gutter + stripped)
            out.append(" " * (len(gutter) + self.col - indent) + "^" * max(1, end - self.col))
        if self.hint:
            out.append(f"expected: {self.hint}")
        return "\n".join(out)

    def __str__(self):
        return self._format()
