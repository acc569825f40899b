"""Finding the Python source of decorated code (files, notebook cells, text) and the
plain constants it may read from its Python scope."""

import ast
import inspect
import linecache
import numbers
import re
import sys
import threading
import types

from pyir.errors import ArgumentTypeError

from ..diagnostics import ParseError

#: One line of text with its end, as Python's tokenizer ends lines (``str.splitlines`` also
#: ends them at form feeds and other separators, so the line shown was a later one).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

_AST_LOCK = threading.Lock()


def parse_python(text, filename="<unknown>", mode="exec"):
    """``ast.parse``, one thread at a time: CPython 3.11's AST constructor counts its depth
    in state all threads share, and two threads parsing at once (a garbage collection
    inside one lets the other run) raise "SystemError: AST constructor recursion depth
    mismatch" (python/cpython#106905)."""
    with _AST_LOCK:
        return ast.parse(text, filename=filename, mode=mode)


class Source:
    """The text a definition came from: ``filename``, all ``lines`` of that file (or cell),
    and ``node``, the ``ast`` node of the definition, positioned as in the file."""

    def __init__(self, filename, lines, node):
        self.filename = filename
        self.lines = lines
        self.node = node

    def line(self, lineno):
        if 1 <= lineno <= len(self.lines):
            return self.lines[lineno - 1]
        return None

    @staticmethod
    def of_text(text, filename="<string>"):
        """Parse ``text`` (a whole file) without running it."""
        if not isinstance(text, str):
            raise ArgumentTypeError(f"pyir.script.from_source expects the text of a Python "
                                    f"module (a str), got {type(text).__name__}")
        if not isinstance(filename, str):
            raise ArgumentTypeError(f"pyir.script.from_source: filename= names where the text "
                                    f"came from in messages (a str), got "
                                    f"{type(filename).__name__} {filename!r}")
        lines = _LINE.findall(text)   # as Python counts lines: a form feed ends none
        try:
            tree = parse_python(text, filename)
        except SyntaxError as e:
            raise ParseError(f"invalid Python syntax: {e.msg}", filename, e.lineno or 0,
                             (e.offset or 1) - 1, None,
                             lines[e.lineno - 1] if e.lineno and e.lineno <= len(lines) else None
                             ) from None
        except UnicodeEncodeError as e:
            k, col = 0, e.start
            while col >= len(lines[k]):
                col -= len(lines[k])
                k += 1
            shown = lines[k].encode("utf-8", "backslashreplace").decode("utf-8")
            raise ParseError(f"character {text[e.start]!r} is not valid Unicode text",
                             filename, k + 1, col, None, shown) from None
        except (RecursionError, MemoryError):
            k = max(range(len(lines)), key=lambda j: len(lines[j]))
            raise ParseError("the text is nested too deeply for Python's own parser "
                             "(its longest line shown)", filename, k + 1, 0, None,
                             lines[k]) from None
        return Source(filename, lines, tree)

    @staticmethod
    def of_function(func):
        """The source of a Python function, via its code object's file and first line."""
        code = func.__code__
        if func.__name__ == "<lambda>":
            raise ParseError("a lambda cannot be read as a definition; write it with def",
                             code.co_filename, code.co_firstlineno)
        return _locate(code.co_filename, func.__name__, code.co_firstlineno,
                       (ast.FunctionDef, ast.AsyncFunctionDef), func.__globals__)

    @staticmethod
    def of_class(cls, lineno, filename=None):
        """The source of a class; ``lineno`` is a line of its ``class`` statement or of one
        of its decorators, and ``filename`` the file of the decorating frame (both taken
        from that frame). The frame's file is where the class statement ran, also for a
        notebook cell, where `inspect` finds no file for a class of ``__main__``."""
        if filename is None:
            try:
                filename = inspect.getsourcefile(cls)
            except (OSError, TypeError):
                filename = None
        module = sys.modules.get(cls.__module__)
        return _locate(filename or _module_file(cls), cls.__name__, lineno, ast.ClassDef,
                       getattr(module, "__dict__", None))


