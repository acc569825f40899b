"""`load_module`: an `Executable` from a shared object written by `export_library`.

Only ctypes and the embedded metadata (`pyir.codegen.abi.dumps`: the prim functions'
`FuncInfo`s and the graph functions' plans) are needed: no llvmlite, no Python source.
Packed Python functions that graph code calls are looked up in the registry at the call.
A library whose code uses CPU features this machine lacks (the metadata lists them) loads,
but its functions are refused (see `Executable`).
"""

import ctypes
import os
import shutil
import struct
import tempfile

from ..codegen import abi
from ..errors import Error
from ..transform.graph_plan import GraphPlan
from .executable import Executable, library_path
from .pool_settings import ENTRY_SYMBOL, configured_threads

#: path -> identity of the file loaded from it (see `_open`)
_loaded = {}


def load_module(path):
    path = library_path("load_module", path)
    try:
        _check_whole(path)
        lib = _open(path)
    except OSError as e:
        raise Error(f"cannot load {path}: {e}") from None
    try:
        start = ctypes.addressof(ctypes.c_char.in_dll(lib, abi.METADATA_SYMBOL))
    except ValueError:
        raise Error(f"{path} is not a library exported by pyir: it has no "
                    f"{abi.METADATA_SYMBOL} symbol") from None
    try:
        infos, graphs, target, requires = abi.loads(ctypes.string_at(start).decode())
    except (KeyError, TypeError, ValueError) as e:
        raise Error(f"{path} holds metadata this version of pyir cannot read ({e!r}); "
                    "export it again with this version") from None

    def resolve(symbol):
        try:
            return ctypes.cast(lib[symbol], ctypes.c_void_p).value
        except AttributeError:
            raise Error(f"{path} has no symbol {symbol!r}: it was exported by an older "
                        "version of pyir; export it again with this version") from None

    if hasattr(lib, ENTRY_SYMBOL):
        configured_threads()   # the library's pool would take a bad value as the core count
    flags = cpu_flags()
    missing = () if flags is None else tuple(f for f in requires if f not in flags)
    exe = Executable(infos, resolve, lib, origin=path, built_for=target,
                     missing_features=missing)
    for data in graphs:
        exe.add_graph_function(GraphPlan.from_json(data))
    return exe


def cpu_flags():
    """The feature flags of this machine's CPU as Linux names them (``/proc/cpuinfo``: for
    the x86 features a library records, the names LLVM gives them), or None where the
    system does not say."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return None


def _check_whole(path):
    """Refuse a 64-bit ELF file cut short (a copy or download that stopped): the dynamic
    loader maps each loadable segment from the file, and touching a page past its end
    killed the process with SIGBUS. Other files are left to the loader, which reports them."""
    with open(path, "rb") as f:
        header = f.read(64)
        size = os.fstat(f.fileno()).st_size
        if len(header) < 64 or header[:5] != b"\x7fELF\x02" or header[5] not in (1, 2):
            return
        order = "<" if header[5] == 1 else ">"
        phoff, = struct.unpack_from(order + "Q", header, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", header, 54)
        if phentsize < 56:    # not the program headers of a 64-bit ELF file
            return
        needed = phoff + phentsize * phnum
        if needed <= size:
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            for k in range(phnum):
                kind, = struct.unpack_from(order + "I", table, k * phentsize)
                offset, = struct.unpack_from(order + "Q", table, k * phentsize + 8)
                filesz, = struct.unpack_from(order + "Q", table, k * phentsize + 32)
                if kind == 1:    # PT_LOAD
                    needed = max(needed, offset + filesz)
    if needed > size:
        raise OSError(f"the file is cut short: it has {size} bytes, but its headers describe "
                      f"{needed}")


def _open(path):
    """``ctypes.CDLL`` of ``path``, also after the file was replaced: the dynamic loader
    hands out the library it loaded from a path before, whatever the file now holds, so a
    library exported again to the same path is loaded from a private copy."""
    st = os.stat(path)
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if _loaded.setdefault(path, identity) == identity:
        return ctypes.CDLL(path)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(path))
        shutil.copyfile(path, copy)
        return ctypes.CDLL(copy)
