"""Hand-written native kernels declared with T annotations: ``@pyir.ffi.extern(name, ...)``.

The declaration's signature is read by the T parser (its body is ``...``) into a prim
function that calls the kernel once, passing each buffer's data pointer and each scalar's
value in parameter order (a scalar named like a shape variable is filled from the shapes).
That wrapper is the kernel's interface everywhere: graph code calls it like any prim
function (its shapes checked at the call), Python calls it through the same generated
argument checks as a compiled function, and ``T.call_extern(name, ...)`` in prim functions
calls the kernel itself (``dtype="void"``: a kernel returns nothing, it writes its results
into the buffers it is passed). Such a call is checked against the kernel's declaration
(`check_extern_call`) by the parser, at the call's line, when the kernel is declared before
the prim function is parsed, and by `pyir.build` (a module put together in code, a kernel
declared later, a call the schedule makes). What the kernel reaches from each address a call
passes (`reach`: its declared shape, rows a stride apart included, or less where the tensor
intrinsics it implements describe it) must lie in the buffer: the build proves it or checks
it at entry (`pyir.transform.entry_conditions`). The call gives the variables of the declared
shapes: a scalar parameter's by its argument, one the kernel does not take by a whole buffer
passed where the declaration has it as an extent (`_call_values`); a call that leaves one
unknown is refused (nothing would bound what the kernel reaches).

A kernel is native code at an address (``symbol=`` a ctypes function) or LLVM IR text
(``llvm_ir=``, defining exactly one function) linked into every module that calls it, so
LLVM may inline it (`IRLinker`). LLVM reads the text when it is declared: the function must
take what the declaration passes, and whatever it uses without defining must be the
process's (`_check_llvm_ir`); the text linked is LLVM's print of it, with its numbered
metadata, attribute groups and global variables renamed apart from any other's
(`_linkable`).

A kernel writes some of its buffers and only reads the others. ``writes=`` names the ones it
writes; without it, native code (``symbol=``) is taken to write every buffer (nothing says
otherwise), and LLVM IR every buffer LLVM cannot prove it only reads (`_unproven_reads`). A
read-only array is then refused for such a buffer by the argument checks of the kernel's
wrapper, and of a prim function passing its own buffer there
(`pyir.transform.common.written_params`). In graph code, ``call_dps_packed`` takes native
code declared without ``writes=`` at the call's word (it writes the outputs), and refuses a
kernel known to write an input (`pyir.transform.graph_plan`).
"""

import ctypes
import dataclasses
import re
import sys
import types

from pyir.errors import ArgumentTypeError, Error

from .registry import register_func

#: What generated code calls a kernel given by address (``symbol=``): this prefix and the
#: kernel's name (the JIT maps it to the address; an exported library renames it).
SYMBOL_PREFIX = "pyir.extern."

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_DEFINE = re.compile(r'^\s*define\b([^@]*)@(?:"([^"]+)"|([-\w.$]+))\s*\(', re.MULTILINE)
#: The whole line of a ``define``, attributes after the parameters included.
_DEFINE_LINE = re.compile(r'^\s*define\b[^\n]*', re.MULTILINE)
_DECLARE_LINE = re.compile(r'^\s*declare\b[^@\n]*@"?([-\w.$]+)"?\s*\([^\n]*\n?', re.MULTILINE)
_DECLARE = re.compile(r'^\s*declare\b[^@\n]*@"?([-\w.$]+)"?\s*\(', re.MULTILINE)


