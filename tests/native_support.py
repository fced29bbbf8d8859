"""What the native kernel tests share (`tests/test_native_*.py`): the module (a test
fails where it is not built, unless the user turned the kernels off), each instruction
set this CPU can run (the tests run every kernel path on one machine), the thread
count, and errors against float64."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from types import ModuleType

import mlx.core as mx
import numpy as np
import pytest

from mlxir import native

ALL_ISAS = ("portable", "avx2", "avx512")

if os.environ.get("MLXIR_NATIVE_SANITIZED") == "1":
    # `make native-sanitized`: a run that claims the sanitizers must have them loaded.
    maps = Path("/proc/self/maps").read_text()
    assert "libasan" in maps and "libubsan" in maps, "the sanitizer runtimes are not loaded"


def kernels() -> ModuleType:
    """The native module; a failure where it should be and is not."""
    module = native.load()
    if module is None:
        if native.turned_off():
            pytest.skip(f"the native kernels are turned off ({native.SWITCH}=0)")
        pytest.fail(f"native kernels unavailable: {native.unavailable_reason()}")
    return module


def host_isas() -> list[str]:
    """The instruction sets of `ALL_ISAS` this CPU runs, lowest first (portable always)."""
    module = native.load()
    if module is None:
        return ["portable"]
    best = ALL_ISAS.index(module.limit_isa("avx512"))
    return list(ALL_ISAS[: best + 1])


@contextlib.contextmanager
def isa(name: str) -> Iterator[None]:
    """The kernels run with at most `name` inside the block."""
    module = kernels()
    module.limit_isa(name)
    try:
        yield
    finally:
        module.limit_isa("avx512")


@contextlib.contextmanager
def threads(count: int) -> Generator[None, None, None]:
    """The kernels' pool has `count` threads inside the block."""
    module = kernels()
    before = module.threads()
    module.set_threads(count)
    try:
        yield
    finally:
        module.set_threads(before)


def float64(array: mx.array) -> np.ndarray:
    return np.array(array.astype(mx.float32)).astype(np.float64)


def relative_error(result: mx.array, reference: np.ndarray) -> float:
    """The largest error of `result` against a float64 `reference`, relative to the
    reference's largest magnitude (the measure docs/native-kernels.md states)."""
    scale = float(np.abs(reference).max()) if reference.size else 0.0
    error = float(np.abs(float64(result) - reference).max()) if reference.size else 0.0
    return error / scale if scale else error


def bits_equal(a: mx.array, b: mx.array) -> bool:
    """The same shape, dtype and bits (NaNs included)."""
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        np.array_equal(np.array(a.view(mx.uint8) if a.size else a), np.array(b.view(mx.uint8) if b.size else b))
    )

