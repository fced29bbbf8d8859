"""Neural-network ATen ops that mlxir has no importer for, as mlxir's own
decompositions in torch ops (`MLXIR_DECOMPOSITIONS` in `node_decompositions.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

_A = torch.ops.aten

NN_DECOMPOSITIONS: dict[torch._ops.OpOverload, Callable[..., Any]] = {}
"""mlxir's decompositions of neural-network ops, by the op torch.export records."""