class ExternKernel:
    """A registered native kernel: ``prim`` is its wrapper prim function; ``symbol`` the
    LLVM name generated code calls; ``address`` (for ctypes kernels) or ``llvm_ir``;
    ``writes`` the names of the buffer parameters it may write (a frozenset): those named
    by ``extern(writes=...)`` when ``writes_declared``, else every one for native code and
    those LLVM cannot prove it only reads for LLVM IR."""

    def __init__(self, name, prim, symbol, writes, writes_declared, address=None,
                 llvm_ir=None):
        self.name, self.prim, self.symbol = name, prim, symbol
        self.writes, self.writes_declared = writes, writes_declared
        self.address, self.llvm_ir = address, llvm_ir
        self._compiled = None

    @property
    def needs_inliner(self):
        """Whether only LLVM's O3 inliner inlines the kernel where it is called: LLVM IR
        whose define line and its attribute groups do not say ``alwaysinline`` (the "fast"
        pipeline inlines only those; native code is never inlined). A loop that calls it
        goes to O3 (`pyir.codegen.emit_stmt`)."""
        if self.llvm_ir is None:
            return False
        line = _DEFINE_LINE.search(self.llvm_ir).group(0)
        attributes = [line] + [a for g in re.findall(r"#(\d+)", line) for a in re.findall(
            rf"^attributes #{g} = ([^\n]*)", self.llvm_ir, re.MULTILINE)]
        return not any("alwaysinline" in a for a in attributes)

    @property
    def writes_assumed(self):
        """Whether nothing but caution says what the kernel writes (native code declared
        without ``writes=``): a destination-passing call's convention then holds."""
        return not self.writes_declared and self.llvm_ir is None

    def written_param(self, k):
        """The name of the buffer parameter the kernel takes as argument ``k`` of a
        ``call_extern`` (counted after the name) if it may write it, else None."""
        name = self.prim.body.value.args[1 + k].name
        return name if name in self.writes else None

    def why_written(self, param):
        """Why the kernel may write its buffer parameter named ``param`` (in ``writes``),
        for error messages."""
        if self.writes_declared:
            return f"its declaration names {param} in writes="
        if self.llvm_ir is not None:
            return (f"LLVM cannot prove that @{self.symbol} only reads {param}; if it does, "
                    "mark that argument readonly in the IR")
        return (f"nothing says it only reads {param}: declare what it writes with "
                "pyir.ffi.extern(..., writes=...)")

    def __call__(self, *args):
        """Run the kernel on ``args`` (arrays and scalars, in parameter order) after the
        argument checks of a compiled function."""
        if self._compiled is None:
            from pyir.driver import compile_module
            self._compiled = compile_module(self.prim)[self.name]
        return self._compiled(*args)

    def __repr__(self):
        return f"<pyir extern kernel {self.name} -> {self.symbol}>"


