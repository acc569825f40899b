"""Statements of the tensor level, and the primitive function that holds them."""

from dataclasses import dataclass

from ..errors import IRError, kind_of, with_article
from . import dtype as dt
from .expr import Buffer, PrimExpr, Var, convert, index_exprs
from .node import Node, with_fields

FOR_KINDS = ("serial", "parallel", "vectorized", "unroll")


class Stmt(Node):
    __slots__ = ()


def _check_stmt(owner, field, value):
    """Refuse ``value`` as the statement field ``field`` of a ``owner`` node unless it is
    a statement: an expression there (a loop body ``A[i]``) is evaluated for its effect
    only in an `Evaluate`."""
    if not isinstance(value, Stmt):
        hint = " (an expression runs as a statement in Evaluate)" \
            if isinstance(value, PrimExpr) else ""
        raise IRError(f"the {field} of {with_article(owner)} must be a statement, not "
                      f"{kind_of(value)}{hint}")


@dataclass(frozen=True, slots=True)
class Range(Node):
    """The half-open interval ``[start, start + extent)``."""

    start: PrimExpr
    extent: PrimExpr

    def __post_init__(self):
        object.__setattr__(self, "start", convert(self.start))
        object.__setattr__(self, "extent", convert(self.extent))


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """``for loop_var in [start, start + extent)`` run as ``kind``.

    ``annotations`` is a tuple of (key, value) pairs with plain values (``pragma_unroll``,
    ``tile`` hints, ...).
    """

    loop_var: Var
    start: PrimExpr
    extent: PrimExpr
    kind: str
    body: Stmt
    annotations: tuple = ()

    def __post_init__(self):
        if self.kind not in FOR_KINDS:
            raise IRError(f"unknown loop kind {self.kind!r}; expected one of {FOR_KINDS}")
        object.__setattr__(self, "start", convert(self.start))
        object.__setattr__(self, "extent", convert(self.extent))
        if self.loop_var.dtype != dt.INDEX:
            raise IRError(f"loop variable {self.loop_var.name} must be int64")
        _check_stmt("For", "body", self.body)


@dataclass(frozen=True, slots=True)
class IterVar(Node):
    """A block iterator over ``[0, extent)``; ``kind`` is "S" (spatial) or "R" (reduce)."""

    var: Var
    extent: PrimExpr
    kind: str

    def __post_init__(self):
        if self.kind not in ("S", "R"):
            raise IRError(f"block iterator kind must be 'S' or 'R', not {self.kind!r}")
        object.__setattr__(self, "extent", convert(self.extent))


@dataclass(frozen=True, slots=True)
class BufferRegion(Node):
    """The part of ``buffer`` covered by one Range per dimension."""

    buffer: Buffer
    region: tuple

    def __post_init__(self):
        if len(self.region) != len(self.buffer.shape):
            raise IRError(f"region of {self.buffer.name} has {len(self.region)} ranges for "
                          f"{len(self.buffer.shape)} dimensions")


@dataclass(frozen=True, slots=True)
class Block(Stmt):
    """A named unit of computation over its iterators.

    ``reads``/``writes`` are BufferRegions in terms of the iterators; ``init`` runs before
    the first reduction step; ``alloc_buffers`` live for the block's duration.
    """

    name: str
    iter_vars: tuple
    reads: tuple
    writes: tuple
    body: Stmt
    init: Stmt = None
    alloc_buffers: tuple = ()
    annotations: tuple = ()

    def __post_init__(self):
        _check_stmt("Block", "body", self.body)
        if self.init is not None:
            _check_stmt("Block", "init", self.init)


@dataclass(frozen=True, slots=True)
class BlockRealize(Stmt):
    """Runs ``block`` with its iterators bound to ``iter_values`` when ``predicate`` holds."""

    iter_values: tuple
    predicate: PrimExpr
    block: Block

    def __post_init__(self):
        if len(self.iter_values) != len(self.block.iter_vars):
            raise IRError(f"block {self.block.name} has {len(self.block.iter_vars)} iterators "
                          f"but {len(self.iter_values)} bindings")


@dataclass(frozen=True, slots=True)
class BufferStore(Stmt):
    buffer: Buffer
    value: PrimExpr
    indices: tuple

    def __post_init__(self):
        if len(self.indices) != len(self.buffer.shape):
            raise IRError(f"buffer {self.buffer.name} has {len(self.buffer.shape)} dimension(s) "
                          f"but is stored with {len(self.indices)} indices")
        object.__setattr__(self, "indices", index_exprs(self.indices))


@dataclass(frozen=True, slots=True)
class SeqStmt(Stmt):
    stmts: tuple

    def __post_init__(self):
        for x in self.stmts:
            _check_stmt("SeqStmt", "part", x)


@dataclass(frozen=True, slots=True)
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt = None

    def __post_init__(self):
        _check_stmt("IfThenElse", "then_case", self.then_case)
        if self.else_case is not None:
            _check_stmt("IfThenElse", "else_case", self.else_case)


@dataclass(frozen=True, slots=True)
class LetStmt(Stmt):
    """Binds ``var`` to ``value`` in ``body``."""

    var: Var
    value: PrimExpr
    body: Stmt

    def __post_init__(self):
        if not isinstance(self.var, Var):
            raise IRError(f"a LetStmt binds a Var, not {kind_of(self.var)} {self.var!r}")
        _check_stmt("LetStmt", "body", self.body)


@dataclass(frozen=True, slots=True)
class Evaluate(Stmt):
    """Evaluates an expression for its effect (``T.evaluate``, extern calls)."""

    value: PrimExpr


