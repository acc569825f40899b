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

Code for a CPU with features this machine's CPU lacks compiles, but running it would stop
the process with an illegal instruction: `Target.missing_on_host` names those features
(the ones the target turns on, and for a target other than the host's, those of
`FEATURE_PROBES` its CPU's name implies, found by the same child process), and an
executable refuses to call such code.
"""

import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass

from ..errors import ArgumentTypeError, ArgumentValueError

_initialized = False


class TargetError(ArgumentValueError):
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
            raise ArgumentTypeError(f"target {text!r}: a target is a string such as 'llvm' "
                                    "or 'llvm -mcpu=znver4 -mattr=+avx512f'")
        return _parse(text)

    def __str__(self):
        parts = ["llvm", f"-mtriple={self.triple}", f"-mcpu={self.cpu}"]
        if self.features:
            parts.append(f"-mattr={self.features}")
        return " ".join(parts)

    def has_feature(self, name):
        """Whether code for this target may use CPU feature ``name`` (`uses`): pyir picks
        its vectors by what LLVM will use, so ``-mcpu=znver4`` alone has AVX-512, and
        ``-mattr=+avx2`` is the host's CPU with AVX2 on (for an AVX2 machine, name one:
        ``-mcpu=haswell``)."""
        return name in self.uses()

    def uses(self):
        """The CPU features that code for this target may use (a frozenset of names): those
        it turns on, and for a target other than the host's, those of `FEATURE_PROBES` that
        its CPU's name implies (a virtual machine may hide some of its CPU's features)."""
        return _uses(self.triple, self.cpu, self.features)

    def missing_on_host(self):
        """The features of `uses` that this machine's CPU lacks (sorted names; none when the
        code runs here), of those the host reports."""
        return _missing_on_host(self.triple, self.cpu, self.features)

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


#: The x86 features whose use `_compile_for_target` detects in the code LLVM makes for a
#: CPU (code generation picks vectors, and LLVM instructions, by them): feature -> (a
#: function of LLVM IR, an instruction of the assembly LLVM makes of it where the target
#: has the feature).
FEATURE_PROBES = {
    "avx": ("<8 x float> @f(<8 x float> %a, <8 x float> %b) {\n"
            "  %c = fadd <8 x float> %a, %b\n  ret <8 x float> %c\n}", r"%ymm"),
    "avx2": ("<8 x i32> @f(<8 x i32> %a, <8 x i32> %b) {\n"
             "  %c = add <8 x i32> %a, %b\n  ret <8 x i32> %c\n}", r"vpaddd\s+%ymm"),
    "fma": ("float @f(float %a, float %b, float %c) {\n"
            "  %d = call float @llvm.fma.f32(float %a, float %b, float %c)\n"
            "  ret float %d\n}\ndeclare float @llvm.fma.f32(float, float, float)", r"vfmadd"),
    "avx512f": ('<16 x float> @f(<16 x float> %a, <16 x float> %b) '
                '"min-legal-vector-width"="512" {\n'
                "  %c = fadd <16 x float> %a, %b\n  ret <16 x float> %c\n}", r"%zmm"),
    "avx512bw": ('<64 x i8> @f(<64 x i8> %a, <64 x i8> %b) "min-legal-vector-width"="512" {\n'
                 "  %c = add <64 x i8> %a, %b\n  ret <64 x i8> %c\n}", r"vpaddb\s+%zmm"),
}
#: How `_compile_for_target` reports the features it found (a line of its output).
_FOUND = "pyir-features:"


def _compile_for_target():
    """Make machine code of `_PROBE_IR` for the target ``sys.argv[1:4]`` (triple, CPU,
    features), and print the `FEATURE_PROBES` its code uses: what `_check_machine` runs in a
    child process."""
    import llvmlite.binding as llvm
    machine = Target(*sys.argv[1:4]).create_target_machine()
    machine.emit_object(llvm.parse_assembly(_PROBE_IR))
    found = []
    if machine.triple.startswith(("x86_64", "i386", "i686")):
        for name, (ir, instruction) in FEATURE_PROBES.items():
            asm = machine.emit_assembly(llvm.parse_assembly(f"define {ir}"))
            if re.search(instruction, asm):
                found.append(name)
    print(_FOUND, ",".join(found))


@functools.lru_cache(maxsize=64)
def _check_machine(triple, cpu, features):
    """``(why, found)``: why LLVM cannot make code for ``triple``, ``cpu`` and ``features``
    (a warning it gave, or how it failed) or None, and the `FEATURE_PROBES` its code uses,
    tried in a child process: LLVM may abort the process that tries (see the module
    docstring)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # The child imports this pyir and llvmlite from where this process found them.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root] + [p for p in sys.path if p]))
    try:
        done = subprocess.run([sys.executable, "-c", "from pyir.codegen.target import "
                               "_compile_for_target; _compile_for_target()",
                               triple, cpu, features], capture_output=True, text=True,
                              env=env, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return f"trying it in a child process failed ({e})", frozenset()
    said = list(dict.fromkeys(line.strip() for line in done.stderr.splitlines()
                              if line.strip()))
    if done.returncode or any("not a recognized" in line for line in said):
        return "; ".join(said) or f"exit status {done.returncode}", frozenset()
    found = [line[len(_FOUND):].strip() for line in done.stdout.splitlines()
             if line.startswith(_FOUND)]
    return None, frozenset(f for f in (found or [""])[-1].split(",") if f)


@functools.lru_cache(maxsize=1)
def _host_machine():
    """The host's CPU name and feature list (``+a,-b,...``), asked of LLVM once."""
    import llvmlite.binding as llvm
    init_llvm()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


@functools.lru_cache(maxsize=64)
def _uses(triple, cpu, features):
    """`Target.uses` of a target's parts."""
    used = set(_enabled(features))
    if (cpu, features) != _host_machine():   # a CPU's name implies features
        used |= _check_machine(triple, cpu, features)[1]
    return frozenset(used)


@functools.lru_cache(maxsize=64)
def _missing_on_host(triple, cpu, features):
    """`Target.missing_on_host` of a target's parts."""
    host_features = _host_machine()[1]
    reported = {f[1:] for f in host_features.split(",") if f}   # not tuning flags
    return tuple(sorted(f for f in _uses(triple, cpu, features) - _enabled(host_features)
                        if f in reported))


@functools.lru_cache(maxsize=64)
def _enabled(features):
    """The feature names a ``+a,-b,+c`` list turns on (what `_uses` and `_missing_on_host`
    start from)."""
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
    host_cpu, host_features = _host_machine()
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
        why = _check_machine(triple, cpu, features)[0]
        if why is not None:
            raise TargetError(f"target {text!r}: LLVM cannot make code for CPU {cpu!r} with "
                              f"features {features!r} on {triple}: {why}")
    return Target(triple, cpu, features)
