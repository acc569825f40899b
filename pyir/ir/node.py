"""The base of every IR node, and generic traversal over node fields.

Nodes are frozen dataclasses. Most compare by value (their fields); nodes that *define*
something (variables, buffers) compare by identity, so that two variables that happen to
share a name stay distinct. `pyir.ir.structural_equal` compares up to renaming.
"""

import dataclasses


class Node:
    """Base class of all IR nodes. Subclasses are frozen dataclasses with slots; every node
    also keeps the tuple of its children (see `children`) and the set of variables in it
    (`pyir.arith.vars_of`), both computed once, and can be weakly referenced."""

    __slots__ = ("_children", "_vars", "__weakref__")

    def script(self, **kwargs):
        """Python text of this node (see `pyir.script.printer`)."""
        from pyir.script.printer import script
        return script(self, **kwargs)

    def show(self, **kwargs):
        """Print the script text highlighted in the terminal or notebook."""
        from pyir.script.printer import show
        show(self, **kwargs)

    def _repr_html_(self):
        from pyir.script.printer import to_html
        return to_html(self)


class IdentityNode(Node):
    """A node that defines a name; equal only to itself, hashed by identity."""

    __slots__ = ()
    __eq__ = object.__eq__
    __hash__ = object.__hash__


_FIELD_NAMES = {}
_NODE_FIELDS = {}
#: Field annotations that never hold a node: traversals skip such fields.
_SCALAR_TYPES = (str, int, float, bool)


def _field_names(cls):
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _node_field_names(cls):
    """The fields of ``cls`` that may hold nodes (all but those annotated str, int, float
    or bool): what `children`, `walk` and `rewrite` look into."""
    names = _NODE_FIELDS.get(cls)
    if names is None:
        names = _NODE_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)
                                          if f.type not in _SCALAR_TYPES)
    return names


def with_fields(node, **changes):
    """``node`` with the named fields replaced: `dataclasses.replace` for nodes (every
    field is an init field), without its generic checks -- traversals rebuild many."""
    cls = type(node)
    return cls(*[changes[n] if n in changes else getattr(node, n) for n in _field_names(cls)])


def node_fields(node):
    """The (name, value) pairs of a node's dataclass fields, in declaration order."""
    return [(name, getattr(node, name)) for name in _field_names(type(node))]


def children(node):
    """The IR nodes directly inside ``node`` (looking into tuples), in field order, as a
    tuple. Nodes are immutable, so the tuple is computed once per node and kept on it
    (traversals ask for the same shared subtrees over and over)."""
    kids = getattr(node, "_children", None)
    if kids is None:
        found = []
        for name in _node_field_names(type(node)):
            value = getattr(node, name)
            if isinstance(value, Node):
                found.append(value)
            elif isinstance(value, tuple) and value:
                _nodes_in(value, found)
        kids = tuple(found)
        object.__setattr__(node, "_children", kids)
    return kids


def _nodes_in(items, found):
    """Append the nodes in the (nested) tuple ``items`` to ``found``."""
    for item in items:
        if isinstance(item, Node):
            found.append(item)
        elif isinstance(item, tuple):
            _nodes_in(item, found)


def walk(node):
    """Yield ``node`` and every node below it, pre-order, each identity node once."""
    seen = set()
    stack = [node]
    pop, push = stack.pop, stack.extend
    while stack:
        n = pop()
        if isinstance(n, IdentityNode):
            if id(n) in seen:
                continue
            seen.add(id(n))
        yield n
        kids = children(n)
        if kids:
            push(reversed(kids))


def rewrite(node, fn, memo=None):
    """Rebuild ``node`` bottom-up, replacing each node ``n`` by ``fn(n)``.

    ``fn`` sees a node whose children are already rewritten and returns its replacement,
    or None to keep it. Identity nodes (variables, buffers) are rewritten once and the
    result reused everywhere, so a buffer whose shape changes is one new buffer.
    """
    if memo is None:
        memo = {}
    try:
        return _rewrite(node, fn, memo)   # recursion: ~8 % of a symbolic build faster
    except RecursionError:
        return _rewrite_deep(node, fn, memo)


def substitute(node, mapping):
    """``node`` with each variable (or other identity node) that is a key of ``mapping``
    replaced by its value."""
    if not mapping:
        return node
    return rewrite(node, lambda n: mapping.get(n) if isinstance(n, IdentityNode) else None)


