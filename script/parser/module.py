"""Entry points of the parser: decorated classes and functions, and `from_source` text.

A module is parsed in three phases: first every function name is declared (so ``cls.f``,
``Module.f`` and bare ``f`` may refer to a function defined further down), then each
function is parsed by its dialect (`tensor.parse_prim_func`, `graph.parse_function`), and
last the graph functions' calls are matched with the functions they call
(`graph.check_calls`).
"""

import ast
import copy
import inspect
import linecache
import types

from pyir.errors import Error
from pyir.ir import GlobalVar, IRModule

from .core import Parser, run_parse
from .source import DIALECT_MODULES, DIALECT_NAMES, PythonScope, Source, dialects_under

DEFAULT_ALIASES = {"I": "I", "T": "T", "R": "R"}


def aliases_from_scope(python):
    """Dialect aliases visible in a Python scope: the defaults unless shadowed, plus any
    other name bound to a pyir.script dialect module, and the dotted names of the dialects
    a name bound to pyir or pyir.script reaches (`dialects_under`)."""
    aliases = {}
    for name in DEFAULT_ALIASES:
        found, _, _ = python.lookup(name)
        if not found or python.module_alias(name) == DEFAULT_ALIASES[name]:
            aliases[name] = DEFAULT_ALIASES[name]
    for ns in python.namespaces:
        for name in list(ns):
            dialect = python.module_alias(name)
            if dialect:
                aliases.setdefault(name, dialect)
                continue
            value = python.lookup(name)[1]
            if isinstance(value, types.ModuleType):
                for dotted, dialect in dialects_under(name, value.__name__).items():
                    aliases.setdefault(dotted, dialect)
    return aliases


