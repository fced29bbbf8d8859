"""Remarks: what a pass chose not to do, and why, attached to the op it concerns.

A pass calls `remark(op, message)`. Inside `collecting()` (mlx-opt wraps every chunk's
passes in one, so `--verify-diagnostics` can expect them as `expected-remark`) the
remarks are gathered; outside one they are written to stderr, one line each."""

from __future__ import annotations

import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Remark:
    op: Any
    """The xDSL `Operation` the remark is about."""
    message: str


_collectors: list[list[Remark]] = []


def remark(op: Any, message: str) -> None:
    if _collectors:
        _collectors[-1].append(Remark(op, message))
    else:
        print(f"remark: {message}", file=sys.stderr)


@contextmanager
def collecting() -> Generator[list[Remark]]:
    collected: list[Remark] = []
    _collectors.append(collected)
    try:
        yield collected
    finally:
        _collectors.pop()
