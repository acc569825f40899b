"""The printer's machinery: IR -> Python script text that `from_source` parses back.

Dialect modules (`tensor`, `graph`) register a function per node type with
`@prints(NodeType)`: statement printers write lines with ``p.line`` (inside ``p.indent()``),
expression printers return ``(text, precedence)``. Names are unique per scope: a variable
whose name is taken by another live definition is printed as ``name_1``.
"""

import contextlib
import keyword

from pyir.errors import TOO_DEEP, Error

_TABLE = {}

# Python operator precedence, loosest first (higher binds tighter).
PREC_LAMBDA, PREC_OR, PREC_AND, PREC_NOT, PREC_CMP = 1, 2, 3, 4, 5
PREC_ADD, PREC_MUL, PREC_UNARY, PREC_POWER, PREC_ATOM = 10, 11, 12, 13, 20


def prints(*node_types):
    """Decorator: ``fn(printer, node)`` prints ``node_types``."""
    def deco(fn):
        for t in node_types:
            _TABLE[t] = fn
        return fn
    return deco


class Printer:
    def __init__(self):
        self.lines = []
        self.depth = 0
        self.names = {}          # id(definition) -> printed name
        self.scopes = [set()]    # names live in each open scope
        self.dialects = set()    # "I", "T", "R": used, so imported in the header
        self.module_name = None  # set while printing a module (for ``cls.f``)
        self.state = {}          # per-dialect data kept while printing (enclosing loops)
        self._defs = {}          # function name -> its ``def`` name (`def_name`)

    # ------------------------------------------------------------------ output
    def line(self, text=""):
        self.lines.append(("    " * self.depth + text) if text else "")

    @contextlib.contextmanager
    def indent(self):
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def text(self):
        header = []
        if self.dialects:
            names = {"I": "ir as I", "T": "tensor as T", "R": "graph as R"}
            used = ", ".join(names[d] for d in ("I", "T", "R") if d in self.dialects)
            header = [f"from pyir.script import {used}", "", ""]
        return "\n".join(header + self.lines) + "\n"

    # ------------------------------------------------------------------ dispatch
    def print(self, node):
        """Print a statement-like node (function, statement, binding) as lines. A statement
        printer may return the statement to print next at the same indentation (the body of
        a let, the last of a sequence): followed in a loop, so that a chain of thousands of
        lets does not recurse once per let."""
        while node is not None:
            node = self._handler(node)(self, node)

    def expr(self, node, prec=0):
        """Text of an expression-like node, parenthesized if it binds looser than ``prec``."""
        fn = self._handler(node)
        text, own = fn(self, node)
        return f"({text})" if own < prec else text

    def _handler(self, node):
        for cls in type(node).__mro__:
            if cls in _TABLE:
                return _TABLE[cls]
        raise Error(f"the printer does not know how to print {type(node).__name__}")

    # ------------------------------------------------------------------ names
    @contextlib.contextmanager
    def scope(self):
        self.scopes.append(set())
        try:
            yield
        finally:
            self.scopes.pop()

    def define(self, node, hint):
        """Give definition ``node`` a unique name based on ``hint`` in the current scope."""
        live = set().union(*self.scopes)
        name = _identifier(hint)
        if name in live or name in _RESERVED:
            k = 1
            while f"{name}_{k}" in live:
                k += 1
            name = f"{name}_{k}"
        self.names[id(node)] = name
        self.scopes[-1].add(name)
        return name

    def name(self, node, hint=None):
        """The printed name of a definition (defining it on first use)."""
        if id(node) not in self.names:
            return self.define(node, hint or getattr(node, "name", "v"))
        return self.names[id(node)]

    def is_defined(self, node):
        return id(node) in self.names

    # ------------------------------------------------------------------ functions
    def def_names(self, names):
        """Give each of the function names ``names`` (a module's) its ``def`` name: the name
        itself where it is a Python identifier, else one made of it that no other takes."""
        taken = {n for n in names if _plain(n)} | set(self._defs.values())
        for n in names:
            if n in self._defs:
                continue
            made = n
            if not _plain(n):
                base = _identifier(n) + ("_" if keyword.iskeyword(_identifier(n)) else "")
                made, k = base, 1
                while made in taken:
                    made, k = f"{base}_{k}", k + 1
            taken.add(made)
            self._defs[n] = made

    def def_name(self, name):
        """The ``def`` name of the function named ``name`` (see `def_names`); how the
        module's code refers to it (``cls.f``)."""
        if name not in self._defs:
            self.def_names([name])
        return self._defs[name]

    def function_head(self, decorator, name):
        """``def`` of the function named ``name`` after the decorator line ``decorator``
        (``@T.prim_func``): ``@T.prim_func(name="mylib.f")`` and ``def mylib_f(`` where the
        name is not a Python identifier. Returns the text up to the parameters."""
        made = self.def_name(name)
        self.line(decorator if made == name else f"{decorator}(name={python_string(name)})")
        return f"def {made}("


#: Names the printer never gives a variable: the dialects, ``cls``, ``range``, and every
#: Python keyword (a buffer named ``yield`` or ``async`` would not parse back).
_RESERVED = {"T", "R", "I", "cls", "range"} | set(keyword.kwlist)


def python_string(text):
    """``text`` as a double-quoted Python string literal that reads back as ``text``:
    printable characters as they are (also those past U+FFFF, which JSON would write as two
    escapes that Python reads as two lone surrogates), the others escaped."""
    out = []
    for c in text:
        if c in "\"\\":
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
        else:
            out.append(repr(c)[1:-1])   # \n, \x00, \udcff, ...
    return '"' + "".join(out) + '"'


def _plain(name):
    """Whether ``name`` can be a ``def`` name as it is."""
    return name.isidentifier() and not keyword.iskeyword(name)


def _identifier(hint):
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in (hint or "v"))
    if not out or out[0].isdigit():
        out = "v_" + out
    return out


def script(node):
    """Python script text for an IRModule, function, statement or expression."""
    from . import graph, module, tensor  # noqa: F401  (registers the printers)
    p = Printer()
    handler = p._handler(node)
    try:
        result = handler(p, node)
        if isinstance(result, tuple):  # an expression
            return result[0]
        p.print(result)
    except RecursionError:
        name = getattr(node, "name", None)
        what = f"{type(node).__name__} {name}" if isinstance(name, str) else type(node).__name__
        raise Error(f"cannot print {what}: {TOO_DEEP}") from None
    return p.text()


def show(node, style="monokai"):
    """Print ``node``'s script, highlighted by rich."""
    from rich.console import Console
    from rich.syntax import Syntax
    Console().print(Syntax(script(node).rstrip("\n"), "python", theme=style))


def to_html(node):
    """HTML (highlighted script) for notebooks."""
    from rich.console import Console
    from rich.syntax import Syntax
    console = Console(record=True, file=_Null(), width=120, force_jupyter=False)
    console.print(Syntax(script(node).rstrip("\n"), "python", theme="default"))
    return console.export_html(inline_styles=True, code_format="<pre style=\"font-family:"
                               "monospace;font-size:12px\">{code}</pre>")


class _Null:
    def write(self, _):
        return 0

    def flush(self):
        pass
