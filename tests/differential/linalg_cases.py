"""Differential cases of the linalg ops mlxir decomposes itself
(`conversions/torch_to_aten/linalg_decompositions.py`)."""

from __future__ import annotations

from differential.harness import Case

LINALG_CASES: list[Case] = []
