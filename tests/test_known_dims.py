"""`fold-known-dims` (transforms/known_dims.py) on real exports: it removes duplicate
`mlx.dim`s and identity reshapes/broadcasts, and the programs still compute what eager
torch does on shapes other than the export's. The FileCheck cases are in
tests/filecheck/transforms/fold-known-dims.mlir."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import torch
from torch.export import Dim, export
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument

from mlxir.codegen import serialize
from mlxir.conversions.aten_to_mlx import lower
from mlxir.conversions.torch_to_aten import import_program
from mlxir.dialects import mlx
from mlxir.runtime.program import Program

PIPELINE = "convert-aten-to-mlx,canonicalize,cse,dce"
"""The default pipeline without optimize-mlx (which may run fold-known-dims itself):
the module the pass is measured on."""


def _lowered(ep: Any) -> tuple[ModuleOp, ModuleOp]:
    """(lowered without the pass, the same then fold-known-dims)."""
    plain = lower(import_program(ep), PIPELINE)
    folded = lower(plain.clone(), "fold-known-dims")
    return plain, folded


def _ops(module: ModuleOp, cls: type) -> list[Any]:
    return [op for op in module.walk() if isinstance(op, cls)]


def _identity_typed_reshapes(module: ModuleOp) -> list[Any]:
    return [
        op
        for op in module.walk()
        if isinstance(op, mlx.ReshapeOp | mlx.BroadcastToOp) and op.input.type == op.result.type
    ]


def _dim_symbols(module: ModuleOp) -> list[str]:
    """The `mlxir.input_dims` symbol each remaining `mlx.dim` reads; fails on a dim
    that reads anything but a function argument's named axis."""
    (func,) = _ops(module, FuncOp)
    input_dims = func.attributes["mlxir.input_dims"]
    assert isinstance(input_dims, ArrayAttr)
    symbols: list[str] = []
    for dim in _ops(module, mlx.DimOp):
        arg = dim.input
        assert isinstance(arg, BlockArgument), f"{dim} reads an intermediate value"
        names = input_dims.data[arg.index]
        assert isinstance(names, ArrayAttr)
        name = names.data[dim.axis.value.data]
        assert isinstance(name, StringAttr) and name.data, f"{dim} reads an unnamed axis"
        symbols.append(name.data)
    return symbols


def _numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def _run(module: ModuleOp, inputs: Sequence[torch.Tensor]) -> list[np.ndarray]:
    outputs = Program(serialize(module)).call_flat(*inputs)
    return [_numpy(v) for v in outputs]


# ---------------------------------------------------------------------------
# A small attention-shaped function
# ---------------------------------------------------------------------------


class Heads(torch.nn.Module):
    """Split into heads, rotate a part, merge back: the lowering reads the batch and
    sequence sizes with `mlx.dim`, slices with open ends (dims of the intermediate) and
    reshapes back to the shape the heads already have."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        h = self.proj(x).view(b, t, 4, 4).transpose(1, 2)
        h = h * mask[:, None, :, None]
        # overlapping pieces, which slices-to-split leaves as slices
        h = torch.cat([-h[..., 1:3], h[..., :2]], dim=-1)
        h = h.reshape(b, 4, t, 4)
        out = h.transpose(1, 2).reshape(b, t, 16)
        return out + x.expand(b, t, 16)


@pytest.fixture(scope="module")
def heads() -> tuple[Heads, ModuleOp, ModuleOp]:
    torch.manual_seed(0)
    model = Heads().eval()
    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=1, max=32)
    ep = export(
        model,
        (torch.randn(2, 3, 16), torch.randn(2, 3)),
        dynamic_shapes={"x": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}},
    )
    return (model, *_lowered(ep))


def test_heads_dims_and_reshapes_folded(heads: tuple[Heads, ModuleOp, ModuleOp]) -> None:
    _, plain, folded = heads
    assert len(_ops(folded, mlx.DimOp)) < len(_ops(plain, mlx.DimOp))
    assert _identity_typed_reshapes(plain), "the lowering no longer emits identity reshapes"
    assert not _identity_typed_reshapes(folded)
    symbols = _dim_symbols(folded)
    assert len(symbols) == len(set(symbols)), symbols
    # Idempotent: nothing is left to fold.
    again = lower(folded.clone(), "fold-known-dims")
    assert str(again) == str(folded)


@pytest.mark.parametrize("shape", [(5, 7), (1, 1), (2, 3), (8, 32)])
def test_heads_match_eager(heads: tuple[Heads, ModuleOp, ModuleOp], shape: tuple[int, int]) -> None:
    model, plain, folded = heads
    generator = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(*shape, 16, generator=generator)
    mask = torch.randn(*shape, generator=generator)
    with torch.no_grad():
        expected = model(x, mask).numpy()
    (got,) = _run(folded, [x, mask])
    (reference,) = _run(plain, [x, mask])
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-5)
    np.testing.assert_array_equal(got, reference)


# ---------------------------------------------------------------------------
# A lowered Llama (2 layers, grouped-query attention, explicit KV cache)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama() -> tuple[Any, ModuleOp, ModuleOp]:
    pytest.importorskip("transformers")
    from llm_models import build_model

    from mlxir.tools import llm

    exported = llm.export_llm(build_model("llama"), cache="growing")
    return (exported, *_lowered(exported.ep))


def test_llama_dims_unique_per_symbol(llama: tuple[Any, ModuleOp, ModuleOp]) -> None:
    _, plain, folded = llama
    assert len(_ops(folded, mlx.DimOp)) < len(_ops(plain, mlx.DimOp))
    # Every size left is read once, off an input: the batch, sequence and past sizes.
    symbols = _dim_symbols(folded)
    assert len(symbols) == len(set(symbols)), symbols
    # The attention output's reshape to [B, heads, S, head_dim] (the shape it has) and
    # the mask's broadcast to its own shape are gone.
    assert _identity_typed_reshapes(plain)
    assert not _identity_typed_reshapes(folded)
    assert len(_ops(folded, mlx.ReshapeOp)) < len(_ops(plain, mlx.ReshapeOp))
    again = lower(folded.clone(), "fold-known-dims")
    assert str(again) == str(folded)


@pytest.mark.parametrize(("batch", "seq", "past"), [(3, 4, 6), (1, 1, 9), (2, 5, 0)])
def test_llama_outputs_unchanged(
    llama: tuple[Any, ModuleOp, ModuleOp], batch: int, seq: int, past: int
) -> None:
    exported, plain, folded = llama
    generator = torch.Generator().manual_seed(batch * 100 + seq * 10 + past)
    ids = torch.randint(0, 128, (batch, seq), generator=generator)
    mask = torch.ones(batch, past + seq, dtype=torch.long)
    mask[0, : min(2, past + seq - 1)] = 0  # a left-padded row
    offsets = torch.full((batch,), past, dtype=torch.long)  # each row's first position
    kv = [torch.randn(k.shape, generator=generator) for k in exported.layout.empty(batch, past)]
    inputs = [ids, mask, offsets, *kv]
    got = _run(folded, inputs)
    reference = _run(plain, inputs)
    assert len(got) == len(reference) == 1 + len(kv)
    assert got[0].shape == (batch, seq, 256)  # llm_models: vocab 256
    for a, b in zip(got, reference):
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=1e-6)
