"""Statements of a prim function body found and replaced by identity.

A *path* is the tuple of statements from the body down to a node. Nodes are values, so two
equal subtrees may sit in one body; paths tell them apart. `replace` rebuilds only the
statements along a path.
"""

from pyir.ir import (STMT_FIELDS, Allocate, Block, BlockRealize, For, LetStmt, PrimFunc, SeqStmt,
                     seq, stmt_children)
from pyir.ir.node import with_fields
from pyir.ir.stmt import Tail, follow_tails


def iter_paths(root, prefix=()):
    """Every statement below ``root`` (inclusive) with its path, pre-order."""
    stack = [prefix + (root,)]
    while stack:   # a stack, not nested generators: each path costs O(1), not O(depth)
        path = stack.pop()
        yield path
        stack.extend(path + (child,) for child in reversed(stmt_children(path[-1])))


_last = (None, {})   # the body searched last, with {(search, key): path} found in it


def _remembered(search, body, key):
    """``search(body, key)``, remembered for the body searched last: IR is immutable, and a
    step looks the same block or loop up in the same body several times (`Schedule`
    resolves the handle, then the primitive finds it again). Only that body is kept."""
    global _last
    last_body, paths = _last
    if last_body is not body:
        paths = {}
        _last = (body, paths)
    if (search, key) not in paths:
        paths[(search, key)] = search(body, key)
    return paths[(search, key)]


def find_block(body, name):
    """Path to the BlockRealize of block ``name`` (or to a bare root Block), or None."""
    return _remembered(_search_block, body, name)


def _search_block(body, name):
    """`find_block` without the memory: the first match in pre-order."""
    for path in iter_paths(body):
        node = path[-1]
        if isinstance(node, BlockRealize) and node.block.name == name:
            return path
        if isinstance(node, Block) and node.name == name and (
                len(path) == 1 or not isinstance(path[-2], BlockRealize)):
            return path
    return None


def find_loop(body, loop_var):
    """Path to the For whose loop variable is ``loop_var``, or None."""
    return _remembered(_search_loop, body, loop_var)


def _search_loop(body, loop_var):
    """`find_loop` without the memory: the first match in pre-order."""
    for path in iter_paths(body):
        if isinstance(path[-1], For) and path[-1].loop_var is loop_var:
            return path
    return None


def scope_depth(path):
    """Index in ``path`` of the innermost Block enclosing the last node (not its own block);
    -1 when the node is not inside any block."""
    for k in range(len(path) - 2, -1, -1):
        if isinstance(path[k], Block) and path[k] is not getattr(path[-1], "block", None):
            return k
    return -1


def loops_of(path):
    """The For nodes between the enclosing block (or the function) and the last node."""
    return [n for n in path[scope_depth(path) + 1:-1] if isinstance(n, For)]


_WRAPPERS = (SeqStmt, Allocate, LetStmt)


def top_level(path):
    """Index in ``path`` of the statement that is an item of the enclosing scope (the
    node's outermost ancestor within its scope, looking through sequences and the
    allocations and lets that wrap the statements after them)."""
    k = scope_depth(path) + 1
    while k < len(path) - 1 and isinstance(path[k], _WRAPPERS):
        k += 1
    return k


def scope_items(path):
    """The items of the enclosing scope's body in order (see `top_level`)."""
    return flatten(path[scope_depth(path) + 1])


def flatten(stmt):
    """``stmt`` as a list of items, looking through sequences, allocations and lets (with
    a stack: a sequence of lets nests as deep as it is long)."""
    items, todo = [], [stmt]
    while todo:
        s = todo.pop()
        if isinstance(s, SeqStmt):
            todo.extend(reversed(s.stmts))
        elif isinstance(s, (Allocate, LetStmt)):
            todo.append(s.body)
        else:
            items.append(s)
    return items


def replace(path, new):
    """The root of ``path`` rebuilt with its last node replaced by ``new`` (a statement, a
    list of statements spliced into a sequence, or None to delete it; a loop left empty
    is deleted as well)."""
    for k in range(len(path) - 2, -1, -1):
        new = _replace_child(path[k], path[k + 1], new)
    if isinstance(new, list):
        return seq(*new) if new else SeqStmt(())
    return new


def _replace_child(parent, old, new):
    items = new if isinstance(new, list) else ([] if new is None else [new])
    if isinstance(parent, SeqStmt):
        stmts = []
        for s in parent.stmts:
            if s is old:
                for item in items:
                    stmts.extend(item.stmts if isinstance(item, SeqStmt) else [item])
            else:
                stmts.append(s)
        if not stmts:
            return None
        return stmts[0] if len(stmts) == 1 else SeqStmt(tuple(stmts))
    value = None if not items else items[0] if len(items) == 1 else SeqStmt(tuple(items))
    for f in STMT_FIELDS[type(parent)]:
        if getattr(parent, f) is old:
            if value is None and f in ("body", "then_case", "block"):
                if isinstance(parent, Block):
                    return with_fields(parent, body=SeqStmt(()))
                return None
            return with_fields(parent, **{f: value})
    raise AssertionError("path is not a chain of parents")


def with_body(func, body):
    return PrimFunc(func.name, func.params, body, func.attrs)


def map_realizes(stmt, fn):
    """``stmt`` with each outermost BlockRealize ``r`` below it replaced by ``fn(r)``."""
    return follow_tails(stmt, lambda s: _map_realizes(s, fn))


def _map_realizes(stmt, fn):
    """One step of `map_realizes`: the last of a sequence and the body of a let or
    allocation come back as a `Tail`."""
    if isinstance(stmt, BlockRealize):
        return fn(stmt)
    if isinstance(stmt, SeqStmt) and stmt.stmts:
        head = tuple(map_realizes(s, fn) for s in stmt.stmts[:-1])
        return Tail(stmt.stmts[-1], lambda last: SeqStmt(head + (last,)))
    if isinstance(stmt, (Allocate, LetStmt)):
        return Tail(stmt.body, lambda body: with_fields(stmt, body=body))
    changes = {}
    for f in STMT_FIELDS.get(type(stmt), ()):
        child = getattr(stmt, f)
        if child is not None:
            changes[f] = map_realizes(child, fn)
    return with_fields(stmt, **changes) if changes else stmt