def extern(name, symbol=None, llvm_ir=None, override=False, writes=None):
    """Decorator declaring the native kernel ``name`` (see the module docstring); the
    decorated declaration is replaced by the `ExternKernel`, also in the registry.
    ``writes`` names the buffer parameters the kernel writes (a str, or a tuple or list of
    them); None leaves it to the defaults of the module docstring."""
    if not (isinstance(name, str) and _NAME.fullmatch(name)):
        raise Error(f"pyir.ffi.extern({name!r}): a kernel's name is ASCII letters, digits, "
                    "'_', '.' and '-', not starting with a digit (like \"mylib.saxpy\")")
    if (symbol is None) == (llvm_ir is None):
        raise Error(f"pyir.ffi.extern({name!r}) needs exactly one of symbol= (a ctypes "
                    "function) or llvm_ir= (LLVM IR text)")
    if llvm_ir is not None and not isinstance(llvm_ir, str):
        raise ArgumentTypeError(f"pyir.ffi.extern({name!r}): llvm_ir= is the LLVM IR text of "
                                f"the kernel (a str), got {type(llvm_ir).__name__} "
                                f"{llvm_ir!r}")
    declared = (writes,) if isinstance(writes, str) else writes
    if declared is not None and not (isinstance(declared, (tuple, list))
                                     and all(isinstance(w, str) for w in declared)):
        raise Error(f"pyir.ffi.extern({name!r}): writes= names the buffer parameters the "
                    "kernel writes: a str, or a tuple or list of str, got "
                    f"{type(writes).__name__} {writes!r}")

    def declare(decl):
        if not isinstance(decl, types.FunctionType):
            raise Error(f"pyir.ffi.extern({name!r}) decorates a function declaring the "
                        "kernel's parameters (def kernel(x: T.Buffer(...), ...): ...), not "
                        f"{type(decl).__name__} {decl!r}")
        from pyir.ir import Buffer
        frame = sys._getframe(1)
        text = llvm_ir
        if text is not None:
            text = _HEADER.sub("", text)
            defined = _DEFINE.findall(text)
            if len(defined) != 1:
                raise Error(f"pyir.ffi.extern({name!r}): the LLVM IR text must define exactly "
                            f"one function, it defines {len(defined)}")
            sym, address = defined[0][1] or defined[0][2], None
        else:
            if not isinstance(symbol, ctypes._CFuncPtr):
                raise Error(f"pyir.ffi.extern({name!r}): symbol= must be a ctypes function "
                            f"(such as ctypes.CDLL(path).name), got {type(symbol).__name__} "
                            f"{symbol!r}")
            address = ctypes.cast(symbol, ctypes.c_void_p).value
            if not _in_code(address):
                raise Error(f"pyir.ffi.extern({name!r}): symbol= must be a ctypes function "
                            f"with the address of code, got {symbol!r} at "
                            f"{address or 0:#x}, which is {'data' if address else 'null'}")
            sym = SYMBOL_PREFIX + name
        prim = _wrapper(name, decl, frame)
        buffers = [a.name for a in prim.body.value.args[1:] if isinstance(a, Buffer)]
        unknown = next((w for w in declared or () if w not in buffers), None)
        if unknown is not None:
            raise Error(f"pyir.ffi.extern({name!r}): writes= names {unknown!r}, but the "
                        "declaration has no buffer parameter of that name (its buffer "
                        f"parameters: {', '.join(buffers) or 'none'})")
        if text is None:
            unproven = buffers   # native code: nothing proves that it only reads one
        else:
            text, unproven = _check_llvm_ir(name, prim, text, sym)
            omitted = [b for b in unproven if declared is not None and b not in declared]
            if omitted:
                them = "it" if len(omitted) == 1 else "them"
                raise Error(f"pyir.ffi.extern({name!r}): writes= does not name "
                            f"{', '.join(omitted)}, but LLVM cannot prove that @{sym} only "
                            f"reads {them}: name {them} in writes= (or, if the function only "
                            f"reads {them}, mark {them} readonly in the IR)")
        written = unproven if declared is None else declared
        kernel = ExternKernel(name, prim, sym, frozenset(written), declared is not None,
                              address, text)
        register_func(name, kernel, override=override)
        return kernel

    return declare


#: Module-level lines of an LLVM IR file (as ``clang -S -emit-llvm`` writes them) that a
#: kernel's text blanks: it is linked into modules that have their own. (Module flags, such
#: as clang's "wchar_size", would be defined twice in a module calling two such kernels.)
_HEADER = re.compile(r"^[ \t]*(source_filename|target[ \t]+(datalayout|triple)|"
                     r"!llvm\.module\.flags)[ \t]*=.*$", re.MULTILINE)

#: A string or a comment of LLVM IR text (group 1), or a numbered metadata node or
#: attribute group: its sigil (group 2) and number (group 3).
_NUMBERED = re.compile(r'("[^"]*"|;[^\n]*)|([!#])(\d+)\b')

#: The numbers a kernel's metadata nodes and attribute groups may take: each kernel's
#: are moved into a range of its own, above the ones generated code numbers from 0.
ID_RANGE = 1 << 20
_id_bases = {}


