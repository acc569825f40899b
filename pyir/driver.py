"""`pyir.build`: lower, generate LLVM code and JIT-compile a module, through the cache.

Prim functions take the path here: `pyir.transform.lower`, then
`pyir.codegen.llvm.codegen_units`, whose compile units a `pyir.runtime.engine.JitEngine`
compiles as they come; graph functions are legalized and planned by `_build_graph` and
compiled with them. `build` then registers the module's functions in the ffi registry.
"""

import dataclasses

from .errors import TOO_DEEP, ArgumentTypeError, Error
from .gcpause import gc_paused
from .ir import Function, IRModule, PrimFunc
from .runtime import cache
from .transform.common import written_params


def build(mod_or_func, target="llvm", default_schedule=True, opt_level="auto",
          use_cache=True, **options):
    """Compile ``mod_or_func`` (an IRModule, PrimFunc or graph Function) for ``target``
    ("llvm" is the host CPU with all its features) and return an `Executable`.

    ``default_schedule`` parallelizes and vectorizes unscheduled loops; ``opt_level`` is
    the LLVM IR pipeline ("none", "fast", "auto", "O1".."O3", or 0-3; machine code is
    always optimized). "fast" is for hand-scheduled kernels: a few cheap IR passes, and
    machine code without loop strength reduction (codegen already hoists loop-invariant
    addresses; see `pyir.codegen.compile`); a scheduled matmul builds in half the time of
    "O3". "auto" gives "O3" to the code with loops codegen left to LLVM (a reduction, a
    loop no schedule vectorized) and "fast" to the rest, compile unit by compile unit. Other
    ``options`` go to the code generator. Rebuilding a structurally
    equal module with the same arguments returns the cached executable (``use_cache=False``
    compiles anyway). Python's cyclic garbage collector pauses while it compiles (see
    `pyir.gcpause`).

    Every function of the module is then in the ffi registry under its name (a name that
    something else holds, such as a Python function, is an Error before anything compiles),
    so that graph code, packed kernels and Python call it by name.
    """
    own = as_module(mod_or_func).names()
    _check_names_free(own)
    exe = compile_module(mod_or_func, target, default_schedule, opt_level, use_cache,
                         **options)
    if not exe.missing_features:   # else code that cannot run here (see Executable)
        from pyir.ffi import register_func
        for name in own:
            try:
                fn = exe[name]
            except Error:   # no call could run it; ``lib[name]`` says why
                continue
            register_func(name, fn, override=True)
    return exe


def compile_module(mod_or_func, target="llvm", default_schedule=True, opt_level="auto",
                   use_cache=True, **options):
    """`build` without putting the functions in the registry (an extern kernel's own
    wrapper, `pyir.ffi.extern.ExternKernel`, whose name the kernel holds there)."""
    _check_options(default_schedule, use_cache, options)
    with gc_paused():
        try:
            return _build(mod_or_func, target, default_schedule, opt_level, use_cache, options)
        except RecursionError:
            names = ", ".join(name for name, _ in as_module(mod_or_func).functions)
            raise Error(f"pyir.build: {names}: {TOO_DEEP}; split it into smaller ones") \
                from None


def _check_names_free(names):
    """An Error for a function name of the module that the registry holds for something
    other than a compiled function (which a build replaces)."""
    from pyir.ffi import get_global_func

    from .runtime.function import PrimFunction
    from .runtime.graph_function import GraphFunction
    for name in names:
        taken = get_global_func(name, allow_missing=True)
        if taken is not None and not isinstance(taken, (PrimFunction, GraphFunction)):
            raise Error(f"function {name} of the module would replace {taken!r}, registered "
                        f"as {name!r}: a built module registers its functions under their "
                        "names; rename one of them")


#: The code generator's options `build` passes on (`pyir.codegen.llvm.codegen_units`).
CODEGEN_OPTIONS = ("externs",)


def _check_options(default_schedule, use_cache, options):
    """An `ArgumentTypeError` for a switch of `build` that is not a bool (``"no"`` would
    count as True), for an option the code generator does not take, and for ``externs``
    other than a dict of str to str."""
    for name, value in (("default_schedule", default_schedule), ("use_cache", use_cache)):
        if not isinstance(value, bool):
            raise ArgumentTypeError(f"pyir.build: {name} must be True or False, got "
                                    f"{type(value).__name__} {value!r}")
    for name in options:
        if name not in CODEGEN_OPTIONS:
            raise ArgumentTypeError(
                f"pyir.build got an unknown keyword argument {name!r}; it takes target, "
                f"default_schedule, opt_level, use_cache and {', '.join(CODEGEN_OPTIONS)}")
    externs = options.get("externs", {})
    if not isinstance(externs, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in externs.items()):
        raise ArgumentTypeError(f"pyir.build: externs must map kernel names to the symbols "
                                f"to call (a dict of str to str), got {externs!r}")


