"""Small modules with mutated buffers, shared by the model, hostile-input and fuzz
suites (and the fuzz corpus generator)."""

from __future__ import annotations

import torch
from torch import nn


class StaticCache(nn.Module):
    """A static KV-cache-like buffer written with index_copy at a position."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 8, 4))
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        self.cache.index_copy_(1, pos, self.proj(x))
        return self.cache.sum(dim=1)


class History(nn.Module):
    """A rolling buffer: drop the oldest row, append `x`, return the mean."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("history", torch.zeros(4, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.history.copy_(torch.cat([self.history[1:], x[None]], dim=0))
        return self.history.mean(dim=0)