def _check_llvm_ir(name, prim, text, sym):
    """Refuse the LLVM IR ``text`` of kernel ``name`` unless LLVM reads it, the function
    ``sym`` it defines takes what the declaration ``prim`` passes (a pointer per buffer, each
    scalar's type), every symbol it uses without defining it is the process's (a function
    of the process where it calls one; else the call jumps to address 0 or into data),
    ``sym`` is not (it would replace the process's in the modules it is linked into), and no
    other kernel defines ``sym`` differently (a module would link one of them and call it
    for both). Return the text to link into compile units (`_linkable`) and the names of the
    buffers LLVM cannot prove ``sym`` only reads (`_unproven_reads`)."""
    import llvmlite.binding as llvm

    from pyir.codegen import types as T
    from pyir.codegen.abi import METADATA_SYMBOL, entry_symbol
    from pyir.codegen.compile import parse
    from pyir.ir import Buffer
    from pyir.runtime.threadpool import ENTRY_SYMBOL, NUM_THREADS_SYMBOL
    where = f"pyir.ffi.extern({name!r})"
    if sym in (ENTRY_SYMBOL, NUM_THREADS_SYMBOL, METADATA_SYMBOL) or _process_symbol(sym) \
            or sym.startswith(entry_symbol("")):
        raise Error(f"{where}: the LLVM IR defines @{sym}, which the process or pyir's runtime "
                    "defines: in the modules that call the kernel it would replace that one; "
                    "give the function another name")
    try:
        mod = parse(text, llvm.create_context())
    except RuntimeError as e:
        found = re.search(r":(\d+):(\d+): error: ([^\n]*)", str(e))
        reason = (f"line {found[1]}, column {found[2]}: {found[3]}" if found
                  else str(e).strip().splitlines()[-1])
        raise Error(f"{where}: LLVM cannot read the IR text: {reason}") from None
    try:
        fn = mod.get_function(sym)
        wanted = [("ptr", f"buffer {a.name}") if isinstance(a, Buffer) else
                  (str(T.memory_type(a.dtype)), f"{a.dtype} {a.name}")
                  for a in prim.body.value.args[1:]]
        returns, *takes = [str(t) for t in fn.global_value_type.elements]
        if returns != "void":
            raise Error(f"{where}: @{sym} returns {returns}; a kernel returns nothing (void): "
                        "it writes its results into the buffers it is passed")
        if takes != [w for w, _ in wanted]:
            raise Error(f"{where}: @{sym} takes ({', '.join(takes)}), but the declaration "
                        f"passes ({', '.join(what for _, what in wanted)}), that is "
                        f"({', '.join(w for w, _ in wanted)})")
        missing = [f"@{g.name}" for g in list(mod.functions) + list(mod.global_variables)
                   if g.is_declaration and not g.name.startswith("llvm.")
                   and not (_process_symbol(g.name) or llvm.address_of_symbol(g.name))]
        if missing:
            raise Error(f"{where}: the LLVM IR uses {', '.join(missing)}, which neither it "
                        "nor the process defines")
        data = [f"@{f.name}" for f in mod.functions if f.is_declaration
                and not f.name.startswith("llvm.")
                and not _in_code(llvm.address_of_symbol(f.name) or _process_symbol(f.name))]
        if data:
            raise Error(f"{where}: the LLVM IR calls {', '.join(data)}, which the process "
                        "defines as data, not as a function")
        linkable = _linkable(mod, sym)
        unproven = _unproven_reads(mod, fn, prim.body.value.args[1:])
    finally:
        mod.close()
    from .registry import get_global_func, list_global_funcs
    for other in list_global_funcs():
        k = get_global_func(other)
        if isinstance(k, ExternKernel) and k.symbol == sym and k.name != name \
                and k.llvm_ir != linkable:
            raise Error(f"{where}: the LLVM IR defines @{sym}, as kernel {k.name!r} does "
                        "differently; give the function another name")
    return linkable, unproven


def _unproven_reads(mod, fn, args):
    """The names of the buffers among ``args`` (what the declaration passes ``fn``, in
    order) that LLVM cannot prove ``fn`` only reads: LLVM infers the attributes of ``mod``'s
    functions (`pyir.codegen.compile.infer_attributes`, which changes ``mod``: its text is
    taken before), and an argument is only read where it is marked ``readonly`` or
    ``readnone``, or where the function writes no memory at all (``memory(read)``)."""
    from pyir.codegen.compile import infer_attributes
    from pyir.ir import Buffer
    infer_attributes(mod, fn)
    memory = re.search(r"\bmemory\(([^)]*)\)", " ".join(a.decode() for a in fn.attributes))
    if memory and all(e.split(":")[-1].strip() in ("none", "read")
                      for e in memory[1].split(",")):
        return []
    return [a.name for a, arg in zip(args, fn.arguments) if isinstance(a, Buffer)
            and not re.search(r"\b(readonly|readnone)\b",
                              " ".join(x.decode() for x in arg.attributes))]


