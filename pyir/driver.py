"""`pyir.build`: lower, generate LLVM code and JIT-compile a module, through the cache.

Prim functions take the path here: `pyir.transform.lower`, `pyir.codegen.llvm.codegen`,
then `pyir.runtime.Executable.jit`. Graph functions are dispatched by `_build_graph`, which
is not implemented yet.
"""

import dataclasses

from .errors import Error
from .ir import BufferStore, Function, IRModule, PrimFunc, walk
from .runtime import cache


def build(mod_or_func, target="llvm", default_schedule=True, opt_level="O3",
          use_cache=True, **options):
    """Compile ``mod_or_func`` (an IRModule, PrimFunc or graph Function) for ``target``
    ("llvm" is the host CPU with all its features) and return an `Executable`.

    ``default_schedule`` parallelizes and vectorizes unscheduled loops; ``opt_level`` is
    the LLVM IR pipeline ("none", "fast", "O1".."O3", or 0-3; machine code is always
    optimized); other ``options`` go to the code generator. Rebuilding a structurally
    equal module with the same arguments returns the cached executable (``use_cache=False``
    compiles anyway).
    """
    mod = as_module(mod_or_func)
    graph = [name for name, f in mod.functions if isinstance(f, Function)]
    if graph:
        return _build_graph(mod, graph)
    if not mod.functions:
        raise Error("pyir.build: the module has no functions to compile")
    from .runtime.engine import ir_level
    opt_level = ir_level(opt_level)
    settings = dict(options, default_schedule=default_schedule, opt_level=opt_level)
    k = cache.key(mod_or_func, target, settings) if use_cache else None
    exe = cache.get(k) if use_cache else None
    if exe is None:
        exe = _build_prims(mod, target, default_schedule, opt_level, options)
        if use_cache:
            cache.put(k, exe)
    return exe


def as_module(mod_or_func):
    if isinstance(mod_or_func, IRModule):
        return mod_or_func
    if isinstance(mod_or_func, (PrimFunc, Function)):
        return IRModule.from_dict({mod_or_func.name: mod_or_func})
    raise Error(f"pyir.build expects an IRModule, a prim function or a graph function, got "
                f"{type(mod_or_func).__name__}")


def _build_prims(mod, target, default_schedule, opt_level, options):
    from .codegen.llvm import codegen
    from .codegen.target import Target
    from .runtime import Executable
    from .transform import lower
    tgt = Target.from_string(target)
    llvm_ir, infos = codegen(lower(mod, default_schedule=default_schedule), tgt, **options)
    infos = [_mark_writes(info, mod[info.name]) if info.name in mod else info for info in infos]
    return Executable.jit(llvm_ir, infos, tgt, opt_level)


def _mark_writes(info, func):
    """``info`` with ``writes`` set on the buffer parameters ``func`` stores into."""
    stored = {id(n.buffer) for n in walk(func.body) if isinstance(n, BufferStore)}
    params = tuple(dataclasses.replace(p, writes=p.writes or id(b) in stored)
                   if p.kind == "buffer" else p for p, b in zip(info.params, func.params))
    return dataclasses.replace(info, params=params)


def _build_graph(mod, names):
    raise Error(f"pyir.build: graph functions ({', '.join(names)}) cannot be compiled yet; "
                "build a module of prim functions")
