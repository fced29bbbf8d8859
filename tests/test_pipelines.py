"""Every pipeline a user can write that ends in mlx ops keeps PyTorch's meaning.

An exported program is printed as an aten-level file, and `mlx-opt` runs one pipeline
over it to an `.mlxfb` program (`-t mlx-fb`), as a user would. Each program is then
run at sequence lengths other than the export's and compared with eager PyTorch. The
programs hit what once only canonicalization made right: fully masked SDPA rows, f64
scalars, HF's RMSNorm and repeat_kv decompositions, lossless and lossy cast chains.

Tolerances (max abs error, on outputs of magnitude ~1): f32 1e-5, f16 1e-2, bf16 5e-2;
the fused kernels (`mlx.rms_norm`) round differently from the decomposition.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn
from torch.export import Dim, export

from mlxir import lower  # the pipeline of this device, as before the compiler took its target
from mlxir.codegen import serialize
from mlxir.conversions.torch_to_aten import import_program
from mlxir.dialects.context import make_context
from mlxir.runtime.program import Program
from mlxir.tools.mlx_opt import run as mlx_opt

HEADS, KV_HEADS, HEAD_DIM = 4, 2, 8
EXPORT_LENGTH = 5
RUN_LENGTHS = (3, 7)
TOLERANCE = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 5e-2}

PIPELINES = (
    "convert-aten-to-mlx",
    "convert-aten-to-mlx,cse",
    "convert-aten-to-mlx,dce",
    "convert-aten-to-mlx,canonicalize",
    "convert-aten-to-mlx,zero-fully-masked-sdpa-rows",
    "convert-aten-to-mlx,optimize-mlx",
    "convert-aten-to-mlx,unrepeat-kv,fuse-rms-norm,fold-norm-affine,dce",
    "convert-aten-to-mlx,fold-lossless-casts,remove-identity-casts",
    "lower-to-mlx",
)


class GroupedAttention(nn.Module):
    """An HF-style attention block with every weight an input: RMSNorm decomposed,
    K/V repeated for grouped-query attention, a bool mask, a float scale."""

    def forward(
        self, x: torch.Tensor, kv: torch.Tensor, mask: torch.Tensor, norm_weight: torch.Tensor
    ) -> torch.Tensor:
        batch, length, _ = x.shape
        hidden = x.to(torch.float32)
        variance = hidden.pow(2).mean(-1, keepdim=True)
        hidden = norm_weight * (hidden * torch.rsqrt(variance + 1e-6)).to(x.dtype)
        q = hidden.view(batch, length, HEADS, HEAD_DIM).transpose(1, 2)
        repeated = kv[:, :, None].expand(batch, KV_HEADS, HEADS // KV_HEADS, length, HEAD_DIM)
        kv_heads = repeated.reshape(batch, HEADS, length, HEAD_DIM)
        out = nn.functional.scaled_dot_product_attention(q, kv_heads, kv_heads, attn_mask=mask)
        return out.transpose(1, 2).reshape(batch, length, HEADS * HEAD_DIM) * 0.5


class CastChains(nn.Module):
    """A lossless-then-lossy chain (f16 → f32 → bf16) that folds to one cast, and a
    lossy-then-widening one (f32 → f16 → f32) that must not, around a float scalar."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        folded = x.to(torch.float32).to(torch.bfloat16)
        kept = (x.to(torch.float32) * 3.3).to(torch.float16).to(torch.float32)
        return folded.to(torch.float32) + kept


