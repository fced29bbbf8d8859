"""Differential cases of the nn ops mlxir decomposes itself
(`conversions/torch_to_aten/nn_decompositions.py`)."""

from __future__ import annotations

from differential.harness import Case

NN_CASES: list[Case] = []
