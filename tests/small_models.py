"""Small modules several suites export (shared so each is written once)."""

import torch
from torch import nn


class Mlp(nn.Module):
    """Two linears around SiLU, an affine step, GELU and tanh: a chain of elementwise
    ops for MLX's compiler to fuse."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.silu(self.up(x)) * 1.5 + 0.25
        return torch.tanh(nn.functional.gelu(self.down(h)))


LYING_PROGRAM = """
    func.func @forward(%x: tensor<2xf32>) -> tensor<3xf32> {
      %y = mlx.exp %x : tensor<2xf32> -> tensor<3xf32> loc("m.py":4:2)
      func.return %y : tensor<3xf32>
    }"""
"""mlx IR whose `mlx.exp` declares a result shape it does not give (a lying program)."""

INTEGER_OUTPUT_PROGRAM = """
    func.func @forward(%n: index) -> index {
      %c = arith.constant 3 : index
      %m = arith.addi %n, %c : index
      func.return %m : index
    }"""
"""mlx IR returning an integer: `n + 3`."""


class Embed(nn.Module):
    """One embedding lookup: a program whose input is integer token ids."""

    def __init__(self) -> None:
        super().__init__()
        self.table = nn.Embedding(10, 4)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.table(tokens)