def _linkable(mod, sym):
    """The text of ``mod``, a kernel's module defining function ``sym``, to append to the
    compile units that call it: as LLVM prints it, with `_HEADER`'s lines blanked, the global
    variables it defines named ``sym.<name>``, and its numbered metadata (``!0``) and
    attribute groups (``#0``) moved into a range of ``sym``'s own (`ID_RANGE`), so that
    neither clashes with the unit's or another kernel's."""
    for g in mod.global_variables:
        if not g.is_declaration:
            g.name = f"{sym}.{g.name}"
    base = _id_bases.setdefault(sym, ID_RANGE * (len(_id_bases) + 1))

    def moved(m):
        if m[1] is not None:
            return m[1]
        if int(m[3]) >= ID_RANGE:
            raise Error(f"the LLVM IR of @{sym} numbers a metadata node or attribute group "
                        f"{m[2]}{m[3]}; kernels number them below {ID_RANGE}")
        return f"{m[2]}{base + int(m[3])}"
    return _NUMBERED.sub(moved, _HEADER.sub("", str(mod)))


def _wrapper(name, decl, frame):
    """The prim function named ``name`` with ``decl``'s signature that calls kernel ``name``;
    ``frame`` is where ``decl`` was declared (its annotations may use names from there)."""
    from pyir.script.parser.module import parse_declaration

    from pyir.ir import Buffer, Call, Evaluate, StringImm, walk
    prim = parse_declaration(decl, frame)
    call = Call("void", "call_extern", (StringImm(name),) + tuple(prim.params))
    shape_vars = {n for p in prim.params if isinstance(p, Buffer) for s in p.shape
                  for n in walk(s)}
    params = tuple(p for p in prim.params if p not in shape_vars)
    return dataclasses.replace(prim, name=name, params=params, body=Evaluate(call))


def kernels_called(mod):
    """The `ExternKernel`s named by ``call_extern`` in the prim functions of ``mod``, each
    call checked against what its name is (`check_extern_call`)."""
    from pyir.ir import Call, PrimFunc, walk
    found, process = {}, set()
    for _, f in mod.functions:
        if isinstance(f, PrimFunc):
            for n in walk(f.body):
                if isinstance(n, Call) and n.op == "call_extern":
                    k = check_extern_call(f.name, n, process)
                    if k is not None:
                        found[k.name] = k
    names = mod.names()
    for k in found.values():
        taken = next((f for f in names if k.llvm_ir is not None
                      and k.symbol.startswith(f + ".")), None)
        if taken is not None:
            raise Error(f"kernel {k.name!r} defines LLVM function @{k.symbol}, a name the code "
                        f"of function {taken} takes; give the kernel's function another name")
    return list(found.values())


def check_extern_call(caller, call, process, unknown_ok=False):
    """Check ``call``, a ``call_extern`` in prim function ``caller``, against what its name is
    now: a kernel declared with `extern` (`check_call`; the kernel is returned), a Python
    function (refused: prim functions call native code), or a C function of the process
    (``expf``, called as written: `_values_only`). ``process`` holds the names found to be C
    functions of the process (the lookup reads the memory map: once each). Any other name is
    refused, unless ``unknown_ok`` (the parser: a kernel may be declared later)."""
    from .registry import get_global_func
    name = call.args[0].value
    k = get_global_func(name, allow_missing=True)
    if isinstance(k, ExternKernel):
        check_call(caller, k, call.args[1:], call.dtype)
        return k
    if k is not None:
        raise Error(f"prim function {caller} calls T.call_extern({name!r}, ...), but {name!r} "
                    "is a Python function: prim functions call native kernels (declare them "
                    "with pyir.ffi.extern); graph code calls Python with R.call_packed")
    if name not in process:
        if not _process_function(name):
            if unknown_ok:
                return None
            raise Error(f"prim function {caller} calls T.call_extern({name!r}, ...), but no "
                        f"kernel {name!r} is declared with pyir.ffi.extern and the process has "
                        "no C function of that name"
                        + (f" ({name!r} is data)" if _process_symbol(name) else ""))
        process.add(name)
    _values_only(caller, name, call.args[1:])
    return None


