"""Constructs real models use that mlxir once refused, each alone, compiled and
compared with eager PyTorch on inputs whose dynamic dims differ from the export-time
ones, in float32, float16 and bfloat16 (tolerances relative to the reference's largest
magnitude: f32 1e-6, f16 1e-3, bf16 1e-2; these constructs move values, so the
differences are the dtypes' rounding of the same arithmetic)."""

from __future__ import annotations

import torch
from torch.export import Dim, export

import mlxir

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOLERANCE = {torch.float32: 1e-6, torch.float16: 1e-3, torch.bfloat16: 1e-2}


def _assert_close(got: torch.Tensor, expected: torch.Tensor) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.shape, expected.shape)
    scale = max(float(expected.float().abs().max()), 1.0)
    error = float((got.float() - expected.float()).abs().max())
    assert error <= TOLERANCE[expected.dtype] * scale, error


# --------------------------------------------------------------------------- repeat by a symbolic size


class _ClassToken(torch.nn.Module):
    """A ViT's class token tiled over the batch, `cls.repeat(b, 1, 1)`, and a tensor
    tiled by its own length, `x.repeat(1, n, 1)[:, :3]`."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.cls = torch.nn.Parameter(torch.randn(1, 1, 8, dtype=dtype))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, length = x.shape[0], x.shape[1]
        tokens = torch.cat([self.cls.repeat(batch, 1, 1), x], dim=1)
        tiled = x.repeat(2, length, 1)
        return tokens, tiled


def test_repeat_by_symbolic_sizes() -> None:
    """`aten.repeat` whose repeats depend on an input's shape: imported through torch's
    own decomposition of that node (expand and reshape with runtime sizes)."""
    for dtype in DTYPES:
        torch.manual_seed(0)
        model = _ClassToken(dtype)
        dims = {0: Dim("batch", min=1, max=64), 1: Dim("length", min=1, max=64)}
        ep = export(model, (torch.randn(3, 5, 8, dtype=dtype),), dynamic_shapes=(dims,))
        program = mlxir.compile(ep)
        x = torch.randn(6, 4, 8, dtype=dtype)
        for got, expected in zip(program(x), model(x), strict=True):
            _assert_close(got, expected.detach())
