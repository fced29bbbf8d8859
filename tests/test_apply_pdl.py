"""`apply-pdl` (`transforms/apply_pdl.py`): docs/pdl/'s worked example from Python on a
lowered model, against the built-in pattern; a bad PDL file is one line naming
`file:line:col` (the FileCheck file `tests/filecheck/transforms/apply-pdl.mlir` runs
it through mlx-opt on the built-in pattern's own cases)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import mlxir
from mlxir.tools.mlx_opt import run as mlx_opt

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "pdl" / "remove-identity-casts.mlir"


class Residual(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2).sum(-1)


IDENTITY_CASTS = """func.func @f(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %0 = mlx.astype %x : tensor<?x5xf32> -> tensor<?x5xf32>
  %1 = mlx.astype %0 : tensor<?x5xf32> -> tensor<?x5xf16>
  %2 = mlx.astype %1 : tensor<?x5xf16> -> tensor<?x5xf16>
  %3 = mlx.astype %2 : tensor<?x5xf16> -> tensor<?x5xf32>
  func.return %3 : tensor<?x5xf32>
}
"""


def _lowered(pipeline: str) -> str:
    from xdsl.parser import Parser

    from mlxir.dialects.context import make_context

    module = Parser(make_context(), IDENTITY_CASTS).parse_module()
    mlxir.lower(module, pipeline)
    return str(module)


def test_the_example_does_what_the_built_in_pattern_does_from_python() -> None:
    by_pdl = _lowered(f'apply-pdl{{pdl_file="{EXAMPLE}"}}')
    assert by_pdl == _lowered("remove-identity-casts") != _lowered("cse")
    assert by_pdl.count("mlx.astype") == 2


def test_a_model_lowered_with_the_example_still_computes_it() -> None:
    exported = torch.export.export(Residual(), (torch.randn(3, 5),))
    program = mlxir.compile(exported, pipeline=f'lower-to-mlx,apply-pdl{{pdl_file="{EXAMPLE}"}}')
    x = torch.randn(3, 5)
    assert torch.allclose(torch.tensor(program(x).tolist()), Residual()(x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (None, "apply-pdl: no PDL file '"),
        ("pdl.pattern @p : benefit(1) {\n  %t = pdl.typ\n}\n", "pdl.typ is not registered"),
        ("builtin.module {\n}\n", "has no pdl.pattern with a pdl.rewrite"),
    ],
    ids=["missing", "malformed", "empty"],
)
def test_a_bad_pdl_file_is_one_line(
    rules: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rules.mlir"
    if rules is not None:
        path.write_text(rules)
    source = tmp_path / "f.mlir"
    source.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %x : tensor<4xf32>\n}\n")
    assert mlx_opt([str(source), "-p", f'apply-pdl{{pdl_file="{path}"}}']) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err
    if rules is not None and "pdl.typ" in rules:
        assert f"{path}:3:1 " in err, err  # file:line:col of the problem