def _build(mod_or_func, target, default_schedule, opt_level, use_cache, options):
    mod = as_module(mod_or_func)
    if not mod.functions:
        raise Error("pyir.build: the module has no functions to compile")
    from .runtime.engine import ir_level
    opt_level = ir_level(opt_level)
    settings = dict(options, default_schedule=default_schedule, opt_level=opt_level)
    k = cache.key(mod_or_func, target, settings) if use_cache else None
    exe = cache.get(k) if use_cache else None
    if exe is None:
        graph = [name for name, f in mod.functions if isinstance(f, Function)]
        exe = (_build_graph(mod, graph, target, default_schedule, opt_level, options) if graph
               else _build_prims(mod, target, default_schedule, opt_level, options))
        if use_cache:
            cache.put(k, exe)
    return exe


def as_module(mod_or_func):
    if isinstance(mod_or_func, IRModule):
        return mod_or_func
    if isinstance(mod_or_func, (PrimFunc, Function)):
        return IRModule.from_dict({mod_or_func.name: mod_or_func})
    raise ArgumentTypeError(f"pyir.build expects an IRModule, a prim function or a graph "
                            f"function, got {type(mod_or_func).__name__}")


def _build_prims(mod, target, default_schedule, opt_level, options, extra=None):
    from pyir.ffi.extern import IRLinker, kernels_called

    from .codegen.llvm import codegen_units
    from .codegen.target import Target
    from .runtime import Executable
    from .runtime.engine import JitEngine
    from .transform import lower
    tgt = Target.from_string(target)
    kernels = kernels_called(mod)
    options.setdefault("externs", {k.name: k.symbol for k in kernels})
    lowered = lower(mod, default_schedule=default_schedule, target=tgt)
    symbols = {k.symbol: k.address for k in kernels if k.address is not None}
    link = IRLinker(kernels)
    with JitEngine(tgt, opt_level, symbols) as engine:
        infos = codegen_units(lowered, lambda text: engine.add(link(text)), tgt, extra=extra,
                              **options)
    infos = [_mark_writes(info, mod[info.name]) if info.name in mod else info for info in infos]
    return Executable.from_engine(engine, infos, symbols)


def _mark_writes(info, func):
    """``info`` with ``writes`` set on the buffer parameters ``func`` may write
    (`pyir.transform.common.written_params`), and ``written_by`` saying why on those a kernel
    it calls may write."""
    written = written_params(func)
    params = tuple(p if k not in written else dataclasses.replace(
        p, writes=True, written_by="" if written[k] is None else _written_by(*written[k]))
        for k, p in enumerate(info.params))
    return dataclasses.replace(info, params=params)


def _written_by(kernel, param):
    return (f"it is passed to kernel {kernel.name} as {param}, which the kernel may write "
            f"({kernel.why_written(param)})")


def _build_graph(mod, names, target, default_schedule, opt_level, options):
    """Legalize operators, add the extern kernels graph code calls, and compile the prim
    functions and the graph functions (as `GraphPlan`s) into one module."""
    from pyir.ffi.extern import kernels_called_from_graph

    from .codegen.graph import graph_emitter
    from .transform.graph_plan import lower_graph
    from .transform.legalize import legalize
    mod = legalize(mod)
    for kernel in kernels_called_from_graph(mod):
        if kernel.name not in mod:
            mod = mod.with_function(kernel.name, kernel.prim)
    prims = IRModule(tuple((n, f) for n, f in mod.functions if isinstance(f, PrimFunc)))
    plans = []

    def emit_graphs(ctx, infos):
        by_name = {i.name: i for i in infos}
        plans.extend(lower_graph(mod, name, by_name) for name in names)
        graph_emitter(plans)(ctx, infos)

    exe = _build_prims(prims, target, default_schedule, opt_level, options, emit_graphs)
    for plan in plans:
        exe.add_graph_function(plan)
    return exe
