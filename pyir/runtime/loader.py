"""`load_module`: an `Executable` from a shared object written by `export_library`.

Only ctypes and the embedded metadata (`pyir.codegen.abi.dumps`: the prim functions'
`FuncInfo`s and the graph functions' plans) are needed: no llvmlite, no Python source.
Packed Python functions that graph code calls are looked up in the registry at the call.
"""

import ctypes
import os
import shutil
import tempfile

from ..codegen import abi
from ..errors import Error
from ..transform.graph_plan import GraphPlan
from .executable import Executable, library_path

#: path -> identity of the file loaded from it (see `_open`)
_loaded = {}


def load_module(path):
    path = library_path("load_module", path)
    try:
        lib = _open(path)
    except OSError as e:
        raise Error(f"cannot load {path}: {e}") from None
    try:
        start = ctypes.addressof(ctypes.c_char.in_dll(lib, abi.METADATA_SYMBOL))
    except ValueError:
        raise Error(f"{path} is not a library exported by pyir: it has no "
                    f"{abi.METADATA_SYMBOL} symbol") from None
    try:
        infos, graphs = abi.loads(ctypes.string_at(start).decode())
    except (KeyError, TypeError, ValueError) as e:
        raise Error(f"{path} holds metadata this version of pyir cannot read ({e!r}); "
                    "export it again with this version") from None

    def resolve(symbol):
        try:
            return ctypes.cast(lib[symbol], ctypes.c_void_p).value
        except AttributeError:
            raise Error(f"{path} has no symbol {symbol!r}: it was exported by an older "
                        "version of pyir; export it again with this version") from None

    exe = Executable(infos, resolve, lib, origin=path)
    for data in graphs:
        exe.add_graph_function(GraphPlan.from_json(data))
    return exe


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
