"""IR -> Python script text (the inverse of `pyir.script.parser`)."""

from .core import script, show, to_html

__all__ = ["script", "show", "to_html"]
