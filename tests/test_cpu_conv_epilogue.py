"""Convolution epilogues on the CPU target, end to end: `cpu-fuse-conv-epilogue` makes a
convolution, its bias (a folded batch norm's included) and its relu6/silu one
`mlx.conv_bias_activation`; the backend runs a depthwise one natively, or as taps
built at run time where the native kernels cannot run (turned off, an `.mlxfn` export).
MobileNet-V2's inverted residual (relu6), the same block with silu (EfficientNet's
MBConv without its squeeze-excite) and ConvNeXt's block (a 7x7 depthwise convolution
with a bias, a layer norm after it), compiled with `mlxir.compile` for the CPU target,
against eager torch in f32/f16/bf16, native and not."""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from kernel_helpers import MX_OF
from native_support import bits_equal, kernels
from torch import nn

import mlxir
from mlxir.codegen import read_program
from mlxir.dialects import mlx
from mlxir.runtime import ir_interpreter
from mlxir.runtime.backend import GENERIC
from mlxir.runtime.cpu import convolution, native
from mlxir.runtime.cpu.backend import CPU
from mlxir.runtime.ir_interpreter import parse_module, run_module
from mlxir.runtime.mlxfn import export_mlxfn

CPU_PIPELINE = "lower-to-mlx{target=cpu}"
TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}
"""Relative to the output's largest magnitude, as `test_cpu_target.py`'s CNN block."""