def _values_only(caller, name, args):
    """A C function of the process is called with values: T.call_extern passes a buffer or an
    element by address, and nothing says how much memory the function may touch there."""
    from pyir.ir import Buffer, BufferLoad
    for k, a in enumerate(args):
        if isinstance(a, (Buffer, BufferLoad)):
            what = a.name if isinstance(a, Buffer) else f"an element of {a.buffer.name}"
            raise Error(f"prim function {caller}: T.call_extern({name!r}, ...): argument "
                        f"{k + 1} is {what}, which T.call_extern passes by address; a C "
                        "function of the process takes values (bind the element to a name "
                        "first), and one that takes memory must be declared with "
                        "pyir.ffi.extern")


def _process_symbol(name):
    """The address of symbol ``name`` of the process (a function or data), or None."""
    try:
        return ctypes.cast(getattr(ctypes.CDLL(None), name), ctypes.c_void_p).value
    except AttributeError:
        return None


def _process_function(name):
    """Whether the process's symbol ``name`` is a function (see `_in_code`)."""
    return _in_code(_process_symbol(name))


def _in_code(address):
    """Whether ``address`` lies in memory mapped executable, as a function does (a call to a
    data symbol such as ``environ`` jumped into data: a crash). Where the memory map cannot
    be read (no /proc), every address but 0 counts."""
    if not address:
        return False
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                span, perms = line.split(None, 2)[:2]
                lo, hi = (int(x, 16) for x in span.split("-"))
                if lo <= address < hi:
                    return "x" in perms
    except OSError:
        return True
    return False


def check_call(caller, kernel, args, dtype):
    """Check a ``call_extern`` of ``kernel`` in prim function ``caller`` against its
    declaration: ``dtype``, the call's result, is void (a declared kernel returns nothing);
    the arguments ``args``: their number, a buffer (or an element's address) where it takes
    a buffer, the dtypes, and -- where both are constants -- that the memory passed holds the
    elements the kernel reaches from there (`reach`)."""
    from pyir.ir import Buffer, BufferLoad, IntImm
    from pyir.ir import dtype as dt
    from pyir.runtime.exprtext import expr_text
    declared = kernel.prim.body.value.args[1:]
    where = f"prim function {caller}: T.call_extern({kernel.name!r}, ...)"
    if dtype != "void":
        raise Error(f"{where} has result dtype {dtype}, but a kernel declared with "
                    "pyir.ffi.extern returns nothing: call it with dtype=\"void\"")
    if len(args) != len(declared):
        raise Error(f"{where} passes {len(args)} argument(s); the kernel takes {len(declared)} "
                    f"({', '.join(_declared_name(d) for d in declared)})")
    for k, (arg, decl) in enumerate(zip(args, declared)):
        what = f"{where}: argument {k + 1} ({_declared_name(decl)})"
        if isinstance(decl, Buffer):
            buf = arg if isinstance(arg, Buffer) else arg.buffer if isinstance(
                arg, BufferLoad) else None
            if buf is None:
                raise Error(f"{what} is a buffer, but the call passes {dt.a(arg.dtype)} value")
            if buf.dtype != decl.dtype:
                raise Error(f"{what} is {dt.a(decl.dtype)} buffer, but {buf.name} is "
                            f"{buf.dtype}")
            unknown = _unknown_vars(kernel, args, k)
            if unknown:
                var = unknown[0].name
                raise Error(f"{what} has shape ({', '.join(map(expr_text, decl.shape))}), "
                            f"and nothing at the call says what {var} is: kernel "
                            f"{kernel.name!r} takes no scalar {var} and the call passes no "
                            f"whole buffer where its declaration has {var} as an extent; "
                            f"declare {var}: T.int64 as a parameter of the kernel (it then "
                            f"receives {var}, which graph code fills from the shapes) or pass "
                            "a whole buffer there")
            found = _reach(kernel, args, k)
            last = None if found is None else last_offset(*found)
            need, have = last.value + 1 if isinstance(last, IntImm) else None, \
                _elements(buf.shape)
            if isinstance(arg, BufferLoad) and have is not None:
                offset = _flat_offset(arg.indices, buf.shape)
                have = None if offset is None else have - offset
            if need is not None and have is not None and have < need:
                raise Error(f"{what} has {need} elements, but the call passes "
                            f"{'only ' if have > 0 else ''}{max(have, 0)} of {buf.name}")
        elif isinstance(arg, Buffer):
            raise Error(f"{what} is {dt.a(decl.dtype)} scalar, but the call passes buffer "
                        f"{arg.name}")
        elif isinstance(arg, BufferLoad):
            raise Error(f"{what} is {dt.a(decl.dtype)} scalar, but the call passes an element of "
                        f"{arg.buffer.name}, which T.call_extern passes by address; bind its "
                        "value to a name first")
        elif arg.dtype != decl.dtype:
            raise Error(f"{what} is {decl.dtype}, but the call passes {dt.a(arg.dtype)} value")


