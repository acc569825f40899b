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
    return _rewrite(node, fn, memo)


def substitute(node, mapping):
    """``node`` with each variable (or other identity node) that is a key of ``mapping``
    replaced by its value."""
    if not mapping:
        return node
    return rewrite(node, lambda n: mapping.get(n) if isinstance(n, IdentityNode) else None)


def rewrite_top_down(node, visit):
    """Rebuild ``node`` replacing, top-down, each node for which ``visit`` returns a
    replacement (not looked into further); ``visit`` sees the original nodes and returns
    None to look inside. Identity nodes (variables, buffers) are not looked into."""
    new = visit(node)
    if new is not None:
        return new
    if isinstance(node, IdentityNode):
        return node
    changes = {}
    for name in _node_field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            new_value = rewrite_top_down(value, visit)
        elif isinstance(value, tuple) and value:
            new_value = _top_down_tuple(value, visit)
        else:
            continue
        if new_value is not value:
            changes[name] = new_value
    return with_fields(node, **changes) if changes else node


def _top_down_tuple(items, visit):
    new = tuple(rewrite_top_down(x, visit) if isinstance(x, Node)
                else _top_down_tuple(x, visit) if isinstance(x, tuple) else x for x in items)
    return items if all(a is b for a, b in zip(new, items)) else new


def _rewrite(value, fn, memo):
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
