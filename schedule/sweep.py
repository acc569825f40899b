"""`sweep`: evaluate a function over candidates (tile sizes, schedules) with a rich
progress bar, in a terminal or a notebook."""

import importlib.util


def sweep(candidates, evaluate, description="sweep", console=None, show_progress=True):
    """``[(candidate, evaluate(candidate)) ...]`` in order, showing a rich progress bar.

    ``evaluate`` may raise `pyir.Error` (an illegal schedule, say): the error is kept as
    that candidate's result and the sweep goes on; any other exception stops it. In a
    notebook without ipywidgets the bar is printed once, when the sweep ends. Candidates
    that are not iterable, or an ``evaluate`` that is not callable, are an
    `ArgumentTypeError` before anything runs.
    """
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)

    from pyir.errors import ArgumentTypeError, Error

    if not callable(evaluate):
        raise ArgumentTypeError(f"sweep: evaluate must be a function of one candidate, got "
                                f"{evaluate!r}")
    try:
        items = iter(candidates)
    except TypeError:
        raise ArgumentTypeError(f"sweep: candidates must be iterable (a list, a range, ...), "
                                f"got {type(candidates).__name__} {candidates!r}") from None
    candidates = list(items)
    notebook = None
    if console is None and show_progress and _in_notebook_without_widgets():
        notebook = _NotebookBar()
    results = []
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[current]}"),
                  console=console, disable=not show_progress or notebook is not None
                  ) as progress:
        task = progress.add_task(description, total=len(candidates), current="")
        for cand in candidates:
            progress.update(task, current=f"{cand}")
            if notebook:
                notebook.update(progress)
            try:
                value = evaluate(cand)
            except Error as err:
                value = err
            results.append((cand, value))
            progress.advance(task)
        progress.update(task, current="done")
        if notebook:
            notebook.update(progress)
    return results


def _in_notebook_without_widgets():
    from rich.console import Console
    return (Console().is_jupyter  # rich animates in notebooks only through ipywidgets
            and importlib.util.find_spec("ipywidgets") is None)


class _NotebookBar:
    """The bar as HTML in one notebook output, updated in place through a display handle
    (so the saved notebook holds the final state)."""

    def __init__(self):
        from IPython.display import HTML, display
        self._html = HTML
        self._handle = display(HTML(""), display_id=True)

    def update(self, progress):
        from rich.console import Console
        console = Console(record=True, file=_Null(), width=100, force_jupyter=False)
        console.print(progress.make_tasks_table(progress.tasks))
        self._handle.update(self._html(console.export_html(
            inline_styles=True, code_format="<pre style=\"font-family:monospace\">{code}</pre>")))


class _Null:
    def write(self, text):
        return len(text)

    def flush(self):
        pass
