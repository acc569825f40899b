"""Error messages for calls of compiled functions.

`pyir.runtime.function` detects a bad argument on its fast path and calls one of these to
build the error: each names the function, the argument, what was expected and what came.
"""

import numpy as np

from ..arith import simplify
from ..codegen.abi import STATUS_EXTERN_FAILED, STATUS_NO_MEMORY, evaluate
from ..errors import ArgumentTypeError, ArgumentValueError, Error
from ..ir import substitute
from .exprtext import expr_text, vars_in


def signature(info):
    """``name(A: float32[n, 4], alpha: float32)``."""
    return f"{info.name}({', '.join(param_text(p) for p in info.params)})"


def param_text(p):
    if p.kind == "scalar":
        return f"{p.name}: {p.dtype}"
    if p.kind == "shape":
        return f"{p.name}: shape{_expected_shape(p)}"
    return f"{p.name}: {p.dtype}[{', '.join(expr_text(s) for s in p.shape)}]"


def _where(info, i):
    return f"{info.name}: argument {info.params[i].name!r}"


def _expected_shape(p):
    dims = [expr_text(s) for s in p.shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


def count_error(info, args):
    names = ", ".join(p.name for p in info.params)
    return ArgumentTypeError(
        f"{info.name} takes {len(info.params)} argument(s) ({names}) but {len(args)} "
        f"{'was' if len(args) == 1 else 'were'} given; signature: {signature(info)}")


def by_position(info, args, named):
    """The arguments of a call of ``info``'s function, given ``args`` by position and
    ``named`` by parameter name, all by position."""
    names = [p.name for p in info.params]
    for key in named:
        if key not in names:
            raise ArgumentTypeError(f"{info.name} has no parameter {key!r}; signature: "
                                    f"{signature(info)}")
        if names.index(key) < len(args):
            raise ArgumentTypeError(f"{info.name}: argument {key!r} is given by position and "
                                    "by name")
    missing = [n for n in names[len(args):] if n not in named]
    if missing:
        raise ArgumentTypeError(f"{info.name}: no value for argument(s) "
                                f"{', '.join(map(repr, missing))}; signature: {signature(info)}")
    return args + tuple(named[n] for n in names[len(args):])


def as_array(info, i, a):
    """``a`` as an ndarray: objects with ``__dlpack__`` are converted zero-copy."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__dlpack__"):
        try:
            return np.from_dlpack(a)
        except (TypeError, ValueError, BufferError, RuntimeError) as e:
            raise ArgumentTypeError(
                f"{_where(info, i)} expects an array; the object of type {type(a).__name__} "
                f"has __dlpack__ but numpy cannot import it: {e}") from None
    p = info.params[i]
    got = (f"a numpy {a.dtype} scalar, not an array (np.array(x) makes one)"
           if isinstance(a, np.generic) else type(a).__name__)
    raise ArgumentTypeError(
        f"{_where(info, i)} expects a numpy array (or an object with __dlpack__) of "
        f"{p.dtype}{_expected_shape(p)}, got {got}")


def scalar_type_error(info, i, a):
    p = info.params[i]
    wanted = {"bool": "a bool"}.get(p.dtype, "an int" if not p.dtype.startswith("float")
                                    else "a float or int")
    if isinstance(a, (bool, np.bool_)) and p.dtype != "bool":
        wanted += " (a bool is not a number here)"
    return ArgumentTypeError(f"{_where(info, i)} is a scalar of dtype {p.dtype} and expects "
                             f"{wanted}, got {type(a).__name__} {_short(a)}")


def scalar_error(info, args):
    """The error for a scalar argument that does not fit its dtype."""
    for i, (p, a) in enumerate(zip(info.params, args)):
        if p.kind == "scalar":
            why = out_of_range(p.dtype, a)
            if why:
                return ArgumentValueError(f"{_where(info, i)} is a scalar of dtype {p.dtype}; "
                                          f"{why}")
    return Error(f"{info.name}: the scalar arguments could not be stored for the call")


def out_of_range(dtype, value):
    """Why the number ``value`` cannot be stored as a ``dtype`` scalar, or None."""
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    if dtype == "bool":
        return None
    if dtype.startswith("float"):
        limit = float(np.finfo(dtype).max)
        try:
            big = abs(float(value)) > limit and np.isfinite(float(value))
        except OverflowError:
            big = True
        return f"{shown} is outside its range (±{limit:g})" if big else None
    if not isinstance(value, (int, np.integer)):
        return f"{shown} is not an integer"
    lo, hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    return None if lo <= int(value) <= hi else f"{shown} is outside its range [{lo}, {hi}]"


def dtype_error(info, i, a):
    return ArgumentTypeError(f"{_where(info, i)} expects dtype {info.params[i].dtype}, "
                             f"got an array of {a.dtype}")


def rank_error(info, i, a):
    p = info.params[i]
    return ArgumentTypeError(f"{_where(info, i)} expects {len(p.shape)} dimension(s) "
                             f"{_expected_shape(p)}, got {a.ndim} with shape {a.shape}")


def as_shape(info, i, a):
    """``a``, the argument of shape parameter ``i``: a tuple or list of as many
    non-negative int64 values as the parameter has, as a tuple of ints."""
    p = info.params[i]
    if not int_sequence(a) or len(a) != len(p.shape):
        raise ArgumentTypeError(
            f"{_where(info, i)} expects a shape {_expected_shape(p)}: a tuple of "
            f"{len(p.shape)} int(s), got {type(a).__name__} {_short(a)}")
    shape = tuple(int(v) for v in a)
    if not int64_sizes(shape):
        raise ArgumentValueError(
            f"{_where(info, i)} expects a shape {_expected_shape(p)} of non-negative int64 "
            f"values, got {_short(a)}")
    return shape


def int_sequence(a):
    """Whether ``a`` is a tuple or list of ints (numpy's too, not bools): a shape's form."""
    return isinstance(a, (tuple, list)) and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in a)


def int64_sizes(values):
    """Whether the ints ``values`` are sizes: non-negative int64 values."""
    return all(0 <= v < 2 ** 63 for v in values)


def shape_error(info, i, d, shape):
    p = info.params[i]
    return ArgumentValueError(
        f"{_where(info, i)} expects shape {_expected_shape(p)}, got {shape}: "
        f"dimension {d} must be {expr_text(p.shape[d])} but is {shape[d]}")


def symbol_error(info, source, value, i, d, shape):
    """Shape variable at ``params[i].shape[d]`` disagrees with its value from ``source``
    (the (parameter, dimension) that first bound it); ``shape`` is argument ``i``'s."""
    var = info.params[i].shape[d]
    j, e = source
    return ArgumentValueError(
        f"{info.name}: shape variable {var.name} is {value} from "
        f"{_dimension(info.params[j], e)} but {shape[d]} from "
        f"{_dimension(info.params[i], d)} (argument {info.params[i].name!r} expects shape "
        f"{_expected_shape(info.params[i])}, got {shape})")


def _dimension(p, d):
    """Dimension ``d`` of parameter ``p``: ``x.shape[1]``, or ``s[1]`` of a shape."""
    return f"{p.name}[{d}]" if p.kind == "shape" else f"{p.name}.shape[{d}]"


def dimension_vars(info):
    """The variables the binder of ``info`` knows dimensions by: the shape variables, then
    those that are integer scalar parameters (``n: T.int64`` beside ``A: T.Buffer(("n",),
    ...)``: the call passes ``n``, and ``A`` must have ``n`` elements), with the index of
    that parameter (None for a shape variable)."""
    scalars = {p.name: k for k, p in enumerate(info.params)
               if p.kind == "scalar" and p.dtype.startswith(("int", "uint"))}
    found = dict.fromkeys(info.shape_vars)
    for p in info.params:
        for e in p.shape:
            for v in vars_in(e):
                if v not in found and v.name in scalars:
                    found[v] = scalars[v.name]
    return list(found.items())


def _dimension_values(info, shape_values):
    """{variable: value} of `dimension_vars`, given their values in that order."""
    return dict(zip((v for v, _ in dimension_vars(info)), shape_values))


def expr_dim_error(info, i, d, shape, shape_values):
    """A dimension given by an expression of shape variables (``n * 2``) does not match;
    ``shape_values`` are those of `dimension_vars`."""
    values = _dimension_values(info, shape_values)
    e = info.params[i].shape[d]
    known = ", ".join(f"{v.name} = {values[v]}" for v in vars_in(e))
    return ArgumentValueError(
        f"{_where(info, i)} expects shape {_expected_shape(info.params[i])}, got {shape}: "
        f"dimension {d} must be {expr_text(e)} = {evaluate(e, values)} (with {known}) but "
        f"is {shape[d]}")


def divisor_error(info, shape_values):
    """A dimension given by an expression of shape variables divides by 0 (``shape_values``
    as `expr_dim_error` takes them)."""
    values = _dimension_values(info, shape_values)
    for i, p in enumerate(info.params):
        for d, e in enumerate(p.shape):
            try:
                evaluate(e, values)
            except ArgumentValueError as err:
                known = ", ".join(f"{v.name} = {values[v]}" for v in vars_in(e))
                return ArgumentValueError(
                    f"{_where(info, i)} expects shape {_expected_shape(p)}: dimension {d}, "
                    f"{expr_text(e)}, cannot be computed: {err} (with {known})")
    return Error(f"{info.name}: a dimension divides by 0")


def contiguity_error(info, i, a):
    return ArgumentValueError(
        f"{_where(info, i)} must be C-contiguous, got an array with shape {a.shape} and "
        f"strides {a.strides}; pass np.ascontiguousarray(...) of it")


def readonly_error(info, i):
    by = info.params[i].written_by
    if by:
        return ArgumentValueError(f"{_where(info, i)} is a read-only array (not writeable), "
                                  f"but {by}")
    return ArgumentValueError(f"{_where(info, i)} is written by the function but the array "
                              "passed is read-only (not writeable)")


def alignment_error(info, i, pointer):
    size = np.dtype(info.params[i].dtype).itemsize
    return ArgumentValueError(
        f"{_where(info, i)} must be aligned to its element size ({size} bytes) but its "
        f"data starts at address {pointer:#x} (offset {pointer % size})")


def overlap_error(info, w, j):
    by = info.params[w].written_by
    what = (f"overlaps argument {info.params[j].name!r} in memory, and {by}" if by else
            f"is written by the function and overlaps argument {info.params[j].name!r} in "
            "memory")
    return ArgumentValueError(f"{_where(info, w)} {what}; pass distinct arrays (compiled code "
                              "assumes buffers do not alias)")


def status_error(info, status, shape_values, scalar_values=None, caller=None):
    """The error for a non-zero status returned by the native function (``scalar_values``:
    those of the scalar parameters, when known). ``caller``: ``(exprs, env)`` when a graph
    function made the call, ``exprs`` its expressions for the shape variables and ``env``
    the values of its own; a failed condition is then written in the caller's variables
    (``requires b >= 1, but b = 0``, not ``d1 >= 1``) unless it is constant there."""
    if status == STATUS_NO_MEMORY:
        return Error(f"{info.name}: out of memory while allocating a temporary buffer")
    if status == STATUS_EXTERN_FAILED:
        return Error(f"{info.name}: an external kernel it calls reported failure")
    checked = status - len(info.conditions)
    if 0 < checked <= len(info.access_checks):
        return ArgumentValueError(f"{info.name}: {info.access_checks[checked - 1]}, but it "
                                  "did not as the function ran")
    if not 0 < status <= len(info.conditions):
        return Error(f"{info.name}: the native function returned unknown status {status}")
    cond = info.conditions[status - 1]
    expr = cond.expr
    values = dict(zip(info.shape_vars, shape_values))
    if scalar_values is not None:
        values.update(zip(info.scalar_vars, scalar_values))
    if caller is not None and set(vars_in(expr)) <= set(info.shape_vars):
        exprs, env = caller
        in_caller = simplify(substitute(expr, dict(zip(info.shape_vars, exprs))))
        if vars_in(in_caller):    # else it is False, and says less than the callee's terms
            expr, values = in_caller, env
    known = ", ".join(f"{v.name} = {values[v]}" for v in vars_in(expr) if v in values)
    return ArgumentValueError(f"{info.name}: {cond.message}: requires {expr_text(expr)}"
                              + (f", but {known}" if known else ""))


def _short(a):
    text = repr(a)
    return text if len(text) <= 40 else text[:37] + "..."
