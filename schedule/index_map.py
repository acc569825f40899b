"""Index maps: ``(i, j) -> (j // 16, i, j % 16)``, written as text parsed with lark or as a
Python lambda over index variables.

The text notation has names, integer literals, ``+ - * // %`` and parentheses; an
`IndexMap` prints back to that notation, which is how traces store it.
"""

import functools
import inspect

from lark import Lark, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedToken, VisitError

from pyir.arith import vars_of
from pyir.errors import IRError
from pyir.ir import Binary, IntImm, PrimExpr, Var, convert, dtype as dt, substitute

from .errors import ScheduleError, script_text

_GRAMMAR = r"""
start: names "->" exprs
names: NAME ("," NAME)* ","?
exprs: sum ("," sum)* ","?
?sum: product
    | sum "+" product   -> add
    | sum "-" product   -> sub
?product: unary
    | product "*" unary   -> mul
    | product "//" unary  -> floordiv
    | product "%" unary   -> floormod
?unary: atom
    | "-" unary -> neg
?atom: NAME -> name
    | INT -> int
    | "(" sum ")"
NAME: /[^\W\d]\w*/
%import common.INT
%import common.WS
%ignore WS
"""

@functools.cache
def _parser():
    """The grammar's parser, built at the first index map written as text (20-35 ms: not
    when pyir.schedule is imported, as the default schedule does for a matmul)."""
    return Lark(_GRAMMAR, parser="lalr")


class _Build(Transformer):
    def __init__(self):
        super().__init__()
        self.vars = {}

    def names(self, items):
        out = []
        for tok in items:
            if str(tok) in self.vars:
                raise ValueError(f"index variable {tok} is listed twice")
            self.vars[str(tok)] = Var(str(tok))
            out.append(self.vars[str(tok)])
        return out

    def exprs(self, items):
        return list(items)

    def start(self, items):
        return items[0], items[1]

    def name(self, items):
        if str(items[0]) not in self.vars:
            raise ValueError(f"{items[0]} is not one of the index variables")
        return self.vars[str(items[0])]

    def int(self, items):
        value = int(items[0])
        if value > dt.int_range(dt.INDEX)[1]:
            raise ValueError(f"{value} does not fit in {dt.INDEX}")
        return IntImm(value)

    def neg(self, items):
        # -4 is the literal, as a lambda gives it (and as the map prints back), not 0 - 4
        if isinstance(items[0], IntImm):
            return IntImm(-items[0].value)
        return IntImm(0) - items[0]

    def add(self, items):
        return items[0] + items[1]

    def sub(self, items):
        return items[0] - items[1]

    def mul(self, items):
        return items[0] * items[1]

    def floordiv(self, items):
        return items[0] // items[1]

    def floormod(self, items):
        return items[0] % items[1]


class IndexMap:
    """A map from ``len(inputs)`` indices to ``len(outputs)`` indices."""

    def __init__(self, inputs, outputs):
        self.inputs = tuple(inputs)
        self.outputs = tuple(convert(o) for o in outputs)

    @staticmethod
    def parse(spec, primitive="index_map"):
        """An IndexMap from text, a lambda, or an IndexMap."""
        if isinstance(spec, IndexMap):
            return spec
        if isinstance(spec, str):
            try:
                inputs, outputs = _Build().transform(_parser().parse(spec))
            except (UnexpectedCharacters, UnexpectedToken, VisitError) as e:
                raise ScheduleError(primitive, f"index map {spec!r}", "cannot read it: "
                                    f"{_why(e)}; write it like \"i, j -> j // 16, i, j % 16\""
                                    ) from None
            except RecursionError:
                raise ScheduleError(primitive, f"index map {spec[:40]!r}...", "it is nested "
                                    "too deeply to read (Python's recursion limit)") from None
            return IndexMap(inputs, outputs)
        if callable(spec):
            return _from_callable(spec, primitive)
        raise ScheduleError(primitive, repr(spec), "an index map is a text like "
                            "\"i, j -> j, i\" or a lambda")

    def apply(self, indices):
        """The output indices for input indices ``indices``."""
        mapping = dict(zip(self.inputs, indices))
        return tuple(substitute(o, mapping) for o in self.outputs)

    def text(self):
        """The map in the text notation (what `parse` reads)."""
        return (", ".join(v.name for v in self.inputs) + " -> "
                + ", ".join(self.output_text(k) for k in range(len(self.outputs))))

    def output_text(self, k):
        """Output ``k`` in the text notation (``j // 16``)."""
        return _fmt(self.outputs[k], 0)

    def __repr__(self):
        return f"IndexMap({self.text()!r})"


def _from_callable(fn, primitive):
    """The IndexMap a Python callable makes of index variables, one per parameter; an
    `IRError` when calling it fails or it gives something that is no index."""
    subject = f"index map {getattr(fn, '__name__', fn)!r}"
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = None
    if params is None or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                             or p.default is not p.empty for p in params):
        raise ScheduleError(primitive, subject, "a callable index map takes the indices as "
                            "plain parameters, like lambda i, j: (j // 16, i, j % 16)")
    inputs = [Var(p.name) for p in params]
    try:
        out = fn(*inputs)
    except IRError:
        raise
    except Exception as e:  # noqa: BLE001 -- the user's code, run on index variables
        raise IRError(f"calling it on index variables failed: {type(e).__name__}: {e}"
                      ) from None
    outputs = out if isinstance(out, (tuple, list)) else (out,)
    for k, o in enumerate(outputs):   # (convert refuses what is no expression at all)
        if isinstance(o, bool) or isinstance(o, PrimExpr) and o.dtype != dt.INDEX:
            raise IRError(f"output {k} is {o!r}, not an index")
        # as in the text notation, which the trace stores: no other variable
        other = sorted(v.name for v in vars_of(convert(o)) if all(v is not x for x in inputs))
        if other:
            raise IRError(f"output {k} uses {other[0]}, which is not one of the index "
                          "variables")
    return IndexMap(inputs, outputs)


def _why(e):
    """What is wrong with an index map's text, from lark's exception ``e``: a name `_Build`
    refused, a character or token where it cannot stand (with its column), or an early end."""
    if isinstance(e, VisitError):
        return str(e.orig_exc)
    if isinstance(e, UnexpectedCharacters):
        return f"unexpected {e.char!r} at column {e.column}"
    if e.token.type == "$END":
        return "the text ends where more is expected"
    return f"unexpected {e.token.value!r} at column {e.column}"


_PREC = {"add": 1, "sub": 1, "mul": 2, "floordiv": 2, "floormod": 2}
_SYM = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%"}


def _fmt(e, prec):
    if isinstance(e, Var):
        return e.name
    if isinstance(e, IntImm):
        return str(e.value) if e.value >= 0 or prec == 0 else f"({e.value})"
    if isinstance(e, Binary) and e.op in _PREC:
        p = _PREC[e.op]
        text = f"{_fmt(e.a, p)} {_SYM[e.op]} {_fmt(e.b, p + 1)}"
        return f"({text})" if p < prec else text
    if isinstance(e, PrimExpr):
        raise ScheduleError("index_map", script_text(e), "index maps may use only + - * // % "
                            "on the index variables and integers")
    raise ScheduleError("index_map", repr(e), "not an index expression")