class SlicedHeads(nn.Module):
    """Phi-3's fused q/k/v product cut into pieces by slices, Qwen3's per-head RMSNorm
    between the head reshape and the transpose, a tanh GELU (`slices-to-split`,
    `split-heads-once`, `transpose-before-norm`, `tanh-gelu-as-sigmoid`)."""

    def forward(self, x: torch.Tensor, w: torch.Tensor, norm_weight: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        y = x @ w.t()
        q = y[..., : 2 * HEAD_DIM].view(batch, length, 2, HEAD_DIM)
        k = y[..., 2 * HEAD_DIM : 3 * HEAD_DIM].view(batch, length, 1, HEAD_DIM)
        v = y[..., 3 * HEAD_DIM :].view(batch, length, 1, HEAD_DIM).transpose(1, 2)
        q = nn.functional.rms_norm(q, (HEAD_DIM,), norm_weight, 1e-6).transpose(1, 2)
        k = nn.functional.rms_norm(k, (HEAD_DIM,), norm_weight, 1e-6).transpose(1, 2)
        return q * k + nn.functional.gelu(v, approximate="tanh")


def _attention_inputs(length: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(length)
    x = torch.randn(2, length, HEADS * HEAD_DIM, generator=generator).to(dtype)
    kv = torch.randn(2, KV_HEADS, length, HEAD_DIM, generator=generator).to(dtype)
    mask = torch.rand(length, length, generator=generator) > 0.4
    mask[0] = False  # a fully masked row: PyTorch gives zeros, MLX alone does not
    norm_weight = torch.randn(HEADS * HEAD_DIM, generator=generator).to(dtype)
    return x, kv, mask, norm_weight


def _casts_inputs(length: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(length)
    return (torch.randn(length, 6, generator=generator).to(torch.float16),)


def _sliced_heads_inputs(length: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(length)
    width = 4 * HEAD_DIM
    x = torch.randn(2, length, width, generator=generator).to(dtype)
    w = (torch.randn(width, width, generator=generator) / width**0.5).to(dtype)
    norm_weight = torch.randn(HEAD_DIM, generator=generator).to(dtype)
    return x, w, norm_weight


CASES = {
    "attention": (GroupedAttention, _attention_inputs, {"x": {1: "n"}, "kv": {2: "n"}, "mask": {0: "n", 1: "n"}, "norm_weight": {}}),
    "casts": (CastChains, _casts_inputs, {"x": {0: "n"}}),
    "sliced_heads": (SlicedHeads, _sliced_heads_inputs, {"x": {1: "n"}, "w": {}, "norm_weight": {}}),
}


def _aten_file(tmp_path: Path, case: str, dtype: torch.dtype) -> tuple[Path, nn.Module]:
    module_cls, make_inputs, dims = CASES[case]
    module = module_cls()
    n = Dim("n", min=2, max=64)
    shapes = {name: {axis: n for axis in axes} or None for name, axes in dims.items()}
    exported = export(module, make_inputs(EXPORT_LENGTH, dtype), dynamic_shapes=shapes)
    path = tmp_path / f"{case}.mlir"
    path.write_text(str(import_program(exported)))
    return path, module


def _compiled(path: Path, pipeline: str, tmp_path: Path) -> Program:
    output = tmp_path / "program.mlxfb"
    status = mlx_opt([str(path), "-p", pipeline, "-t", "mlx-fb", "-o", str(output)])
    assert status == 0, f"mlx-opt -p {pipeline} -t mlx-fb failed"
    return Program(output.read_bytes())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_pipeline_keeps_pytorch_semantics(case: str, dtype: torch.dtype, tmp_path: Path) -> None:
    path, module = _aten_file(tmp_path, case, dtype)
    _, make_inputs, _ = CASES[case]
    for pipeline in PIPELINES:
        program = _compiled(path, pipeline, tmp_path)
        for length in RUN_LENGTHS:
            inputs = make_inputs(length, dtype)
            with torch.no_grad():
                expected = module(*inputs)
            got = torch.as_tensor(program(*inputs))
            assert got.dtype == expected.dtype
            error = (got.float() - expected.float()).abs().max().item()
            assert error <= TOLERANCE[dtype], f"{case} [{dtype}, n={length}] -p {pipeline}: {error}"
            if case == "attention":  # the fully masked row is exactly zero, not close to it
                assert torch.equal(got[:, 0], torch.zeros_like(got[:, 0])), pipeline


def test_convert_alone_and_the_default_pipeline_agree(tmp_path: Path) -> None:
    """`-p convert-aten-to-mlx` and `lower-to-mlx` compute the same values."""
    path, _ = _aten_file(tmp_path, "attention", torch.float32)
    inputs = _attention_inputs(6, torch.float32)
    results = []
    for pipeline in ("convert-aten-to-mlx", "lower-to-mlx"):
        results.append(torch.as_tensor(_compiled(path, pipeline, tmp_path)(*inputs)))
    torch.testing.assert_close(results[0], results[1], rtol=0, atol=1e-5)


def test_lower_from_text_equals_lower_in_memory(tmp_path: Path) -> None:
    """Printing the aten-level module and parsing it back loses nothing a program needs."""
    from xdsl.parser import Parser

    path, _ = _aten_file(tmp_path, "attention", torch.float32)
    parsed = Parser(make_context(), path.read_text()).parse_module()
    in_memory = Program(serialize(lower(parsed), {}))
    from_file = _compiled(path, "lower-to-mlx", tmp_path)
    inputs = _attention_inputs(4, torch.float32)
    assert torch.equal(torch.as_tensor(in_memory(*inputs)), torch.as_tensor(from_file(*inputs)))


def test_sliced_heads_get_the_rewrites(tmp_path: Path) -> None:
    """The default pipeline turns `SlicedHeads` into one product, one head reshape and
    transpose, one split on the heads axis and the sigmoid form of the GELU."""
    from collections import Counter

    path, _ = _aten_file(tmp_path, "sliced_heads", torch.float32)
    ops = Counter(ins.op for ins in _compiled(path, "lower-to-mlx", tmp_path).info.instructions)
    assert ops["mlx.slice"] == 0 and ops["mlx.tanh"] == 0, ops
    assert ops["mlx.reshape"] == 1 and ops["mlx.transpose"] == 2 and ops["mlx.split"] == 1, ops
    assert ops["mlx.sigmoid"] == 1, ops


def test_tanh_gelu_as_sigmoid_within_its_stated_tolerance(tmp_path: Path) -> None:
    """The sigmoid form of the tanh GELU is within 6e-7 of torch's GELU computed in
    float64 on the same f32 inputs, over [-12, 12] (docs/architecture.md): at |x| = 12
    a unit in the result's last place is 9.5e-7, and the CPU's polynomial `sigmoid`
    (on these 240001 values) is within one unit of 1's last place."""

    class Gelu(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return nn.functional.gelu(x, approximate="tanh")

    exported = export(Gelu(), (torch.randn(8),), dynamic_shapes={"x": {0: Dim("n", max=1 << 20)}})
    path = tmp_path / "gelu.mlir"
    path.write_text(str(import_program(exported)))
    program = _compiled(path, "lower-to-mlx", tmp_path)
    assert "mlx.sigmoid" in {ins.op for ins in program.info.instructions}
    x = torch.linspace(-12, 12, 240001, dtype=torch.float32)
    expected = nn.functional.gelu(x.double(), approximate="tanh")
    got = torch.as_tensor(program(x)).double()
    assert (got - expected).abs().max().item() <= 6e-7


def test_optimize_mlx_written_out_is_what_the_stage_runs() -> None:
    """`optimize_mlx_passes` (what `mlxir debug --bisect` runs one by one) names exactly
    the patterns the `optimize-mlx` stage applies, between two `fold-known-dims`."""
    from mlxir.conversions.pipelines import optimize_mlx_passes
    from mlxir.transforms.catalog import OPTIMIZE, PATTERNS
    from mlxir.transforms.pattern_passes import patterns_by_op

    names = optimize_mlx_passes()
    assert names[0] == names[-1] == "fold-known-dims"
    in_stage = {type(p).__name__ for patterns in patterns_by_op(OPTIMIZE).values() for p in patterns}
    assert {PATTERNS[name].pattern for name in names[1:-1]} == in_stage
    assert "fold-weight-transposes" not in names


def test_compile_splits_the_program_when_asked() -> None:
    """`mlxir.compile(ep, tensor_parallel=2)` splits the program (it used to drop the
    argument and compile it whole): loaded by one process, it names the 2 ranks it
    needs."""
    import mlxir
    from mlxir.codegen.errors import ProgramError

    class Mlp(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.up, self.down = nn.Linear(8, 32), nn.Linear(32, 8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.down(torch.relu(self.up(x)))

    ep = export(Mlp(), (torch.randn(2, 8),))
    with pytest.raises(ProgramError, match="split over 2 ranks .* runs in a group of 1"):
        mlxir.compile(ep, tensor_parallel=2)
    assert mlxir.compile(ep)(torch.ones(2, 8)).shape == (2, 8)