@dataclass(frozen=True, slots=True)
class Allocate(Stmt):
    """Storage for ``buffer`` during ``body`` (``T.alloc_buffer`` outside any block)."""

    buffer: Buffer
    body: Stmt

    def __post_init__(self):
        if not isinstance(self.buffer, Buffer):
            raise IRError(f"an Allocate allocates a Buffer, not {kind_of(self.buffer)} "
                          f"{self.buffer!r}")
        _check_stmt("Allocate", "body", self.body)


@dataclass(frozen=True, slots=True)
class PrimFunc(Node):
    """A tensor-level function in destination-passing style.

    ``params`` holds Buffers and scalar Vars in calling order. Shape variables are the Vars
    that occur in parameter buffer shapes; they are bound from the arguments' shapes.
    """

    name: str
    params: tuple
    body: Stmt
    attrs: tuple = ()

    def __post_init__(self):
        for p in self.params:
            if not isinstance(p, (Buffer, Var)):
                raise IRError(f"prim function {self.name}: parameter {p!r} is neither a "
                              "Buffer nor a Var")

    @property
    def buffer_params(self):
        return tuple(p for p in self.params if isinstance(p, Buffer))

    def attr(self, key, default=None):
        return dict(self.attrs).get(key, default)

    def with_attr(self, key, value):
        attrs = dict(self.attrs)
        attrs[key] = value
        return PrimFunc(self.name, self.params, self.body, tuple(sorted(attrs.items())))


def seq(*stmts):
    """A SeqStmt of ``stmts`` with nested sequences flattened; one statement stays itself."""
    flat = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.stmts)
        else:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat))


#: The fields of each statement kind that hold statements, in execution order.
STMT_FIELDS = {For: ("body",), Block: ("init", "body"), BlockRealize: ("block",),
               IfThenElse: ("then_case", "else_case"), LetStmt: ("body",),
               Allocate: ("body",)}


def stmt_children(s):
    """The statements directly inside ``s``, in execution order."""
    if isinstance(s, SeqStmt):
        return list(s.stmts)
    return [getattr(s, f) for f in STMT_FIELDS.get(type(s), ()) if getattr(s, f) is not None]


def walk_stmts(stmt):
    """Yield ``stmt`` and every statement below it, pre-order (`stmt_children`' order),
    without looking into expressions: `pyir.ir.node.walk` for a question about statements
    only (is there a loop, which buffers are allocated)."""
    todo = [stmt]
    while todo:
        s = todo.pop()
        yield s
        todo.extend(reversed(stmt_children(s)))


def rewrite_stmts(stmt, fn):
    """`pyir.ir.node.rewrite` over the statements of ``stmt`` only: ``fn`` sees each
    statement, bottom-up (the statements inside it already rewritten), and returns its
    replacement or None to keep it; expressions, buffers and every other field are kept as
    they are, not looked into (a pass that edits loops, blocks or sequences rebuilds no
    index). A statement that occurs twice is rewritten once. Walks with an explicit stack:
    a sequence of thousands of lets nests as deep as it is long."""
    done = {}   # id(statement) -> (statement, its rewrite)
    todo = [(stmt, False)]
    while todo:
        s, ready = todo.pop()
        if id(s) in done:
            continue
        if not ready:
            todo.append((s, True))
            todo.extend((c, False) for c in reversed(stmt_children(s)))
            continue
        if isinstance(s, SeqStmt):
            stmts = tuple(done[id(c)][1] for c in s.stmts)
            changed = any(a is not b for a, b in zip(stmts, s.stmts))
            changes = {"stmts": stmts} if changed else {}
        else:
            changes = {f: done[id(v)][1] for f in STMT_FIELDS.get(type(s), ())
                       if (v := getattr(s, f)) is not None and done[id(v)][1] is not v}
        rebuilt = with_fields(s, **changes) if changes else s
        result = fn(rebuilt)
        done[id(s)] = (s, rebuilt if result is None else result)
    return done[id(stmt)][1]


class Tail:
    """What a statement visitor run by `follow_tails` returns for a statement that ends in
    another one: the statement ``stmt`` to visit next (the body of a let or allocation, the
    last of a sequence), and ``finish``, which turns that statement's result into the
    result of the whole (None: the result is the same)."""

    __slots__ = ("stmt", "finish")

    def __init__(self, stmt, finish=None):
        self.stmt, self.finish = stmt, finish


def follow_tails(s, visit):
    """``visit(s)``, where ``visit`` returns either a result or a `Tail`: a tail is visited
    in a loop and its ``finish`` applied to its result, innermost first. A sequence of
    thousands of ``x = expr`` lets nests as deep as it is long; visitors that recurse only
    into the other statements (loop bodies, branches) stay within Python's recursion
    limit."""
    pending = []
    result = visit(s)
    while isinstance(result, Tail):
        if result.finish is not None:
            pending.append(result.finish)
        result = visit(result.stmt)
    for finish in reversed(pending):
        result = finish(result)
    return result


def find_paths(root, found, below=stmt_children):
    """Yield, pre-order, the path (the tuple of statements from ``root`` down to it) of
    each statement below ``root`` (inclusive) for which ``found(s)`` is true; ``below(s)``
    lists the statements to look into under ``s``. Walks with a stack whose entries link to
    their parent's: statements may nest thousands deep (a sequence of lets)."""
    todo = [(root, None)]
    while todo:
        s, up = todo.pop()
        link = (s, up)
        if found(s):
            path = []
            while link is not None:
                path.append(link[0])
                link = link[1]
            yield tuple(reversed(path))
            link = (s, up)
        todo.extend((c, link) for c in reversed(below(s)))
