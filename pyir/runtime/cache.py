"""The compile cache of `pyir.build`.

An entry is keyed by the structural hash of the module compiled, the names of its prim
functions' parameters and of every variable of its graph functions (structural equality
ignores names, error messages and calls by name do not), what the names its
``call_extern``s and packed calls use are registered as now (a kernel declared again under
its name is other code; a graph call of a Python function is planned other than a
kernel's), the target string and the build options. Hashes are memoized per
object built (IR is immutable), so rebuilding the same object costs a dictionary lookup; a
structurally equal copy costs one hash. The cache keeps the `CAPACITY` most recently used
executables.
"""

import weakref
from collections import OrderedDict

from ..ir import Call, IRModule, PrimFunc, Var, structural_hash, walk
from ..ir.graph import CallDPSPacked, CallPacked, Function, GraphVar

CAPACITY = 64

_entries = OrderedDict()
_hashes = {}


def key(obj, target, options):
    """The cache key of building ``obj`` (a module or a function) for ``target`` with
    ``options`` (a dict)."""
    from ..ffi.registry import get_global_func
    h, externs = _hash(obj)
    kernels = tuple((name, get_global_func(name, allow_missing=True)) for name in externs)
    return (h, kernels, str(target), tuple(sorted((k, repr(v)) for k, v in options.items())))


def get(k):
    exe = _entries.get(k)
    if exe is not None:
        _entries.move_to_end(k)
    return exe


def put(k, exe):
    _entries[k] = exe
    _entries.move_to_end(k)
    while len(_entries) > CAPACITY:
        _entries.popitem(last=False)


def clear():
    _entries.clear()
    _hashes.clear()


def _hash(obj):
    entry = _hashes.get(id(obj))
    if entry is not None and entry[0]() is obj:
        return entry[1]
    funcs = obj.functions if isinstance(obj, IRModule) else ((obj.name, obj),)
    names = tuple((n, tuple(p.name for p in f.params)) if isinstance(f, PrimFunc) else
                  (n, tuple(v.name for v in walk(f) if isinstance(v, (Var, GraphVar))))
                  for n, f in funcs)
    externs = sorted({c.args[0].value for _, f in funcs if isinstance(f, PrimFunc)
                      for c in walk(f.body) if isinstance(c, Call) and c.op == "call_extern"}
                     | {c.name for _, f in funcs if isinstance(f, Function)
                        for c in walk(f) if isinstance(c, (CallPacked, CallDPSPacked))})
    h = ((type(obj).__name__, structural_hash(obj), names), tuple(externs))
    ident = id(obj)
    _hashes[ident] = (weakref.ref(obj, lambda _: _hashes.pop(ident, None)), h)
    return h
