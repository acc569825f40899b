"""Structural equality and hashing of IR, up to renaming of defined names.

Two nodes are structurally equal when they have the same shape and the variables and
buffers they define correspond one to one (names do not matter; dtypes, shapes and
scopes do). Correspondence is fixed at the first place a variable is met, walking both
trees in the same order, and made anew for each function of a module: a function's
parameters and locals are its own, even where two functions share the objects (a module made
from one function under two names).
"""

import hashlib

from ..errors import Error
from .module import IRModule
from .node import IdentityNode, Node, node_fields


class _Diff(Exception):
    def __init__(self, path, lhs, rhs, why):
        super().__init__(why)
        self.path, self.lhs, self.rhs, self.why = path, lhs, rhs, why


class _Matcher:
    """Walks two trees side by side with an explicit stack (a sequence of thousands of lets
    nests as deep as it is long, deeper than Python's recursion limit)."""

    def __init__(self):
        self.fwd = {}
        self.back = {}

    def match(self, a, b, path):
        todo = [(a, b, path)]
        while todo:
            a, b, path = todo.pop()
            todo.extend(reversed(self._step(a, b, path)))

    def _step(self, a, b, path):
        """Compare ``a`` and ``b`` themselves; return the pairs below them still to match."""
        if isinstance(a, tuple) or isinstance(b, tuple):
            if not (isinstance(a, tuple) and isinstance(b, tuple)):
                raise _Diff(path, a, b, "one side is a tuple, the other is not")
            if len(a) != len(b):
                raise _Diff(path, a, b, f"tuple lengths differ ({len(a)} vs {len(b)})")
            return [(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b))]
        if not isinstance(a, Node) or not isinstance(b, Node):
            # Floats compare as written, as they hash: -0.0 is not 0.0 (x * -0.0 differs
            # from x * 0.0), and a NaN constant equals itself.
            if isinstance(a, Node) or isinstance(b, Node) or type(a) is not type(b) or (
                    repr(a) != repr(b) if isinstance(a, float) else a != b):
                raise _Diff(path, a, b, "values differ")
            return ()
        if type(a) is not type(b):
            raise _Diff(path, a, b, f"node types differ ({type(a).__name__} vs "
                                    f"{type(b).__name__})")
        if isinstance(a, IRModule):
            return self._module(a, b, path)
        if isinstance(a, IdentityNode):
            if id(a) in self.fwd or id(b) in self.back:
                if self.fwd.get(id(a)) is not b:
                    raise _Diff(path, a, b, "refers to a different definition")
                return ()
            self.fwd[id(a)] = b
            self.back[id(b)] = a
        return [(x, y, f"{path}.{name}") for (name, x), (_, y) in zip(node_fields(a), node_fields(b))
                if not (name == "name" and isinstance(a, IdentityNode))]

    def _module(self, a, b, path):
        """Match the functions of IRModules ``a`` and ``b`` each with a matcher of its own;
        return their attributes, still to match."""
        if len(a.functions) != len(b.functions):
            raise _Diff(f"{path}.functions", a.functions, b.functions,
                        f"tuple lengths differ ({len(a.functions)} vs {len(b.functions)})")
        for i, ((name_a, fa), (name_b, fb)) in enumerate(zip(a.functions, b.functions)):
            if name_a != name_b:
                raise _Diff(f"{path}.functions[{i}][0]", name_a, name_b, "values differ")
            _Matcher().match(fa, fb, f"{path}.functions[{i}][1]")
        return [(a.attrs, b.attrs, f"{path}.attrs")]


def structural_equal(lhs, rhs):
    """True if ``lhs`` and ``rhs`` are the same IR up to renaming of definitions."""
    try:
        _Matcher().match(lhs, rhs, "")
    except _Diff:
        return False
    return True


def assert_structural_equal(lhs, rhs):
    """Raise pyir.Error describing the first difference if the IR differs."""
    try:
        _Matcher().match(lhs, rhs, "")
    except _Diff as d:
        raise Error(
            f"IR differs at <root>{d.path}: {d.why}\n"
            f"  lhs: {_show(d.lhs)}\n  rhs: {_show(d.rhs)}") from None


def _show(x):
    if isinstance(x, Node):
        try:
            text = x.script()
        except Exception:  # printing is best effort inside an error message
            text = repr(x)
        lines = text.strip().splitlines()
        return lines[0] if len(lines) == 1 else "\n    " + "\n    ".join(lines[:12])
    return repr(x)


def structural_hash(node):
    """A hash (int) consistent with `structural_equal`, stable across processes."""
    h = hashlib.blake2b(digest_size=8)
    numbering = {}
    _feed(node, h, numbering)
    return int.from_bytes(h.digest(), "little")


_CLOSE = object()   # marks the end of a tuple on `_feed`'s stack


def _feed(x, h, numbering):
    """Feed ``x`` to ``h``, walking it with an explicit stack (see `_Matcher`)."""
    todo = [x]
    while todo:
        x = todo.pop()
        if x is _CLOSE:
            h.update(b")")
            continue
        if isinstance(x, tuple):
            h.update(b"(%d" % len(x))
            todo.append(_CLOSE)
            todo.extend(reversed(x))
            continue
        if not isinstance(x, Node):
            h.update(f"{type(x).__name__}:{x!r};".encode())
            continue
        h.update(type(x).__name__.encode())
        if isinstance(x, IRModule):   # each function numbers its definitions (see `_Matcher`)
            for name, func in x.functions:
                h.update(f"{name!r};".encode())
                _feed(func, h, {})
            todo.append(x.attrs)
            continue
        identity = isinstance(x, IdentityNode)
        if identity:
            if id(x) in numbering:
                h.update(b"#%d" % numbering[id(x)][0])
                continue
            numbering[id(x)] = (len(numbering), x)  # keep x alive so its id stays unique
        todo.extend(reversed([value for name, value in node_fields(x)
                              if not (identity and name == "name")]))
