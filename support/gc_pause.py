"""No cyclic garbage collection while compiling.

An `ExportedProgram` keeps close to a million Python objects alive (its graph, fake
tensors, symbolic shapes). Every IR op xDSL allocates counts toward Python's next
collection, and each full collection walks all of them: about a second each, several
per compile of a 56M Llama (the lower went from 1.7 s to 0.46 s without them; see
docs/compile-time.md). The compile's own garbage is not cyclic enough to matter (the
weights are freed by reference counting), so the compile stages run with the collector
paused and restore it after, even on error.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Generator
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@contextlib.contextmanager
def gc_paused() -> Generator[None, None, None]:
    """The collector off inside, as it was after (nesting keeps it off)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def without_gc(function: Callable[P, R]) -> Callable[P, R]:
    """`function` run under `gc_paused()`."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with gc_paused():
            return function(*args, **kwargs)

    return paused
