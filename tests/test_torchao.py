"""torchao-quantized models in: `IntxWeightOnlyConfig` weights (`torchao.dequantize_affine`
feeding `linear` and `embedding`) run as MLX's `quantized_matmul` and `quantized_take`
on torchao's integers converted into MLX's layout, against eager torchao.

Tolerances (max abs error against eager torchao, outputs of magnitude ~1-10): f32
1e-4 (MLX's quantized product sums in another order than torch's GEMM, and rounds
`q * scale + bias` where torchao rounds `(q - zero_point) * scale`); f16 and bf16 3%
of the largest reference value (a few roundings of the activations; MLX's CPU
quantized product in half precision is itself within 5% of the largest output of its
dequantized product, `tests/test_kernels.py`). A scheme MLX cannot hold keeps
torchao's own arithmetic: f32 within 1e-5.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from torch import nn
from torch.export import Dim, export

import mlxir
from mlxir.conversions.aten_to_mlx.quantization import TorchaoSchemeWarning
from mlxir.support.quiet import quiet_torchao_import

with quiet_torchao_import():
    from torchao.quantization import IntxWeightOnlyConfig, MappingType, quantize_
    from torchao.quantization.granularity import PerAxis, PerGroup


class TinyLM(nn.Module):
    """An embedding, a biased and an unbiased projection: every torchao weight use."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(96, 128)
        self.up = nn.Linear(128, 256)
        self.down = nn.Linear(256, 128, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens)
        return h + self.down(torch.relu(self.up(h)))


def _quantized(config: IntxWeightOnlyConfig, dtype: torch.dtype, seed: int = 0) -> TinyLM:
    torch.manual_seed(seed)
    model = TinyLM().eval().to(dtype)
    quantize_(model, config)  # the linears
    quantize_(model, config, filter_fn=lambda module, _: isinstance(module, nn.Embedding))
    return model


def _export(model: nn.Module) -> Any:
    tokens = torch.randint(0, 96, (2, 5))
    return export(model, (tokens,), dynamic_shapes={"tokens": {0: Dim("b", max=8), 1: Dim("t", max=64)}})


def _ops(program: Any) -> list[str]:
    return [ins.op for ins in program.info.instructions]


def _max_error(program: Any, model: nn.Module, dtype: torch.dtype) -> tuple[float, float]:
    """The largest error over inputs whose shapes differ from the exported ones, and
    the largest reference value."""
    worst, scale = 0.0, 0.0
    for batch, length in ((1, 1), (3, 9)):
        tokens = torch.randint(0, 96, (batch, length))
        with torch.no_grad():
            expected = model(tokens).float()
        got = torch.as_tensor(program(tokens)).float()
        assert got.shape == expected.shape and got.dtype == torch.float32
        worst = max(worst, (got - expected).abs().max().item())
        scale = max(scale, expected.abs().max().item())
    return worst, scale


SCHEMES = [
    (torch.int4, 32),
    (torch.int4, 64),
    (torch.int4, 128),
    (torch.int8, 32),
    (torch.int8, 64),
    (torch.int8, 128),
    (torch.int2, 32),
]


@pytest.mark.parametrize("weight_dtype,group", SCHEMES, ids=lambda v: str(v).removeprefix("torch."))
def test_torchao_weights_run_on_mlx_quantized_kernels(weight_dtype: torch.dtype, group: int) -> None:
    model = _quantized(IntxWeightOnlyConfig(weight_dtype=weight_dtype, granularity=PerGroup(group)), torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TorchaoSchemeWarning)
        program = mlxir.compile(_export(model))
    ops = _ops(program)
    assert ops.count("mlx.quantized_matmul") == 2 and ops.count("mlx.quantized_take") == 1, ops
    assert not {"mlx.matmul", "mlx.addmm", "mlx.dequantize", "mlx.take"} & set(ops), ops
    bits = {torch.int2: 2, torch.int4: 4, torch.int8: 8}[weight_dtype]
    packed = [ins for ins in program.info.instructions if ins.op.startswith("mlx.quantized_")]
    assert {int(ins.props["bits"]) for ins in packed} == {bits}
    assert {int(ins.props["group_size"]) for ins in packed} == {group}
    error, _ = _max_error(program, model, torch.float32)
    assert error <= 1e-4