def footprint(call, k):
    """The elements the kernel of ``call`` (a ``call_extern``) may touch through its argument
    ``k`` (counted after the name), an int64 expression: the product of the declared
    buffer's shape, with the shape variables the call's scalar arguments give. None when the
    name is not a kernel declared with `extern`."""
    kernel = _kernel_of(call)
    return None if kernel is None else _declared_size(kernel, call.args[1:], k)


def reach(call, k):
    """Where the kernel of ``call`` (a ``call_extern``) may reach through its argument ``k``
    (counted after the name): (the declared shape with the extents the call gives, the
    highest index it reaches in each dimension), int64 expressions; None when the name is
    not a kernel declared with `extern` or the shape is not known at the call. See
    `_reach`."""
    kernel = _kernel_of(call)
    return None if kernel is None else _reach(kernel, call.args[1:], k)


def last_offset(shape, tops):
    """The offset of the element at indices ``tops`` of a row-major ``shape``."""
    from pyir.arith import simplify
    from pyir.ir import IntImm
    last, stride = IntImm(0, "int64"), IntImm(1, "int64")
    for top, extent in zip(reversed(tops), reversed(shape)):
        last, stride = last + top * stride, stride * extent
    return simplify(last)


def _kernel_of(call):
    """The `ExternKernel` a ``call_extern`` names, or None."""
    from .registry import get_global_func
    kernel = get_global_func(call.args[0].value, allow_missing=True)
    return kernel if isinstance(kernel, ExternKernel) else None


#: What tensor intrinsics say their kernels reach: the intrinsic's name -> (the kernel's
#: name, {buffer parameter name: the highest index its description reaches in each
#: dimension}).
_DESCRIBED = {}


def describe_reach(source, kernel_name, tops):
    """Record that ``source`` (a tensor intrinsic) describes kernel ``kernel_name`` as
    reaching each buffer of ``tops`` (its name -> the highest index in each dimension, ints)
    no further; it replaces what ``source`` said before."""
    _DESCRIBED[source] = (kernel_name, tops)


def _reach(kernel, args, k):
    """`reach` for the call of ``kernel`` with ``args``. The declared shape's dimensions are
    laid out row-major, with the extents the call gives (``(7, "lda")`` is 7 rows ``lda``
    elements apart), and the kernel touches every index of each, up to the last row's last
    element -- or, where tensor intrinsics describe the kernel (`describe_reach`) and all
    of them describe this buffer, only up to the highest index any of them reaches in each
    dimension (the bench's micro-kernel reads one element of each of A's rows: the whole
    rows would reach past A's end). None where the shape has a variable the call does not
    give (`check_call` refuses such a call)."""
    from pyir.ir import IntImm
    if _unknown_vars(kernel, args, k):
        return None
    name = kernel.prim.body.value.args[1 + k].name
    shape = _call_shape(kernel, args, k)
    said = [tops.get(name) for kname, tops in _DESCRIBED.values() if kname == kernel.name]
    if said and all(t is not None and len(t) == len(shape) for t in said):
        return shape, [IntImm(max(t[d] for t in said), "int64") for d in range(len(shape))]
    return shape, [e - 1 for e in shape]


def _declared_size(kernel, args, k):
    """The elements of ``kernel``'s buffer parameter ``k`` for a call with ``args``."""
    from pyir.arith import simplify
    from pyir.ir import IntImm
    size = IntImm(1, "int64")
    for dim in _call_shape(kernel, args, k):
        size = size * dim
    return simplify(size)


def _call_shape(kernel, args, k):
    """The declared shape of ``kernel``'s buffer parameter ``k`` with the variables a call
    with ``args`` gives (simplified)."""
    from pyir.arith import simplify
    from pyir.ir import substitute
    values = _call_values(kernel, args)
    return [simplify(substitute(dim, values)) for dim in kernel.prim.body.value.args[1 + k].shape]