def aliases_from_imports(tree):
    """The names the text's own imports bind: ``{name: dialect}`` for the pyir.script
    dialect modules (``from pyir.script import tensor as R``, ``import pyir.script.graph as
    G``) and for the dotted names of those a name bound to pyir or pyir.script reaches
    (``import pyir.script.tensor`` binds pyir: ``{"pyir.script.tensor": "T", ...}``), and
    ``{name: (module, line)}`` for anything else (``import numpy as T``), which a dialect
    name may not be. A later import of a name replaces an earlier one."""
    aliases, others = {}, {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            bound = [(a.asname or a.name, f"{module}.{a.name}") for a in node.names
                     if a.name != "*"]
        elif isinstance(node, ast.Import):
            bound = [(a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2
                     for a in node.names]
        else:
            continue
        for name, module in bound:
            for key in [k for k in aliases if k == name or k.startswith(name + ".")]:
                del aliases[key]
            others.pop(name, None)
            if module in DIALECT_MODULES:
                aliases[name] = DIALECT_MODULES[module]
            else:
                aliases.update(dialects_under(name, module))
                others[name] = (module, node.lineno)
    return aliases, others


def decorator_kind(parser, node):
    """"prim_func", "function" or "ir_module" for a definition's pyir decorator, else None."""
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = parser.dialect_of(target)
        if name in _DECORATORS:
            return name[1]
        if name is not None and name[1] in _DECORATOR_DIALECTS:
            # ``from pyir.script import graph as T`` and ``@T.prim_func``
            alias = ast.unparse(target).rsplit(".", 1)[0]
            module = DIALECT_NAMES[_DECORATOR_DIALECTS[name[1]]]
            if "." in alias:   # @pyir.script.graph.prim_func
                parser.error(target, f"{alias} has no {name[1]}",
                             f"the {module} dialect's {name[1]} "
                             f"({alias.rsplit('.', 1)[0]}.{module}.{name[1]})")
            parser.error(target, f"{alias} is pyir.script.{DIALECT_NAMES[name[0]]} here, "
                                 f"which has no {name[1]}",
                         f"the {module} dialect's {name[1]} (from pyir.script import {module} "
                         f"as {alias})")
    return None


_DECORATORS = (("T", "prim_func"), ("R", "function"), ("I", "ir_module"))
_DECORATOR_DIALECTS = {kind: dialect for dialect, kind in _DECORATORS}


def defined_name(parser, node):
    """The name of the function or module ``node`` defines: ``name=`` of its decorator
    (``@T.prim_func(name="mylib.saxpy")``, for a function name that is not a Python
    identifier; the ``def`` name is then how the module's code refers to it,
    ``cls.saxpy``), else the name in the definition. Any other decorator argument (any at
    all of ``@I.ir_module``) is a ParseError."""
    for deco in node.decorator_list:
        if not isinstance(deco, ast.Call) or parser.dialect_of(deco.func) not in _DECORATORS:
            continue
        what = ast.unparse(deco.func)
        if parser.dialect_of(deco.func) == ("I", "ir_module"):
            parser.error(deco, f"@{what} takes no arguments", f"@{what}")
        named = [k for k in deco.keywords if k.arg == "name"]
        if deco.args or len(named) != len(deco.keywords) or not (
                named and isinstance(named[0].value, ast.Constant)
                and isinstance(named[0].value.value, str) and named[0].value.value):
            parser.error(deco, f"@{what} takes one argument, name=\"...\": the function's "
                               "name where it is not a Python identifier",
                         f"@{what}, or @{what}(name=\"mylib.kernel\")")
        return named[0].value.value
    return node.name


def parse_function_def(parser, node, kind=None, name=None):
    """A PrimFunc or graph Function from a decorated ``def`` (``kind``: "prim_func" or
    "function" when the caller knows it, e.g. ``T.prim_func(f)`` called on a plain ``def``;
    ``name``: the function's name when the caller gives it, else `defined_name`)."""
    from . import graph, tensor
    kind = kind or decorator_kind(parser, node)
    check_def(parser, node, "graph function" if kind == "function" else "prim function")
    name = name or defined_name(parser, node)
    parser.state["function"] = name
    if kind == "prim_func":
        return tensor.parse_prim_func(parser, node, name)
    if kind == "function":
        return graph.parse_function(parser, node, name)
    parser.error(node, f"function {node.name!r} has no @T.prim_func or @R.function decorator",
                 "every function in an @I.ir_module class decorated with @T.prim_func or "
                 "@R.function")


def check_def(parser, node, what):
    """Refuse, in the definition ``node`` of a ``what`` ("prim function", ...), an async
    def, and in its signature and body (its decorators are Python's) a call that unpacks
    a dict (``**kwargs``) or repeats a keyword: the definition is read, never run, and the
    parser reads arguments by name (text that Python never compiled, `from_source`, may
    repeat a keyword, which Python's compiler refuses; the parser kept one of them)."""
    if isinstance(node, ast.AsyncFunctionDef):
        parser.error(node, f"a {what} is a plain def, not an async def", f"def {node.name}(...)")
    read = [node.args, *node.body] + ([node.returns] if node.returns is not None else [])
    for call in (n for root in read for n in ast.walk(root)):
        if not isinstance(call, ast.Call):
            continue
        seen = set()
        for kw in call.keywords:
            if kw.arg is None:
                parser.error(call, f"{ast.unparse(call.func)} does not take **kwargs",
                             "each argument by name: name=value")
            if kw.arg in seen:
                parser.error(kw, f"keyword argument {kw.arg} is repeated")
            seen.add(kw.arg)


def parse_class(parser, node):
    """An IRModule from a ``class`` decorated with ``@I.ir_module``."""
    from .graph import check_calls
    defined_name(parser, node)
    defs = []
    for item in node.body:
        if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) \
                and isinstance(item.value.value, str):
            continue  # docstring
        if isinstance(item, ast.Pass):
            continue  # an empty module prints as pass
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parser.error(item, f"only decorated functions may appear in an @I.ir_module "
                               f"class, not {type(item).__name__}",
                         "@T.prim_func or @R.function definitions")
        defs.append(item)
    seen, names = {}, {}
    for item in defs:
        if item.name in seen:
            parser.error(item, f"function {item.name!r} is defined twice in module "
                               f"{node.name!r} (first at line {seen[item.name]})")
        seen[item.name] = item.lineno
        name = defined_name(parser, item)
        if name in names:
            parser.error(item, f"function {item.name!r} is named {name!r}, as is function "
                               f"{names[name].name!r} at line {names[name].lineno} of module "
                               f"{node.name!r}")
        names[name] = item
    parser.state["class_name"] = node.name
    parser.state["globals"] = {item.name: GlobalVar(name) for name, item in names.items()}
    parser.state["global_kinds"] = {item.name: decorator_kind(parser, item) for item in defs}
    funcs = [(name, parse_function_def(parser, item, name=name)) for name, item in names.items()]
    check_calls(parser, dict(funcs))
    return IRModule(tuple(funcs))


def parse_alone(parser, node, kind=None, name=None):
    """A function defined outside any module (it calls no prim function by name), named
    ``name`` if given (see `parse_function_def`)."""
    from .graph import check_calls
    parser.state["globals"] = {}
    parser.state["global_kinds"] = {}
    func = parse_function_def(parser, node, kind, name)
    check_calls(parser, {func.name: func})
    return func


def bare_decorator(name, target, options):
    """Refuse ``@name(...)`` for a decorator that takes no arguments (``@I.ir_module``)."""
    if target is None or options:
        given = f" (given: {', '.join(options)})" if options else ""
        raise Error(f"@{name} takes no arguments{given}; write @{name} without parentheses "
                    "above the definition")


def named_decorator(name, target, options):
    """The ``name=`` option of ``@name`` (``@T.prim_func``, ``@R.function``), or None;
    refuse any other (see `defined_name`). With a target, None for a plain ``@name``."""
    given = set(options) - {"name"}
    value = options.get("name")
    if given or "name" in options and not (isinstance(value, str) and value) or (
            target is None and "name" not in options):
        shown = f" (given: {', '.join(options)})" if options else ""
        raise Error(f"@{name} takes one argument, name=\"...\" (the function's name where it "
                    f"is not a Python identifier){shown}; write @{name} or "
                    f"@{name}(name=\"mylib.kernel\") above the definition")
    return value


def in_module_class(frame):
    """Whether ``frame`` runs the body of a class that its decorator parses as a whole
    (``@I.ir_module``): a class statement with a decorator, or whose source is unreadable.
    A function in an undecorated class is parsed at once, as one outside any class (left
    alone, its mistakes were never reported and it stayed a Python function)."""
    if not ("__module__" in frame.f_locals and "__qualname__" in frame.f_locals):
        return False
    line = linecache.getline(frame.f_code.co_filename, frame.f_code.co_firstlineno)
    return not line.lstrip().startswith("class ")


def parse_decorated_class(cls, frame):
    source = Source.of_class(cls, frame.f_lineno if frame else 0,
                             frame.f_code.co_filename if frame else None)
    python = PythonScope.of_frame(frame)
    parser = Parser(source, python, aliases_from_scope(python))
    return run_parse(parser, parse_class, parser, source.node)


def parse_declaration(func, frame):
    """The prim function whose signature ``func`` declares (a body of ``...``, which becomes
    ``pass``). Names in the annotations resolve where ``func`` was written, closure
    variables included, as for ``@T.prim_func``."""
    source = Source.of_function(func)
    python = PythonScope.of_frame(frame, func)
    parser = Parser(source, python, aliases_from_scope(python))
    return run_parse(parser, _parse_declaration, parser, copy.copy(source.node))


def _parse_declaration(parser, node):
    from . import tensor
    check_def(parser, node, "kernel declaration")
    for k, item in enumerate(node.body):
        if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and (
                item.value.value is Ellipsis or k == 0 and isinstance(item.value.value, str))):
            parser.error(item, "the body of a kernel declaration is ... (a docstring may come "
                               "first): the kernel's code is what symbol= or llvm_ir= gives",
                         "...")
    node.body = [ast.copy_location(ast.Pass(), node.body[-1])]
    return tensor.parse_prim_func(parser, node)


