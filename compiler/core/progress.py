"""How a command that can take more than a second shows what it is doing: on a terminal a
person watches, on standard error only, and only beside text output. Never on standard output
(whatever a command prints there is byte-identical with and without a terminal), never beside
a machine format (json, sarif, yaml, junit), never in a pipe or a CI log
(``compiler.commands.options.progress`` decides; this module draws).

A progress is called with each *stage* (``progress("databricks: grants in main")``) and, when
the stage does many things, told how many (:meth:`Bar.count`, which gives back what to call as
each one is done). :class:`Bar` is one transient line drawn by rich (imported only here, and
only when a bar is shown: ``accord lint`` never imports it): a spinner, the stage, a bar,
``done/total`` and the time spent; cleared when the run ends (:func:`finished`), so that what
the command prints next is not drawn over.

Any plain callable taking the stage's text is a progress too: :func:`silent` where nothing is
shown, the default of every reader; :func:`counted` asks it for a count only when it can take
one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO, TypeVar

from accord.compiler.core.visible import visible

T = TypeVar("T")
R = TypeVar("R")

#: how much of a stage's text a line shows
WIDTH = 90


def _nothing() -> None:
    pass


def silent(_stage: str) -> None:
    """The progress that shows nothing (not a terminal, a machine format, CI)."""


def ticker(progress: Callable[[str], None], total: int) -> Callable[[], None]:
    """What to call as each of ``total`` things is done (nothing when the progress takes no
    count)."""
    count = getattr(progress, "count", None)
    if count is None or total <= 0:
        return _nothing
    tick: Callable[[], None] = count(total)
    return tick


def counting(progress: Callable[[str], None], items: Sequence[T]) -> Iterator[T]:
    """``items``, one at a time, each counted done when the next is asked for (or the loop
    ends), whatever the loop's body did with it."""
    tick = ticker(progress, len(items))
    for item in items:
        yield item
        tick()


def counted(
    progress: Callable[[str], None], fn: Callable[[T], R], items: Sequence[T]
) -> Callable[[T], R]:
    """``fn``, telling ``progress`` as each of ``items`` is done (``fn`` itself when the
    progress takes no count). Safe to call from several threads at once."""
    if getattr(progress, "count", None) is None or not items:
        return fn
    tick = ticker(progress, len(items))

    def each(item: T) -> R:
        try:
            return fn(item)
        finally:
            tick()

    return each


def finished(progress: Callable[[str], None]) -> None:
    """End the progress's current run of stages (a bar is cleared; a later stage draws it
    again), so that what is said next on standard error is not drawn over."""
    done = getattr(progress, "done", None)
    if done is not None:
        done()


class Bar:
    """A rich progress bar on ``stream`` (a terminal), transient: the stage, its ``done/total``
    when it has a count, and the time since the run started."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._bar: Any = None
        self._task: Any = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        if self._bar is not None:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class Count(ProgressColumn):  # type: ignore[misc]
            """``120/1,334`` (nothing while the stage has no count)."""

            def render(self, task: Any) -> Any:
                if task.total is None:
                    return Text("")
                return Text(f"{int(task.completed):,}/{int(task.total):,}")

        console = Console(file=self._stream, highlight=False, soft_wrap=False)
        self._bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(bar_width=24),
            Count(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._bar.start()
        self._task = self._bar.add_task("", total=None)

    def __call__(self, text: str) -> None:
        with self._lock:
            self._start()
            self._bar.update(self._task, description=visible(text)[:WIDTH], total=None, completed=0)

    def count(self, total: int) -> Callable[[], None]:
        with self._lock:
            self._start()
            self._bar.update(self._task, total=total, completed=0)
            bar, task = self._bar, self._task

        def tick() -> None:
            bar.advance(task)

        return tick

    def done(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None
