"""Compilation targets: "llvm" (the host CPU with all its features) or an explicit
``"llvm -mtriple=... -mcpu=... -mattr=+a,+b"``, and the LLVM target machines made
from them.

LLVM takes a CPU or feature name it does not know with a warning on stderr and then, making
code, may abort the whole process ("64-bit code requested on a subtarget that doesn't
support it" for ``-mcpu=nonsense``, and for ``-mcpu=i686``, a name it knows); llvmlite
offers no list of names. So a target other than the host's is tried once per process, in a
child process that compiles a small function for it (`_check_machine`): a warning or a
failure there is a `TargetError`. A triple must be for the architecture and system of the
process, which runs the code.
"""

import functools
import os
import subprocess
import sys
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


#: What `_compile_for_target` compiles: a function with float arithmetic, as pyir's do.
_PROBE_IR = """define float @probe(float %x) {
  %y = fadd float %x, 1.0
  ret float %y
}"""


def _compile_for_target():
    """Make machine code of `_PROBE_IR` for the target ``sys.argv[1:4]`` (triple, CPU,
    features): what `_check_machine` runs in a child process."""
    import llvmlite.binding as llvm
    machine = Target(*sys.argv[1:4]).create_target_machine()
    machine.emit_object(llvm.parse_assembly(_PROBE_IR))


@functools.lru_cache(maxsize=64)
def _check_machine(triple, cpu, features):
    """Why LLVM cannot make code for ``triple``, ``cpu`` and ``features`` (a warning it
    gave, or how it failed), or None, tried in a child process: LLVM may abort the process
    that tries (see the module docstring)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # The child imports this pyir and llvmlite from where this process found them.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root] + [p for p in sys.path if p]))
    try:
        done = subprocess.run([sys.executable, "-c", "from pyir.codegen.target import "
                               "_compile_for_target; _compile_for_target()",
                               triple, cpu, features], capture_output=True, text=True,
                              env=env, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return f"trying it in a child process failed ({e})"
    said = list(dict.fromkeys(line.strip() for line in done.stderr.splitlines()
                              if line.strip()))
    if done.returncode or any("not a recognized" in line for line in said):
        return "; ".join(said) or f"exit status {done.returncode}"
    return None


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
    host_cpu, host_features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    cpu = opts.get("-mcpu", host_cpu)
    features = opts.get("-mattr", host_features if host else "")
    process = llvm.get_process_triple()
    triple = opts.get("-mtriple", process)
    try:
        llvm.Target.from_triple(triple)
    except RuntimeError as e:
        raise TargetError(f"target {text!r}: triple {triple!r}: {e}") from None
    arch, _, system = process.split("-")[:3]
    parts = triple.split("-")
    if parts[0] != arch or system not in parts[1:]:
        raise TargetError(f"target {text!r}: pyir runs the code it compiles in this process, "
                          f"whose triple is {process!r}; triple {triple!r} "
                          f"is not for {arch} {system}")
    unsigned = [f for f in features.split(",") if f and f[0] not in "+-"]
    if unsigned:
        raise TargetError(f"target {text!r}: feature {unsigned[0]!r} must start with + (on) "
                          "or - (off), as in -mattr=+avx2,-avx512f")
    if cpu != host_cpu or features not in ("", host_features):
        why = _check_machine(triple, cpu, features)
        if why is not None:
            raise TargetError(f"target {text!r}: LLVM cannot make code for CPU {cpu!r} with "
                              f"features {features!r} on {triple}: {why}")
    return Target(triple, cpu, features)
