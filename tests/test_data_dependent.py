"""Shapes that depend on values (docs/semantics.md §8): `torch.nonzero`, `x[mask]`,
`masked_select`. torch.export gives each result an unbacked size (`u0`); mlxir's
`mlx.nonzero` counts the true elements at run time, a sync point, and every later
shape follows from the values computed there."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.export import Dim, export

import mlxir
from mlxir.conversions.torch_to_aten import UnsupportedOpsError
from mlxir.runtime.mlxfn import ExportError, export_mlxfn
from mlxir.tools.cli import main_with


class _Selects(torch.nn.Module):
    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, ...]:
        picked = x[keep]
        return picked.sum() + picked * 2, torch.nonzero(x > 0), torch.masked_select(x, x > 0.5)


def _exported() -> torch.export.ExportedProgram:
    rows = Dim("rows", max=64)
    return export(_Selects(), (torch.randn(4, 3), torch.rand(4, 3) > 0.5), dynamic_shapes=({0: rows}, {0: rows}))


def test_each_call_finds_its_own_count() -> None:
    program = mlxir.compile(_exported())
    for rows, seed in [(4, 0), (9, 1), (2, 2), (9, 3)]:
        generator = torch.Generator().manual_seed(seed)
        x = torch.randn(rows, 3, generator=generator)
        keep = torch.rand(rows, 3, generator=generator) > 0.5
        for got, want in zip(program(x, keep), _Selects()(x, keep), strict=True):
            assert got.shape == want.shape
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    nothing = program(torch.randn(3, 3), torch.zeros(3, 3, dtype=torch.bool))[0]
    assert nothing.shape == (0,)


def test_a_sync_point_runs_interpreted_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ep = _exported()
    with pytest.raises(ValueError, match=r"mlx\.nonzero\) gives a shape that depends on values"):
        mlxir.compile(ep, compile=True)
    program = mlxir.compile(ep)  # "auto": repeated shapes still run interpreted
    x, keep = torch.randn(5, 3), torch.rand(5, 3) > 0.5
    for _ in range(4):
        program(x, keep)
    assert program.traces == 0
    with pytest.raises(ExportError, match="depends on values"):
        export_mlxfn(program, tmp_path / "f.mlxfn", [(x, keep)])
    path = tmp_path / "selects.mlxfb"
    program.save(path)
    capsys.readouterr()
    assert main_with(["inspect", str(path)]) == 0
    report = capsys.readouterr().out
    assert report.count("sync point: instruction #") == 3 and "mlx.nonzero" in report
    assert "runs interpreted:" in report


class _Counts(torch.nn.Module):
    def forward(self, x: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, ...]:
        values, counts = torch.unique(x, return_counts=True)
        return values, counts, torch.repeat_interleave(counts), torch.arange(k.item())


def test_unique_repeat_interleave_and_item_are_sync_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each is a sync point: the runs follow the values (against eager torch), the
    program runs interpreted, and `mlxir inspect` names each with what it reads."""
    ep = export(_Counts(), (torch.tensor([3, 1, 3, 2]), torch.tensor(4)), dynamic_shapes=({0: Dim("n", max=64)}, None))
    program = mlxir.compile(ep)
    for x, k in [([5, 5, 5], 0), ([2, 9, 2, 9, 9, 1, 4], 6)]:
        got, want = program(torch.tensor(x), torch.tensor(k)), _Counts()(torch.tensor(x), torch.tensor(k))
        for g, w in zip(got, want, strict=True):
            assert torch.equal(g, w), (g, w)
    with pytest.raises(ValueError, match=r"mlx\.unique\) gives a shape that depends on values"):
        mlxir.compile(ep, compile=True)
    path = tmp_path / "counts.mlxfb"
    program.save(path)
    capsys.readouterr()
    assert main_with(["inspect", str(path)]) == 0
    report = capsys.readouterr().out
    assert report.count("sync point: instruction #") == 3
    assert "mlx.unique" in report and "mlx.repeat_interleave" in report
    assert "mlx.item" in report and "its host integer depends on values" in report


def test_unique_along_a_dim_is_refused_with_its_reason() -> None:
    class _Rows(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.unique(x, dim=0)

    with pytest.raises(UnsupportedOpsError, match="unique along a dim"):
        mlxir.compile(export(_Rows(), (torch.tensor([[1, 2], [1, 2]]),)))


def test_a_storage_offset_is_read_only_by_assertions() -> None:
    """`tensor_split` by a tensor slices at `.item()` positions, and torch.export asserts
    each slice's storage offset is not negative: that use is dropped with the
    assertion (see the `tensor_split_by_tensor` differential case); reading the offset
    for a value is refused, as mlxir's values are not views of a storage."""

    class _Offset(torch.nn.Module):
        def forward(self, x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            return torch.arange(x[k.item():].storage_offset())

    with pytest.raises(Exception, match="sym_storage_offset.* is read beyond an assertion"):
        mlxir.compile(export(_Offset(), (torch.randn(5, 3), torch.tensor(2))))
