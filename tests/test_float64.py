"""float64 end to end: imported, lowered, serialized and run on MLX's CPU backend, and
refused at load where MLX's backend lacks it (docs/semantics.md).

Tolerances: matmuls and sums are float64-exact in MLX (checked at 1e-12); its
transcendental functions and fused norms on float64 are about float32-accurate (mx.exp
to 1.2e-7 relative), so models using them are checked at float32's tolerance."""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import pytest
import torch
from torch import nn
from torch.export import Dim, export

import mlxir
from mlxir.codegen.errors import BackendError


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.down = nn.Linear(32, 8, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.softmax(self.norm(torch.nn.functional.gelu(self.up(x))), dim=-1)
        return self.down(h), (x @ self.up.weight.T).sum(-1)


def _exported(model: nn.Module) -> torch.export.ExportedProgram:
    return export(model, (torch.randn(2, 5, 16, dtype=torch.float64),), dynamic_shapes=({1: Dim("s", max=64)},))


def test_a_float64_model_runs_in_float64(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = _Block().double().eval()
    ep = _exported(model)
    program = mlxir.compile(ep)
    assert {s.dtype for s in program.info.slots} >= {"float64"}
    x = torch.randn(2, 11, 16, dtype=torch.float64)  # a length the export never saw
    with torch.no_grad():
        out, product = model(x)
    got_out, got_product = program(x)
    assert got_out.dtype == got_product.dtype == torch.float64
    torch.testing.assert_close(got_product, product, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got_out, out, rtol=1e-4, atol=1e-5)
    program.save(tmp_path / "f64.mlxfb")
    again = mlxir.load(tmp_path / "f64.mlxfb")
    for a, b in zip(again(x), (got_out, got_product), strict=True):
        assert torch.equal(a, b)


def test_float64_on_a_gpu_is_refused_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    data, _ = mlxir.compiled_bytes(_exported(_Block().double().eval()))
    monkeypatch.setattr(mx, "default_device", lambda: mx.gpu)
    with pytest.raises(BackendError, match="float64, which MLX runs on its CPU backend only"):
        mlxir.load(data)


def test_a_float64_transposed_convolution_is_refused_at_load() -> None:
    model = nn.ConvTranspose1d(3, 2, 3, stride=2).double().eval()
    ep = export(model, (torch.randn(1, 3, 8, dtype=torch.float64),))
    # The CPU target fuses the bias into the convolution: refused all the same.
    with pytest.raises(BackendError, match=r"mlx\.conv_bias_activation .*a transposed convolution in float64"):
        mlxir.compile(ep)
    with torch.no_grad():  # float32 runs
        x = torch.randn(1, 3, 8)
        model32 = model.float()
        torch.testing.assert_close(mlxir.compile(export(model32, (x,)))(x), model32(x), rtol=1e-4, atol=1e-5)


class _Factorizations(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        spd = a @ a.mT + 3 * torch.eye(a.shape[-1], dtype=a.dtype)
        q, r = torch.linalg.qr(a)
        return (
            torch.linalg.inv(spd),
            torch.linalg.solve(spd, b),
            q,
            r,
            torch.linalg.svdvals(a),
            torch.linalg.eigvalsh(spd),
            torch.linalg.pinv(a),
            torch.linalg.cholesky_ex(spd).L,
            torch.linalg.det(spd),
        )


def test_float64_linear_algebra_is_lapacks_double() -> None:
    """MLX runs its LAPACK in double for float64: every factorization agrees with torch
    to 1e-10, except the determinant, which MLX computes about float32-accurately
    (4.5e-8 relative, measured): checked at float32's tolerance."""
    model = _Factorizations()
    ep = export(model, (torch.randn(2, 4, 4, dtype=torch.float64), torch.randn(2, 4, 3, dtype=torch.float64)))
    program = mlxir.compile(ep)
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(2, 4, 4, dtype=torch.float64, generator=generator)
    b = torch.randn(2, 4, 3, dtype=torch.float64, generator=generator)
    *factors, det = program(a, b)
    *expected, expected_det = model(a, b)
    for got, want in zip(factors, expected, strict=True):
        assert got.dtype == torch.float64
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(det, expected_det, rtol=1e-4, atol=1e-5)


class _CheckedFactorizations(nn.Module):
    def forward(self, spd: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            torch.linalg.cholesky(spd),
            torch.cholesky(spd, upper=True),
            *torch.linalg.lu_factor(a),
        )


def test_float64_factorizations_fail_the_run_where_torch_raises() -> None:
    """linalg.cholesky, cholesky and linalg.lu_factor raise where LAPACK's `info` is
    nonzero (a matrix that is not positive definite, a zero pivot): the compiled
    program fails the run there too (mlxir's decompositions check `info` with an
    inverse MLX fails on), and agrees with torch to 1e-10 elsewhere."""
    model = _CheckedFactorizations()
    generator = torch.Generator().manual_seed(0)
    noise = torch.randn(2, 4, 4, dtype=torch.float64, generator=generator)
    spd = noise @ noise.mT + 4 * torch.eye(4, dtype=torch.float64)
    a = torch.randn(2, 4, 4, dtype=torch.float64, generator=generator)
    program = mlxir.compile(export(model, (spd, a), dynamic_shapes=({0: Dim("b", max=8)}, {0: Dim("c", max=8)})))
    for got, want in zip(program(spd, a), model(spd, a), strict=True):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    indefinite, singular = spd.clone(), a.clone()
    indefinite[1, 2, 2] = -100.0
    singular[0, :, 3] = 0.0
    for bad in ((indefinite, a), (spd, singular)):
        with pytest.raises(RuntimeError):
            model(*bad)
        with pytest.raises(RuntimeError, match="failed"):
            program(*bad)
