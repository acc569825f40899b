"""The parser's machinery: a dispatch table on (dialect, ast node type), source spans
around every visit, lexical scopes, and conversion of every failure into a ParseError that
points at the user's line.

Dialect modules (`tensor`, `graph`, `module`) register handlers with `@register(dialect,
ast_type)`; a handler is ``handler(parser, node)`` and returns the node's meaning (an IR
node, a Python constant, or for statements whatever its dialect collects).
"""

import ast
import contextlib

from pyir.errors import Error

from ..diagnostics import ParseError
from .source import DIALECT_NAMES

_TABLE = {}


def register(dialect, *node_types):
    """Decorator: handle ``node_types`` of the Python AST in ``dialect``."""
    def deco(fn):
        for t in node_types:
            _TABLE[(dialect, t)] = fn
        return fn
    return deco


class Scopes:
    """A stack of name -> value frames."""

    def __init__(self):
        self.frames = [{}]

    @contextlib.contextmanager
    def frame(self):
        self.frames.append({})
        try:
            yield self.frames[-1]
        finally:
            self.frames.pop()

    def define(self, name, value):
        self.frames[-1][name] = value

    def lookup(self, name):
        for frame in reversed(self.frames):
            if name in frame:
                return True, frame[name]
        return False, None


class Parser:
    """Walks one definition. ``python`` is the PythonScope for plain constants; ``aliases``
    maps local names to dialects ("I", "T", "R"); ``others`` maps names that are no dialect
    to the ``(module, line)`` of the import that binds them, or None when nothing does
    (text parsed by `from_source`: such a name used as a dialect is an error)."""

    def __init__(self, source, python, aliases, others=None):
        self.source = source
        self.python = python
        self.aliases = aliases
        self.others = others or {}
        self.scopes = Scopes()
        self.spans = []
        self.state = {}
        self.too_deep = None   # the innermost node a RecursionError passed (see `span`)

    # ------------------------------------------------------------------ dispatch
    def visit(self, node, dialect):
        handler = _TABLE.get((dialect, type(node)))
        with self.span(node):
            if handler is None:
                self.error(node, f"{_describe(node)} is not supported in "
                                 f"{_DIALECT_NAMES.get(dialect, dialect)} code",
                           _EXPECTED.get(dialect))
            return handler(self, node)

    @contextlib.contextmanager
    def span(self, node):
        """Inside, ``node`` is the current location; an IR error raised within (a dtype
        mismatch, a bad index) becomes a ParseError pointing at the innermost span."""
        self.spans.append(node)
        try:
            yield
        except ParseError:
            raise
        except Error as e:
            raise self.make_error(None, str(e)) from None
        except RecursionError:
            # Too close to the limit to build an error here: remember where it happened.
            if self.too_deep is None and hasattr(node, "lineno"):
                self.too_deep = node
            raise
        finally:
            self.spans.pop()

    # ------------------------------------------------------------------ errors
    def error(self, node, message, hint=None):
        """Raise a ParseError at ``node`` (an ast node, or None for the current span)."""
        raise self.make_error(node, message, hint)

    def make_error(self, node, message, hint=None):
        node = node if node is not None and hasattr(node, "lineno") else self._current()
        if node is None:
            return ParseError(message, self.source.filename, 0, 0, hint=hint)
        line = self.source.line(node.lineno)
        end_col = node.end_col_offset if node.end_lineno == node.lineno else None
        return ParseError(message, self.source.filename, node.lineno,
                          _characters(line, node.col_offset), _characters(line, end_col),
                          line, hint)

    def _current(self):
        for node in reversed(self.spans):
            if hasattr(node, "lineno"):
                return node
        return None

    # ------------------------------------------------------------------ names
    def dialect_of(self, node):
        """For ``T.grid`` / ``R.nn.softmax`` style names: (dialect, "grid" | "nn.softmax"),
        else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not parts:
            return None
        parts.reverse()
        dialect = self.aliases.get(node.id)
        if dialect is None:
            for k in range(1, len(parts)):   # pyir.script.tensor.grid
                dialect = self.aliases.get(".".join([node.id] + parts[:k]))
                if dialect is not None:
                    return dialect, ".".join(parts[k:])
            if node.id in self.others and not self.scopes.lookup(node.id)[0]:
                self.not_a_dialect(node)
            return None
        return dialect, ".".join(parts)

    def not_a_dialect(self, node):
        """Raise: the name ``node`` is used as a dialect, but the text imports it as another
        module, or not at all."""
        name = node.id
        bound = self.others[name]
        module = DIALECT_NAMES.get(name, "ir, tensor or graph")
        what = (f"{name} is not imported" if bound is None else
                f"{name} is {bound[0]} (imported at line {bound[1]}), not a pyir.script dialect")
        dotted = [k for k in self.aliases if k.startswith(name + ".")]
        if dotted:   # import pyir, and pyir.script.tensr.grid
            through = f"{', '.join(dotted[:-1])} or {dotted[-1]}"
            self.error(node, f"{what}: a dialect is named by an import of pyir.script.ir, "
                             f"pyir.script.tensor or pyir.script.graph, or through {name} as "
                             f"{through}", through)
        self.error(node, f"{what}: a dialect is named by an import of pyir.script.ir, "
                         "pyir.script.tensor or pyir.script.graph",
                   f"from pyir.script import {module} as {name}")


_DIALECT_NAMES = {"T": "tensor-level (T)", "R": "graph-level (R)", "I": "module (I)",
                  "Texpr": "tensor-level (T) expression", "Rexpr": "graph-level (R) expression"}
_EXPECTED = {
    "T": "for loops, with T.block / T.init, buffer stores, scalar assignments, if/else, "
         "T.evaluate",
    "R": "assignments, with R.dataflow(), R.output, return",
    "Texpr": "arithmetic, comparisons, buffer loads, T.* calls, variables and constants",
    "Rexpr": "R.* calls, tuples, variables",
    "I": "@T.prim_func and @R.function definitions",
}


def _describe(node):
    names = {
        ast.While: "a while loop", ast.Try: "try/except", ast.Lambda: "a lambda",
        ast.ListComp: "a list comprehension", ast.Return: "return",
        ast.FunctionDef: "a nested function", ast.ClassDef: "a class", ast.Import: "import",
        ast.ImportFrom: "import", ast.Global: "global", ast.Delete: "del",
        ast.AugAssign: "augmented assignment", ast.Await: "await", ast.Yield: "yield",
        ast.YieldFrom: "yield from",
        ast.Dict: "a dict", ast.Set: "a set", ast.Starred: "a starred expression",
    }
    return names.get(type(node), f"Python '{type(node).__name__}'")


def run_parse(parser, fn, *args):
    """Run ``fn(*args)``; any failure becomes a ParseError at the current span, raised
    without the parser's own frames in the traceback."""
    try:
        return fn(*args)
    except ParseError as e:
        err = e
    except Error as e:
        err = parser.make_error(None, str(e))
    except RecursionError:
        name = parser.state.get("function")
        where = f" in function {name!r}" if name else ""
        err = parser.make_error(parser.too_deep, f"this is nested too deeply for the parser "
                                                 f"(Python's recursion limit){where}",
                                "split the expression, or the function into smaller ones")
    except Exception as e:  # a bug in pyir: still point at the user's line
        err = parser.make_error(None, f"internal error while parsing this line: "
                                      f"{type(e).__name__}: {e}")
    err.__suppress_context__ = True
    raise err.with_traceback(None)


def _characters(line, offset):
    """The character column of UTF-8 byte ``offset`` in ``line`` (``ast`` counts bytes:
    a caret after an ``Ä`` was one place right per such letter)."""
    if line is None or offset is None:
        return offset
    return len(line.encode("utf-8")[:offset].decode("utf-8", errors="ignore"))
