"""The CPU backend's native kernels (`native/`, docs/native-kernels.md): whether they
run in this process, their thread pool's size, and the one line a user sees when
they cannot run.

Kernel factories ask `kernels()` when they build a call's graph, so each call (or
compiled trace) takes a native kernel or MLX's own op. None means MLX's own: the
library was not built, was built for another MLX, was turned off
(`MLXIR_NATIVE_KERNELS=0`), or the block is an `.mlxfn` export (`suspended()`), whose
file must name only MLX's primitives so that any MLX can read it back.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import sys
from collections.abc import Generator
from types import ModuleType

from mlxir import native
from mlxir.runtime.cpu import streams

_suspended: contextvars.ContextVar[bool] = contextvars.ContextVar("mlxir_native_suspended", default=False)


@functools.cache
def _module() -> ModuleType | None:
    module = native.load()
    if module is None:
        if not native.turned_off():
            print(
                f"mlxir: native CPU kernels {native.unavailable_reason()}; running on MLX's own CPU kernels",
                file=sys.stderr,
            )
        return None
    module.set_threads(streams.configured_count())
    return module


def kernels() -> ModuleType | None:
    """The native kernel module where this call may use it, else None."""
    return None if _suspended.get() else _module()


@contextlib.contextmanager
def suspended() -> Generator[None, None, None]:
    """A block whose graphs use MLX's own ops only (this thread)."""
    token = _suspended.set(True)
    try:
        yield
    finally:
        _suspended.reset(token)


def facts() -> list[tuple[str, str]]:
    """`mlxir info`'s lines about the native kernels."""
    module = native.load()
    if module is None:
        return [("native CPU kernels", f"none: {native.unavailable_reason()} (MLX's own kernels run)")]
    _module()
    families = ", ".join(name for name, _ in module.families())
    return [
        ("native CPU kernels", f"{families} ({module.isa()}, {module.threads()} threads)"),
    ]