class _InvertedResidual(nn.Module):
    """MobileNet-V2's block (1x1 expand, 3x3 depthwise, 1x1 project, each with a batch
    norm; relu6 or silu after the first two; a residual), then a strided one."""

    def __init__(self, activation: type[nn.Module]) -> None:
        super().__init__()

        def unit(c_in: int, c_out: int, kernel: int, stride: int, groups: int, act: bool) -> list[nn.Module]:
            layers: list[nn.Module] = [
                nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(c_out)
            ]
            return [*layers, activation()] if act else layers

        self.first = nn.Sequential(
            *unit(16, 64, 1, 1, 1, True), *unit(64, 64, 3, 1, 64, True), *unit(64, 16, 1, 1, 1, False)
        )
        self.second = nn.Sequential(
            *unit(16, 48, 1, 1, 1, True), *unit(48, 48, 3, 2, 48, True), *unit(48, 24, 1, 1, 1, False)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(x + self.first(x))


class _ConvNeXtBlock(nn.Module):
    """ConvNeXt's block: a 7x7 depthwise convolution with a bias, channels-last layer
    norm, an MLP with GELU, a layer scale and a residual."""

    def __init__(self, channels: int = 32) -> None:
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.up = nn.Linear(channels, 4 * channels)
        self.down = nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(torch.full((channels,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.gamma * self.down(nn.functional.gelu(self.up(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


def _randomized(model: nn.Module) -> nn.Module:
    """`model` in eval mode with batch norms that are not the identity."""
    torch.manual_seed(0)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            assert module.running_mean is not None and module.running_var is not None
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(module.weight, 0.5, 1.5)
            nn.init.uniform_(module.bias, -0.5, 0.5)
    return model.eval()


BLOCKS = {
    "mobilenet-v2": (lambda: _InvertedResidual(nn.ReLU6), (2, 16, 14, 14), "relu6"),
    "mbconv-silu": (lambda: _InvertedResidual(nn.SiLU), (2, 16, 14, 14), "silu"),
    "convnext": (_ConvNeXtBlock, (2, 32, 14, 14), "none"),
}


def _fused(data: bytes) -> Counter[str]:
    return Counter(instruction.op for instruction in read_program(data).instructions)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", BLOCKS)
def test_blocks_match_torch_native_and_not(name: str, dtype: torch.dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every convolution of the block is one `conv_bias_activation` (the depthwise one
    with its folded norm and activation), and the compiled program matches eager torch
    with the native kernels (one call per depthwise convolution) and without them
    (suspended, as in an export), interpreted and as a compiled trace."""
    kernels()
    native_calls: list[str] = []
    native_call = convolution._native  # pyright: ignore[reportPrivateUsage]

    def counted(*args: Any) -> mx.array:
        native_calls.append(args[-1])
        return native_call(*args)

    monkeypatch.setattr(convolution, "_native", counted)
    make, shape, activation = BLOCKS[name]
    model = _randomized(make()).to(dtype)
    x = torch.randn(*shape, dtype=dtype)
    with torch.no_grad():
        expected = model(x).float()
    data, _ = mlxir.compiled_bytes(torch.export.export(model, (x,)), CPU_PIPELINE)
    ops = _fused(data)
    convolutions = sum(isinstance(m, nn.Conv2d) for m in model.modules())
    assert ops["mlx.conv_general"] == 0 and ops["mlx.conv_bias_activation"] == convolutions, ops
    assert ops["mlx.pad"] == 0 and ops["mlx.sigmoid"] == 0 and ops["mlx.minimum"] == 0, ops  # no taps, all fused
    scale = float(expected.abs().max())
    depthwise = sum(isinstance(m, nn.Conv2d) and m.groups > 1 for m in model.modules())
    for suspended in (False, True):
        program = mlxir.Program(data)  # a fresh trace cache: a trace holds the kernels it was built with
        with native.suspended() if suspended else contextlib.nullcontext():
            for call in range(2):  # interpreted, then the compiled trace
                native_calls.clear()
                got = program(x)
                assert got.dtype == dtype and got.shape == expected.shape
                error = float((got.float() - expected).abs().max())
                assert error <= TOLERANCE[dtype] * scale, (suspended, error / scale)
                if call == 0:
                    assert native_calls == ([] if suspended else [activation] * depthwise), native_calls


def test_depthwise_epilogue_is_fused_in_the_ir() -> None:
    """The depthwise convolution of MobileNet-V2's block carries its folded batch norm
    as the bias and relu6 as its activation."""
    model = _randomized(_InvertedResidual(nn.ReLU6))
    module = mlxir.import_program(torch.export.export(model, (torch.randn(1, 16, 14, 14),)))
    mlxir.lower(module, target="cpu")
    fused = [
        (op.groups.value.data, op.activation.data, op.bias is not None)
        for op in module.walk()
        if isinstance(op, mlx.ConvBiasActivationOp)
    ]
    assert fused == [
        (1, "relu6", True), (64, "relu6", True), (1, "none", True),
        (1, "relu6", True), (48, "relu6", True), (1, "none", True),
    ], fused


def test_export_runs_the_taps(tmp_path: Path) -> None:
    """An `.mlxfn` export suspends the native kernels: the file holds MLX's primitives
    only (the taps), and MLX runs it within float32 rounding of the native program."""
    kernels()
    model = _randomized(_InvertedResidual(nn.ReLU6))
    x = torch.randn(1, 16, 14, 14)
    data, _ = mlxir.compiled_bytes(torch.export.export(model, (x,)), CPU_PIPELINE)
    program = mlxir.Program(data)
    path = tmp_path / "block.mlxfn"
    export_mlxfn(program, path)
    (exported,) = mx.import_function(str(path))(mx.array(x.numpy()))
    native_result = np.array(mx.array(program(x).numpy()))
    with torch.no_grad():
        expected = model(x).numpy()
    scale = float(np.abs(expected).max())
    assert float(np.abs(np.array(exported) - expected).max()) <= 1e-5 * scale
    assert float(np.abs(native_result - expected).max()) <= 1e-5 * scale


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"),
    [(3, 1, (1, 1), 1), (3, 2, (1, 1), 1), (5, 1, (2, 2), 1), (3, 1, (2, 2), 2), (2, 2, (1, 0), 1)],
)
def test_runtime_taps_are_the_pass_program(
    ty: str, kernel: int, stride: int, padding: tuple[int, int], dilation: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without native kernels the backend's taps are what `cpu-depthwise-conv` writes
    into a program, run by the generic kernels: the same bits."""
    from xdsl.passes import PassPipeline

    from mlxir.conversions.registry import registered_passes
    from mlxir.dialects.context import make_context

    lo, hi = padding
    out_h = (9 + lo + hi - dilation * (kernel - 1) - 1) // stride + 1
    out_w = (11 + lo + hi - dilation * (kernel - 1) - 1) // stride + 1
    x_type, w_type, y_type = f"tensor<?x9x11x6x{ty}>", f"tensor<6x{kernel}x{kernel}x1x{ty}>", f"tensor<?x{out_h}x{out_w}x6x{ty}>"
    text = f"""
func.func @forward(%x: {x_type}, %w: {w_type}) -> {y_type} {{
  %y = mlx.conv_general %x, %w stride [{stride}, {stride}] padding [{lo}, {lo}] [{hi}, {hi}] kernel_dilation [{dilation}, {dilation}] input_dilation [1, 1] groups 6 : {x_type}, {w_type} -> {y_type}
  func.return %y : {y_type}
}}"""
    rewritten = parse_module(text)
    PassPipeline.parse_spec(registered_passes(), "cpu-depthwise-conv").apply(make_context(), rewritten)
    rng = np.random.default_rng(kernel * 10 + stride)
    x = mx.array(rng.standard_normal((2, 9, 11, 6)).astype(np.float32)).astype(MX_OF[ty])
    w = mx.array(rng.standard_normal((6, kernel, kernel, 1)).astype(np.float32)).astype(MX_OF[ty])
    props: dict[str, object] = {
        "stride": [stride] * 2, "padding_lo": [lo] * 2, "padding_hi": [hi] * 2, "kernel_dilation": [dilation] * 2,
        "input_dilation": [1, 1], "groups": 6,
    }
    with mx.stream(mx.cpu), native.suspended():
        got = CPU.kernel_factory("mlx.conv_general")(props, [MX_OF[ty]])([x, w])[0]  # pyright: ignore[reportOptionalCall]
    monkeypatch.setattr(ir_interpreter, "backend_for", lambda device: GENERIC)
    (expected,) = run_module(rewritten, {}, [x, w])
    assert bits_equal(got, expected)
