"""A compiler target: a name and the passes it adds to the generic pipeline.

A target is declared beside its passes (the CPU's in `transforms/cpu/__init__.py`) and
chosen with `lower-to-mlx{target=<name>}`; `conversions/pipelines.py` builds the
pipelines. Its passes are named as `mlx-opt -p` names them: a target's module stays
free of xDSL, so the CPU backend reads the CPU's formulas (`transforms/cpu/polynomial.py`)
without loading the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str
    passes: tuple[str, ...]
    """The passes the target runs after the generic pipeline, in order."""


GENERIC = Target("generic", ())
"""The generic pipeline alone: what every MLX device runs well (a GPU's target)."""
