"""The trace: every step of a schedule, as replayable Python text and as JSON.

Instructions are stored already encoded: a handle argument is ``{"rv": "l1"}``, everything
else is a plain JSON value (index maps as their text form). `str(trace)` is a function
``def apply(sch): ...``; `Trace.apply_to` replays it on another schedule.
"""

import json
import keyword
import math
from dataclasses import dataclass

from pyir.errors import kind_of
from pyir.script.printer.core import python_string

from .errors import ScheduleError

#: The steps a trace records, which replay calls by name.
REPLAYABLE = frozenset((
    "get_block", "get_loops", "get_child_blocks", "split", "fuse", "reorder", "parallel",
    "vectorize", "unroll", "annotate", "compute_at", "reverse_compute_at", "compute_inline",
    "reverse_compute_inline", "cache_read", "cache_write", "decompose_reduction", "rfactor",
    "transform_layout", "blockize", "tensorize", "sample_perfect_tile"))


@dataclass(frozen=True)
class Instruction:
    """One step: ``outputs = sch.<kind>(*args, **kwargs)``. ``single`` marks a step that
    returns one handle rather than a list."""

    kind: str
    args: tuple
    kwargs: tuple
    outputs: tuple
    single: bool = False

    def text(self):
        call = ", ".join([_fmt(a) for a in self.args] +
                         [f"{k}={_fmt(v)}" for k, v in self.kwargs])
        line = f"sch.{self.kind}({call})"
        if not self.outputs:
            return line
        if self.single:
            return f"{self.outputs[0]} = {line}"
        names = ", ".join(self.outputs)
        return f"{names}{',' if len(self.outputs) == 1 else ''} = {line}"

    def to_json(self):
        return {"kind": self.kind, "args": list(self.args), "kwargs": dict(self.kwargs),
                "outputs": list(self.outputs), "single": self.single}

    @staticmethod
    def from_json(d):
        if not (isinstance(d, dict) and isinstance(d.get("kind"), str)
                and isinstance(d.get("args"), list) and isinstance(d.get("kwargs"), dict)
                and all(_is_name(k) for k in d["kwargs"]) and isinstance(d.get("outputs"), list)
                and all(_is_name(o) for o in d["outputs"])
                and isinstance(d.get("single", False), bool)):
            raise ScheduleError("Trace.from_json", repr(d)[:80], "an instruction is an object "
                                "with \"kind\" (a string), \"args\" (a list), \"kwargs\" (an "
                                "object of names), \"outputs\" (a list of names) and \"single\"")
        bad = [v for v in d["args"] + list(d["kwargs"].values()) if not _is_value(v)]
        if bad:
            raise ScheduleError("Trace.from_json", repr(d)[:80], f"argument {bad[0]!r} is "
                                "neither a handle {\"rv\": name} nor a plain value (a finite "
                                "number, a string, null or a list of them)")
        return Instruction(d["kind"], tuple(d["args"]), tuple(d["kwargs"].items()),
                           tuple(d["outputs"]), d.get("single", False))


def _is_name(text):
    """True for a string the trace text can use as a handle's name."""
    return isinstance(text, str) and text.isidentifier() and not keyword.iskeyword(text)


def _is_value(value):
    """True for an argument a trace can hold: a handle ``{"rv": name}``, a plain value, or a
    list of them."""
    if isinstance(value, dict):
        return list(value) == ["rv"] and _is_name(value["rv"])
    if isinstance(value, list):
        return all(_is_value(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (bool, int, str))


def _fmt(value):
    if isinstance(value, dict) and "rv" in value:
        return value["rv"]
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, str):
        return python_string(value)
    return repr(value)


class Trace:
    """The steps of a schedule in order (see the module docstring)."""

    def __init__(self, instructions=()):
        self.instructions = list(instructions)

    def __len__(self):
        return len(self.instructions)

    def __iter__(self):
        return iter(self.instructions)

    def __getitem__(self, k):
        return self.instructions[k]

    def __str__(self):
        body = [f"    {inst.text()}" for inst in self.instructions] or ["    pass"]
        return "def apply(sch):\n" + "\n".join(body) + "\n"

    def __repr__(self):
        return f"Trace({len(self)} steps)"

    def copy(self):
        return Trace(self.instructions)

    def apply_to(self, sch):
        """Replay every step on ``sch`` (a `Schedule`); return ``sch``. When a step fails,
        ``sch`` is left as it was (the steps are replayed on a fork, which ``sch`` then
        becomes)."""
        from .state import Schedule
        if not isinstance(sch, Schedule):
            raise ScheduleError("trace replay", repr(sch)[:60], "a trace replays on a Schedule, "
                                f"not {kind_of(sch)}")
        work = sch.fork()
        env = {}
        for k, inst in enumerate(self.instructions):
            where = f"step {k + 1}, sch.{inst.kind}"
            if inst.kind not in REPLAYABLE:
                raise ScheduleError("trace replay", where, "not a schedule primitive; a trace "
                                    f"holds {', '.join(sorted(REPLAYABLE))}")
            try:
                args = [_decode(a, env) for a in inst.args]
                kwargs = {key: _decode(v, env) for key, v in inst.kwargs}
            except KeyError as e:
                raise ScheduleError("trace replay", where, f"handle {e.args[0]} is used before "
                                    "any step gives it") from None
            try:
                result = getattr(work, inst.kind)(*args, **kwargs)
            except TypeError as e:
                raise ScheduleError("trace replay", where, f"cannot take these arguments: {e}"
                                    ) from None
            if result is not None and inst.single == isinstance(result, list):
                raise ScheduleError("trace replay", where, "returned " + (
                    "a list of handles where the trace recorded one" if inst.single
                    else "one handle where the trace recorded a list"))
            outs = [] if result is None else result if isinstance(result, list) else [result]
            if len(outs) != len(inst.outputs):
                raise ScheduleError("trace replay", where, f"returned {len(outs)} handle(s) "
                                    f"where the trace recorded {len(inst.outputs)}")
            env.update(zip(inst.outputs, outs))
        sch._take_state(work)
        return sch

    def to_json(self):
        """The trace as a JSON string."""
        return json.dumps([inst.to_json() for inst in self.instructions], indent=1)

    @staticmethod
    def from_json(text):
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as e:
            raise ScheduleError("Trace.from_json", "the text", f"it is not JSON: {e}") from None
        if not isinstance(data, list):
            raise ScheduleError("Trace.from_json", "the text", "a trace is a JSON list of "
                                f"instructions, not {type(data).__name__}")
        return Trace(Instruction.from_json(d) for d in data)

    def show(self):
        from rich.console import Console
        from rich.syntax import Syntax
        Console().print(Syntax(str(self).rstrip("\n"), "python", theme="monokai"))

    def _repr_html_(self):
        return highlighted_html(str(self), "python")

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self).rstrip("\n"))


def _decode(value, env):
    if isinstance(value, dict) and "rv" in value:
        return env[value["rv"]]
    if isinstance(value, list):
        return [_decode(v, env) for v in value]
    return value


def highlighted_html(text, lexer):
    """``text`` highlighted by rich as HTML (for notebooks)."""
    from rich.console import Console
    from rich.syntax import Syntax
    console = Console(record=True, file=_Null(), width=120, force_jupyter=False)
    console.print(Syntax(text.rstrip("\n"), lexer, theme="default"))
    return console.export_html(inline_styles=True, code_format="<pre style=\"font-family:"
                               "monospace;font-size:12px\">{code}</pre>")


class _Null:
    def write(self, _):
        return 0

    def flush(self):
        pass
