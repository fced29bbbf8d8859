"""A progress line on a terminal while a compile runs longer than a moment.

    with progress_shown():            # mlxir compile, compile_llm
        ...
        report("import", done, total)  # anywhere below: a no-op when nothing is shown

The compile stages report what they do (the importer its nodes, the lowering its
passes, the serializer its ops) through `report`, which costs a context-variable read
when no line is shown. `progress_shown` draws the line on standard error, only on a
terminal and only once the compile has run for `delay` seconds (2 by default: a
short compile prints nothing), at most ten times a second, and clears it at the end.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Generator
from contextvars import ContextVar
from typing import TextIO

SHOW_AFTER_S = 2.0
REDRAW_EVERY_S = 0.1
BAR_WIDTH = 24


class ProgressLine:
    """One line, redrawn in place: the stage, a bar of its work and the seconds since
    the start."""

    def __init__(self, stream: TextIO, delay: float) -> None:
        self.stream = stream
        self.delay = delay
        self.start = time.perf_counter()
        self.drawn_at = 0.0
        self.stage = ""
        self.width = 0

    def update(self, stage: str, done: int, total: int | None) -> None:
        now = time.perf_counter()
        if now - self.start < self.delay:
            return
        if stage == self.stage and now - self.drawn_at < REDRAW_EVERY_S:
            return  # a new stage is always drawn; its progress ten times a second
        self.drawn_at, self.stage = now, stage
        if total:
            filled = BAR_WIDTH * min(done, total) // total
            work = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}"
        else:
            work = f"{done}" if done else ""
        text = f"mlxir: {stage} {work} {now - self.start:.1f} s"
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = len(text)

    def clear(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


_line: ContextVar[ProgressLine | None] = ContextVar("mlxir_progress_line", default=None)


@contextlib.contextmanager
def progress_shown(stream: TextIO | None = None, *, delay: float = SHOW_AFTER_S) -> Generator[None, None, None]:
    """Shows the progress `report`ed inside, when `stream` (standard error) is a
    terminal; nested uses keep the outer line."""
    shown_on = stream if stream is not None else sys.stderr
    if _line.get() is not None or shown_on is None or not shown_on.isatty():
        yield
        return
    line = ProgressLine(shown_on, delay)
    token = _line.set(line)
    try:
        yield
    finally:
        _line.reset(token)
        line.clear()


def report(stage: str, done: int = 0, total: int | None = None) -> None:
    """`done` of `total` units of `stage`'s work are done (shown if a line is)."""
    line = _line.get()
    if line is not None:
        line.update(stage, done, total)