def _call_values(kernel, args):
    """What a call of ``kernel`` with ``args`` gives the variables of its declared shapes: a
    scalar parameter its argument; a variable that is a dimension of a buffer parameter
    passed a whole buffer of as many dimensions the buffer's extent there, as the kernel's
    wrapper takes it from an array's shape (the first such buffer's: the others' reach is
    checked with it)."""
    from pyir.ir import Buffer, Var
    declared = kernel.prim.body.value.args[1:]
    values = {d: a for d, a in zip(declared, args) if isinstance(d, Var)}
    for d, a in zip(declared, args):
        if isinstance(d, Buffer) and isinstance(a, Buffer) and len(a.shape) == len(d.shape):
            for dim, extent in zip(d.shape, a.shape):
                if isinstance(dim, Var):
                    values.setdefault(dim, extent)
    return values


def _unknown_vars(kernel, args, k):
    """The variables of the declared shape of ``kernel``'s buffer parameter ``k`` that a call
    with ``args`` does not give (`_call_values`), in order of appearance."""
    from pyir.ir import Var, walk
    values = _call_values(kernel, args)
    found = []
    for dim in kernel.prim.body.value.args[1 + k].shape:
        found += [v for v in walk(dim) if isinstance(v, Var) and v not in values
                  and v not in found]
    return found


def _declared_name(decl):
    return decl.name


def _elements(shape):
    from pyir.ir import IntImm
    total = 1
    for s in shape:
        if not isinstance(s, IntImm):
            return None
        total *= s.value
    return total


def _flat_offset(indices, shape):
    """The row-major element offset of constant ``indices`` in ``shape``, or None."""
    from pyir.ir import IntImm
    offset = 0
    for i, s in zip(indices, shape):
        if not (isinstance(i, IntImm) and isinstance(s, IntImm)):
            return None
        offset = offset * s.value + i.value
    return offset


class IRLinker:
    """Links the IR text of the LLVM IR kernels among ``kernels`` into the compile units
    (`pyir.codegen.llvm.codegen_units`) that call them: ``linker(unit_text)`` is the text
    with the kernels' IR appended and their declarations dropped. A kernel of external
    linkage is defined once, in the first unit that calls it; later units call that
    definition. One of internal or private linkage is appended to every unit that calls it."""

    def __init__(self, kernels):
        # (kernel, the pattern of a reference to it, whether each unit needs its own copy)
        self._kernels = [(k, rf'@"?{re.escape(k.symbol)}"?\(',
                          bool(re.search(r"\b(internal|private)\b",
                                         _DEFINE.search(k.llvm_ir).group(1))))
                         for k in kernels if k.llvm_ir is not None]
        self._linked = set()

    def __call__(self, llvm_ir):
        here = set()   # kernels declared alike share a symbol: one definition per unit
        for k, name, local in self._kernels:
            if k.symbol in self._linked or k.symbol in here or not re.search(
                    rf"\bcall\b[^\n]*{name}", llvm_ir):
                continue
            llvm_ir = re.sub(rf"^declare\b[^\n]*{name}[^\n]*\n", "", llvm_ir,
                             flags=re.MULTILINE)
            # A function both declare (expf) is declared once.
            declared = set(_DECLARE.findall(llvm_ir))
            text = _DECLARE_LINE.sub(lambda m: "" if m[1] in declared else m[0], k.llvm_ir)
            llvm_ir += "\n" + text
            here.add(k.symbol)
            if not local:
                self._linked.add(k.symbol)
        return llvm_ir


def kernels_called_from_graph(mod):
    """The `ExternKernel`s named by ``call_dps_packed`` in the graph functions of ``mod``."""
    from pyir.ir import CallDPSPacked, Function, walk

    from .registry import get_global_func
    found = {}
    for _, f in mod.functions:
        if isinstance(f, Function):
            for n in walk(f.body):
                if isinstance(n, CallDPSPacked):
                    k = get_global_func(n.name, allow_missing=True)
                    if isinstance(k, ExternKernel):
                        found[k.name] = k
    return list(found.values())