def test_asymmetric_torchao_weights_keep_their_zero_points() -> None:
    config = IntxWeightOnlyConfig(
        weight_dtype=torch.int4, granularity=PerGroup(32), mapping_type=MappingType.ASYMMETRIC
    )
    model = _quantized(config, torch.float32, seed=1)
    assert model.up.weight.zero_point.abs().max() > 0  # the case this test is for
    program = mlxir.compile(_export(model))
    assert "mlx.quantized_matmul" in _ops(program)
    error, _ = _max_error(program, model, torch.float32)
    assert error <= 1e-4


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_torchao_weights_in_half_precision(dtype: torch.dtype) -> None:
    model = _quantized(IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(64)), dtype)
    program = mlxir.compile(_export(model))
    assert _ops(program).count("mlx.quantized_matmul") == 2
    error, scale = _max_error(program, model, dtype)
    assert error <= 0.03 * scale


@pytest.mark.parametrize(
    "granularity,reason,kept",
    [(PerGroup(16), "not 16", 3), (PerAxis(0), "not 256 (per-axis)", 1)],
    ids=["group16", "per-axis"],
)
def test_schemes_mlx_lacks_stay_exact_and_say_so(granularity: Any, reason: str, kept: int) -> None:
    """Groups of 16 suit no weight; per-axis scales over 128 columns are MLX's groups
    of 128 (the embedding and `up`), over 256 (`down`) they are not."""
    model = _quantized(IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=granularity), torch.float32)
    with pytest.warns(TorchaoSchemeWarning) as caught:
        program = mlxir.compile(_export(model))
    messages = [str(w.message) for w in caught]
    assert len(messages) == kept, messages  # one per weight, each on one line
    assert all("is not run on MLX's quantized kernels" in m and reason in m and "\n" not in m for m in messages)
    assert "'down.weight'" in messages[-1]
    quantized = [op for op in _ops(program) if op.startswith("mlx.quantized_")]
    assert len(quantized) == 3 - kept
    error, _ = _max_error(program, model, torch.float32)
    assert error <= 1e-4 if quantized else error <= 1e-5


class Wide(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(96, 128)
        self.up = nn.Linear(128, 1024)
        self.down = nn.Linear(1024, 512)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.down(self.up(self.embed(tokens)))


def test_inspect_shows_quantized_and_run_time_dequantized_weights(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Per-axis int8: the embedding and `up` (rows of 128) run quantized in groups of
    128; `down` (rows of 1024) is dequantized at every call: its 2 MiB in f32 are too
    big for `fold-constant-weights` to store in their place."""
    from mlxir.tools.cli import main_with

    torch.manual_seed(0)
    model = Wide().eval()
    config = IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0))
    quantize_(model, config)
    quantize_(model, config, filter_fn=lambda module, _: isinstance(module, nn.Embedding))
    with pytest.warns(TorchaoSchemeWarning):
        program = mlxir.compile(_export(model))
    tokens = torch.randint(0, 96, (3, 7))
    with torch.no_grad():
        expected = model(tokens)
    assert (torch.as_tensor(program(tokens)) - expected).abs().max().item() <= 1e-4 * expected.abs().max().item()
    path = tmp_path / "wide.mlxfb"
    program.save(path)
    capsys.readouterr()
    assert main_with(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    # 8 bits per weight, an f32 scale and bias per row of 128: 128 + 8 bytes a row
    up, embed = 1024 * (128 + 8), 96 * (128 + 8)
    assert f"quantized: 1 matmul weights, 8 bits, groups of 128, affine: {up:,} bytes ({1024 * 128 * 4:,} unquantized" in out
    assert f"quantized: 1 embedding tables, 8 bits, groups of 128, affine: {embed:,} bytes ({96 * 128 * 4:,} unquantized" in out
    assert f"dequantized at every call: 1 integer weights ({1024 * 512:,} bytes)" in out
