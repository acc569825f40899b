"""Compilation targets: "llvm" (the host CPU with all its features) or an explicit
``"llvm -mtriple=... -mcpu=... -mattr=+a,+b"``, and the LLVM target machines made
from them."""

import functools
from dataclasses import dataclass

from ..errors import Error

_initialized = False


class TargetError(Error):
    """A target string that pyir cannot use."""


def init_llvm():
    """Initialize LLVM's native target and asm printer once per process."""
    global _initialized
    if not _initialized:
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialized = True


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str
    features: str

    @staticmethod
    def from_string(text="llvm"):
        """Parse a target string; missing parts default to the host's (LLVM is asked once
        per process and string: 0.35 ms a time, at every build)."""
        if isinstance(text, Target):
            return text
        if not isinstance(text, str):
            raise TargetError(f"target {text!r}: a target is a string such as 'llvm' or "
                              "'llvm -mcpu=znver4 -mattr=+avx512f'")
        return _parse(text)

    def __str__(self):
        parts = ["llvm", f"-mtriple={self.triple}", f"-mcpu={self.cpu}"]
        if self.features:
            parts.append(f"-mattr={self.features}")
        return " ".join(parts)

    def has_feature(self, name):
        return name in _enabled(self.features)

    @property
    def vector_bits(self):
        """Width of the widest vector registers the target has."""
        if self.has_feature("avx512f"):
            return 512
        if self.has_feature("avx") or self.has_feature("avx2"):
            return 256
        return 128

    def create_target_machine(self, reloc="default", opt=3):
        """A new LLVM TargetMachine: ``reloc="pic"`` for shared objects (default code model),
        ``reloc="default"`` for the JIT. Each JIT engine must own its own machine."""
        import llvmlite.binding as llvm
        init_llvm()
        target = llvm.Target.from_triple(self.triple)
        codemodel = "default" if reloc == "pic" else "jitdefault"
        return target.create_target_machine(cpu=self.cpu, features=self.features, opt=opt,
                                            reloc=reloc, codemodel=codemodel,
                                            jit=reloc != "pic")


@functools.lru_cache(maxsize=64)
def _enabled(features):
    """The feature names a ``+a,-b,+c`` list turns on (codegen asks per vector loop)."""
    return frozenset(f[1:] for f in features.split(",") if f.startswith("+"))


@functools.lru_cache(maxsize=64)
def _parse(text):
    """The `Target` of a target string (see `Target.from_string`)."""
    import llvmlite.binding as llvm
    init_llvm()
    words = text.split()
    if not words or words[0] != "llvm":
        raise TargetError(f"target {text!r}: only 'llvm' targets are supported, e.g. "
                          "'llvm' or 'llvm -mcpu=znver4 -mattr=+avx512f'")
    opts = {}
    for w in words[1:]:
        key, eq, value = w.partition("=")
        if not eq or key not in ("-mtriple", "-mcpu", "-mattr"):
            raise TargetError(f"target {text!r}: unknown option {w!r}; expected -mtriple=, "
                              "-mcpu= or -mattr=")
        opts[key] = value
    host = "-mcpu" not in opts and "-mattr" not in opts
    cpu = opts.get("-mcpu", llvm.get_host_cpu_name())
    features = opts.get("-mattr", llvm.get_host_cpu_features().flatten() if host else "")
    return Target(opts.get("-mtriple", llvm.get_process_triple()), cpu, features)
