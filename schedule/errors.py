"""ScheduleError: what a schedule primitive raises when a step is illegal or a handle is
stale. The message names the primitive, the block or loop, the rule broken and the few
lines of IR concerned."""

from pyir.errors import Error

_MAX_LINES = 14


class ScheduleError(Error):
    """An illegal schedule step; the schedule state is unchanged when this is raised."""

    def __init__(self, primitive, subject, rule, ir=None):
        self.primitive, self.subject, self.rule = primitive, subject, rule
        text = f"{primitive}: {subject}: {rule}"
        excerpt = ir_excerpt(ir) if ir is not None else ""
        if excerpt:
            text += "\n" + excerpt
        super().__init__(text)


def ir_excerpt(node):
    """The printed text of ``node`` (a loop, block or statement), indented and trimmed to a
    few lines."""
    try:
        text = node.script()
    except Exception:  # printing is best effort inside an error message
        return ""
    lines = [ln for ln in text.rstrip("\n").splitlines()
             if ln.strip() and not ln.startswith("from pyir.script")]
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES - 1] + ["    ..."]
    return "\n".join("    " + ln for ln in lines)


def script_text(e):
    """The script text of the expression ``e`` for a message, as the printer writes it
    (``T.max(i, j)``, ``T.float32(2.0)``; best effort: its repr when it cannot be
    printed)."""
    try:
        return e.script().strip().splitlines()[-1]
    except Exception:  # printing is best effort inside an error message
        return repr(e)