def rewrite_top_down(node, visit):
    """Rebuild ``node`` replacing, top-down, each node for which ``visit`` returns a
    replacement (not looked into further); ``visit`` sees the original nodes and returns
    None to look inside. Identity nodes (variables, buffers) are not looked into. Walks with
    an explicit stack (a sequence of thousands of lets nests as deep as it is long)."""
    done = []                  # rebuilt values, the last ones on top
    todo = [(_ENTER, node)]
    while todo:
        step, x = todo.pop()
        if step == _ENTER:
            if isinstance(x, tuple) and x:
                todo.append((_TUPLE, x))
                todo.extend((_ENTER, v) for v in reversed(x))
                continue
            new = visit(x) if isinstance(x, Node) else None
            if new is not None or not isinstance(x, Node) or isinstance(x, IdentityNode):
                done.append(x if new is None else new)
                continue
            names = [n for n in _node_field_names(type(x))
                     if isinstance(getattr(x, n), Node) or isinstance(getattr(x, n), tuple)
                     and getattr(x, n)]
            todo.append((_NODE, (x, names)))
            todo.extend((_ENTER, getattr(x, n)) for n in reversed(names))
        elif step == _TUPLE:
            new = tuple(done[-len(x):])
            del done[-len(x):]
            done.append(x if all(a is b for a, b in zip(new, x)) else new)
        else:
            x, names = x
            values = done[len(done) - len(names):]
            del done[len(done) - len(names):]
            changes = {n: v for n, v in zip(names, values) if v is not getattr(x, n)}
            done.append(with_fields(x, **changes) if changes else x)
    return done[0]


_ENTER, _TUPLE, _NODE = range(3)   # the steps of `rewrite_top_down`


def _rewrite(value, fn, memo):
    """`rewrite` of a node, a tuple or a plain value, by recursion (`_rewrite_deep` takes
    over where that reaches Python's recursion limit)."""
    if isinstance(value, tuple):
        return _rewrite_tuple(value, fn, memo)
    if not isinstance(value, Node):
        return value
    key = id(value)
    hit = memo.get(key)
    if hit is not None:
        return hit[1]
    rebuilt = value
    if children(value):
        changes = {}
        for name in _node_field_names(type(value)):
            field = getattr(value, name)
            new_field = _rewrite(field, fn, memo)
            if new_field is not field:
                changes[name] = new_field
        if changes:
            rebuilt = with_fields(value, **changes)
    result = fn(rebuilt)
    if result is None:
        result = rebuilt
    memo[key] = (value, result)
    return result


def _rewrite_tuple(items, fn, memo):
    new = [_rewrite(v, fn, memo) for v in items]
    for a, b in zip(new, items):
        if a is not b:
            return tuple(new)
    return items


def _rewrite_deep(value, fn, memo):
    """`_rewrite` with an explicit stack, children before parents in field order (the
    order recursion takes): a sequence of thousands of lets nests as deep as it is long.
    ``memo`` may hold what a recursive walk finished before it reached the recursion
    limit."""
    todo = [(value, False)]
    while todo:
        item, ready = todo.pop()
        if not ready:
            if isinstance(item, Node) and id(item) not in memo:
                todo.append((item, True))
                todo.extend((k, False) for k in reversed(children(item)))
            elif isinstance(item, tuple):
                todo.extend((v, False) for v in reversed(item))
            continue
        rebuilt = item
        if children(item):
            changes = {}
            for name in _node_field_names(type(item)):
                field = getattr(item, name)
                new_field = _rebuilt(field, memo)
                if new_field is not field:
                    changes[name] = new_field
            if changes:
                rebuilt = with_fields(item, **changes)
        result = fn(rebuilt)
        memo[id(item)] = (item, rebuilt if result is None else result)
    return _rebuilt(value, memo)


def _rebuilt(value, memo):
    """``value`` (a field) with each node in it replaced by its rewrite in ``memo``."""
    if isinstance(value, Node):
        return memo[id(value)][1]
    if isinstance(value, tuple):
        new = [_rebuilt(v, memo) for v in value]
        for a, b in zip(new, value):
            if a is not b:
                return tuple(new)
    return value
