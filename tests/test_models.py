"""Whole models end to end (export → compile → run on MLX) against eager PyTorch, and
the runtime's contract: input kinds, input errors, state across calls, save/load."""

from __future__ import annotations

import mlx.core as mx
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from stateful_models import History, StaticCache
from torch import nn
from torch.export import Dim, export

import mlxir
from mlxir.tools import demo_model


def _close(got: torch.Tensor, expected: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    torch.testing.assert_close(got, expected, rtol=rtol, atol=atol)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.net(x), dim=-1)


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.head = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.bn2(self.conv2(x))), 1)
        return self.head(x.flatten(1))


class Block(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, :, :])
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(self.norm2(x))






def test_mlp_dynamic_batch() -> None:
    torch.manual_seed(0)
    model = MLP().eval()
    ep = export(model, (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("batch", min=1, max=64)}})
    program = mlxir.compile(ep)
    for batch in (1, 3, 17):
        x = torch.randn(batch, 8)
        _close(program(x), model(x).detach())


def test_cnn() -> None:
    torch.manual_seed(0)
    model = CNN().eval()
    for bn in (model.bn1, model.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    ep = export(model, (torch.randn(2, 3, 16, 16),), dynamic_shapes={"x": {0: Dim("batch", min=1, max=8)}})
    program = mlxir.compile(ep)
    x = torch.randn(5, 3, 16, 16)
    with torch.no_grad():
        _close(program(x), model(x), rtol=1e-4, atol=1e-4)


def test_transformer_block_with_bool_mask() -> None:
    torch.manual_seed(0)
    model = Block().eval()
    seq = Dim("seq", min=2, max=64)
    x, mask = torch.randn(2, 6, 32), torch.ones(2, 6, 6, dtype=torch.bool).tril()
    ep = export(model, (x, mask), dynamic_shapes={"x": {1: seq}, "mask": {1: seq, 2: seq}})
    program = mlxir.compile(ep)
    for s in (3, 11):
        x = torch.randn(2, s, 32)
        mask = torch.ones(2, s, s, dtype=torch.bool).tril()
        with torch.no_grad():
            _close(program(x, mask), model(x, mask), rtol=1e-4, atol=1e-4)


def test_mutated_buffer_persists_across_calls_and_resets() -> None:
    torch.manual_seed(0)
    model = StaticCache().eval()
    ep = export(model, (torch.randn(1, 1, 4), torch.tensor([0])))
    program = mlxir.compile(ep)
    reference = StaticCache().eval()
    reference.load_state_dict(model.state_dict())
    for step in range(5):
        x, pos = torch.randn(1, 1, 4), torch.tensor([step])
        with torch.no_grad():
            _close(program(x, pos), reference(x, pos))
    program.reset_state()
    with torch.no_grad():
        fresh = StaticCache().eval()
        fresh.load_state_dict(model.state_dict())
        fresh.cache.zero_()
        x, pos = torch.randn(1, 1, 4), torch.tensor([2])
        _close(program(x, pos), fresh(x, pos))


def test_rolling_history_buffer() -> None:
    model = History()
    program = mlxir.compile(export(model, (torch.randn(3),)))
    reference = History()
    for _ in range(6):
        x = torch.randn(3)
        _close(program(x), reference(x))


def test_input_kinds_are_returned_in_kind() -> None:
    model = demo_model.build_model()
    program = mlxir.compile(demo_model.export_model(model))
    tokens = torch.randint(0, demo_model.VOCAB, (1, 9))
    expected = model(tokens).detach()
    from_numpy = program(tokens.numpy())
    from_mlx = program(mx.array(tokens.numpy()))
    assert isinstance(from_numpy, np.ndarray)
    assert isinstance(from_mlx, mx.array)
    np.testing.assert_allclose(from_numpy, expected.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(from_mlx), expected.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ((), "missing argument 'tokens'"),
        ((torch.zeros(1, 4, dtype=torch.int64), 1), "takes 1 argument \\(tokens\\), got 2 positional"),
        ((torch.zeros(1, 4),), "input 'tokens': expected dtype int64, got float32"),
        ((torch.zeros(4, dtype=torch.int64),), "expected rank 2"),
        ((torch.zeros(2, 4, dtype=torch.int64),), "dim 0 must be 1"),
        ((torch.zeros(1, 65, dtype=torch.int64),), "dim 1 must lie in \\[2, 64\\], got 65"),
        (("tokens",), "expected a tensor int64\\[1, \\?\\], got str"),
    ],
)
def test_wrong_inputs_name_the_input(inputs: tuple, message: str) -> None:
    program = mlxir.compile(demo_model.export_model(demo_model.build_model()))
    with pytest.raises(mlxir.InputError, match=message):
        program(*inputs)


def test_save_and_load_round_trip(tmp_path) -> None:
    model = demo_model.build_model()
    program = mlxir.compile(demo_model.export_model(model))
    path = tmp_path / "model.mlxfb"
    program.save(path)
    loaded = mlxir.load(path)
    tokens = torch.randint(0, demo_model.VOCAB, (1, 5))
    _close(loaded(tokens), model(tokens).detach())
    assert mlxir.load(path.read_bytes()).to_bytes() == path.read_bytes()


def test_corrupt_programs_raise_program_error(tmp_path) -> None:
    program = mlxir.compile(demo_model.export_model(demo_model.build_model()))
    data = program.to_bytes()
    for bad in (data[: len(data) // 2], b"", b"not a program", data[:8] + b"\xff" * 64 + data[72:]):
        with pytest.raises(mlxir.ProgramError):
            mlxir.load(bad)
    with pytest.raises(mlxir.ProgramError, match="cannot read"):
        mlxir.load(tmp_path / "missing.mlxfb")
