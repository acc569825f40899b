"""The global function registry: one name space for Python packed functions, extern
native kernels and every compiled function."""

import threading

from pyir.errors import ArgumentTypeError, Error, MissingNameError

_REGISTRY = {}
_LOCK = threading.Lock()


def _check_name(what, name):
    if not isinstance(name, str) or not name:
        raise ArgumentTypeError(f"{what} needs a non-empty string name, got {name!r}")


def register_func(name, func=None, override=False):
    """Register ``func`` under ``name``; usable as ``@register_func("name")`` or
    ``register_func("name", f)``. Registering a taken name needs ``override=True``."""
    _check_name("register_func", name)

    def do_register(f):
        if not callable(f):
            raise ArgumentTypeError(f"register_func({name!r}): {f!r} is not callable")
        with _LOCK:
            if name in _REGISTRY and not override:
                raise Error(f"a global function named {name!r} is already registered; pass "
                            "override=True to replace it")
            _REGISTRY[name] = f
        return f

    return do_register if func is None else do_register(func)


def get_global_func(name, allow_missing=False):
    """The function registered under ``name`` (None if missing and ``allow_missing``)."""
    _check_name("get_global_func", name)
    f = _REGISTRY.get(name)
    if f is None and not allow_missing:
        close = [n for n in _REGISTRY if n.split(".")[-1] == name.split(".")[-1]]
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise MissingNameError(f"no global function named {name!r} is registered{hint}")
    return f


def list_global_funcs():
    """Sorted names of every registered function."""
    return sorted(_REGISTRY)


def remove_global_func(name):
    """Unregister ``name`` (a no-op if it is not registered)."""
    _check_name("remove_global_func", name)
    with _LOCK:
        _REGISTRY.pop(name, None)