def _module_file(cls):
    mod = inspect.getmodule(cls)
    return getattr(mod, "__file__", None) or "<unknown>"


def _locate(filename, name, lineno, kind, module_globals=None):
    # linecache knows files and also notebook cells (IPython registers each cell there);
    # checkcache drops a file changed since it was read (a module reloaded after an edit),
    # and the module's globals let its loader give the source (a module in a zip).
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        raise ParseError(f"cannot find the source of {name!r} (file {filename!r} is not "
                         "readable); define it in a file or a notebook cell, or use "
                         "pyir.script.from_source(text)", filename, lineno)
    try:
        tree = parse_python("".join(lines), filename)
    except SyntaxError:
        tree = None
    node = _find(tree, name, lineno, kind) if tree is not None else None
    if node is None:
        raise ParseError(f"cannot find the definition of {name!r} in {filename} near line "
                         f"{lineno}; was the file changed after it was imported?",
                         filename, lineno)
    return Source(filename, lines, node)


def _find(tree, name, lineno, kind):
    candidates = [node for node in ast.walk(tree) if isinstance(node, kind) and node.name == name]
    firsts = [min([node.lineno] + [d.lineno for d in node.decorator_list]) for node in candidates]
    for node, first in zip(candidates, firsts):  # an exact first line wins over an enclosing def
        if first == lineno:
            return node
    best = None
    for node, first in zip(candidates, firsts):
        if first <= lineno <= node.body[0].lineno:
            return node
        if best is None or abs(first - lineno) < abs(best[0] - lineno):
            best = (first, node)
    return best[1] if best else None


_PLAIN = (bool, int, float, str, type(None))


def plain_value(value):
    """``value`` if it is a plain constant (number, string, bool, None, or a tuple/list of
    them), as a Python value; otherwise None and False."""
    if isinstance(value, _PLAIN):
        return value, True
    if isinstance(value, numbers.Integral):
        return int(value), True
    if isinstance(value, numbers.Real):
        return float(value), True
    if isinstance(value, (tuple, list)):
        items = [plain_value(v) for v in value]
        if all(ok for _, ok in items):
            return tuple(v for v, _ in items), True
    return None, False


class PythonScope:
    """Names visible where a decorated definition was written; only plain constants may
    be read from it (anything else is reported, never called)."""

    def __init__(self, *namespaces):
        self.namespaces = [ns for ns in namespaces if ns]

    @staticmethod
    def of_frame(frame, func=None):
        closure = {}
        if func is not None and func.__closure__:
            for name, cell in zip(func.__code__.co_freevars, func.__closure__):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:
                    pass
        if frame is None:
            return PythonScope(closure)
        return PythonScope(closure, frame.f_locals, frame.f_globals)

    def lookup(self, name):
        """(found, value, is_plain)."""
        for ns in self.namespaces:
            if name in ns:
                value, ok = plain_value(ns[name])
                return True, (value if ok else ns[name]), ok
        return False, None, False

    def module_alias(self, name):
        """The dialect ("I", "T", "R") a name refers to, if it names a pyir.script module."""
        for ns in self.namespaces:
            if name in ns:
                value = ns[name]
                if isinstance(value, types.ModuleType):
                    return DIALECT_MODULES.get(value.__name__)
                return None
        return None


#: The dialects ("I", "T", "R") and the pyir.script module each is, by the module's name
#: in pyir.script and by its full name.
DIALECT_NAMES = {"I": "ir", "T": "tensor", "R": "graph"}
DIALECT_MODULES = {f"pyir.script.{name}": dialect for dialect, name in DIALECT_NAMES.items()}


def dialects_under(name, module):
    """The dialects a name bound to the module named ``module`` reaches by attributes:
    ``{"pyir.script.tensor": "T", ...}`` for ``pyir`` bound to pyir (``import pyir`` or
    ``import pyir.script.tensor``), ``{"script.tensor": "T", ...}`` for ``script`` bound to
    pyir.script."""
    return {name + full[len(module):]: dialect for full, dialect in DIALECT_MODULES.items()
            if full.startswith(module + ".")}
