"""pyir.script: the decorator language. ``I`` (modules), ``T`` (tensor level) and ``R``
(graph level) namespaces, the parser (Python ``ast`` -> IR), the printer (IR -> Python
text) and ParseError."""

from . import graph, ir, tensor
from .diagnostics import ParseError
from .parser.module import from_source
from .printer import script, show, to_html

__all__ = ["ir", "tensor", "graph", "ParseError", "from_source", "script", "show", "to_html"]