def parse_decorated_function(func, frame, kind, name=None):
    """``func`` parsed as ``kind`` ("prim_func" or "function"), whatever decorates it (a
    wrapper made with functools.wraps is looked through), named ``name`` if given."""
    source = Source.of_function(inspect.unwrap(func))
    python = PythonScope.of_frame(frame, func)
    parser = Parser(source, python, aliases_from_scope(python))
    return run_parse(parser, parse_alone, parser, source.node, kind, name)


def from_source(text, filename="<string>"):
    """Parse script text (as printed by ``mod.script()``) into an IRModule or function.

    The text is only parsed, never run: it may read no Python names but the dialect
    modules it imports, by the names it imports them as (``from pyir.script import tensor
    as R`` makes ``R.prim_func`` the tensor dialect's, and ``import pyir.script.tensor``
    ``pyir.script.tensor.prim_func``); a name used as a dialect that its imports bind to
    another module, or do not bind, is a ParseError.
    """
    source = Source.of_text(text, filename)
    aliases, others = aliases_from_imports(source.node)
    for name in DEFAULT_ALIASES:
        if name not in aliases:
            others.setdefault(name, None)   # I, T and R too are dialects only if imported
    parser = Parser(source, PythonScope(), aliases, others)
    return run_parse(parser, _parse_text, parser, source.node)


def _parse_text(parser, tree):
    results = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ClassDef) and decorator_kind(parser, node) == "ir_module":
            results.append((node, parse_class(parser, node)))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and decorator_kind(parser, node):
            results.append((node, parse_alone(parser, node)))
        else:
            parser.error(node, "from_source text may hold only imports, one @I.ir_module class "
                               "or decorated functions",
                         "@I.ir_module class, @T.prim_func or @R.function")
    if len(results) != 1:
        # at the second definition, or (none) at the text's first statement
        at = results[1][0] if results else tree.body[0] if tree.body else None
        parser.error(at, f"from_source text must define exactly one module or function, "
                         f"found {len(results)}")
    return results[0][1]
