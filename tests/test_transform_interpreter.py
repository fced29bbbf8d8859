"""`transform-interpreter` (`conversions/transform_interpreter.py`): a script's pass
with options reaches the ops it matched, a model compiled through a script still
computes eager PyTorch's outputs, and every refusal is one line (the FileCheck file
`tests/filecheck/transforms/transform-interpreter.mlir` runs docs/transform/'s example)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import mlxir
from mlxir.tools.mlx_opt import run as mlx_opt

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "transform" / "canonicalize-decode.mlir"

SCRIPT = """builtin.module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op) {{
{body}
    transform.yield
  }}
}}
"""

QUANTIZED = """func.func @f(%x: tensor<?x128xf32>, %w: tensor<64x16xui32>, %s: tensor<64x2xf32>, %b: tensor<64x2xf32>) -> tensor<?x64xf32> {
  %y = mlx.quantized_matmul %x, %w, %s, %b group_size 64 bits 4 mode "affine" transpose : tensor<?x128xf32>, tensor<64x16xui32>, tensor<64x2xf32>, tensor<64x2xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}
"""


def _run(tmp_path: Path, body: str, source: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    script = tmp_path / "script.mlir"
    script.write_text(SCRIPT.format(body=body))
    module = tmp_path / "in.mlir"
    module.write_text(source)
    status = mlx_opt([str(module), "-p", f'transform-interpreter{{transform_file="{script}"}}'])
    captured = capsys.readouterr()
    return status, captured.out, captured.err.strip()


def test_a_pass_with_options_reaches_the_matched_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = (
        '    %m = transform.apply_registered_pass "cpu-int8-activations" with options = {bits = 16 : i64} '
        "to %root : (!transform.any_op) -> !transform.any_op"
    )
    status, out, err = _run(tmp_path, body, QUANTIZED, capsys)
    assert status == 0, err
    assert 'mode "affine" transpose activation_bits 16 :' in out


def test_a_model_compiled_through_a_script_still_computes_it() -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.softmax(x.transpose(0, 1).transpose(0, 1) * 3, dim=-1)

    batch = torch.export.Dim("batch", min=2)
    exported = torch.export.export(Model(), (torch.randn(3, 8),), dynamic_shapes=({0: batch},))
    program = mlxir.compile(exported, pipeline=f'lower-to-mlx,transform-interpreter{{transform_file="{EXAMPLE}"}}')
    x = torch.randn(5, 8)
    assert torch.allclose(torch.tensor(program(x).tolist()), Model()(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '    %adds = transform.structured.match ops{["mlx.add"]} in %root : (!transform.any_op) -> !transform.any_op\n'
            '    %d = transform.apply_registered_pass "cse" to %adds : (!transform.any_op) -> !transform.any_op',
            "transform.apply_registered_pass: 'cse' on a mlx.add: mlxir applies passes to builtin.module and func.func handles only",
        ),
        (
            '    %d = transform.apply_registered_pass "no-such-pass" to %root : (!transform.any_op) -> !transform.any_op',
            "no-such-pass",
        ),
    ],
    ids=["pass-on-an-op", "unknown-pass"],
)
def test_refusals_are_one_line(body: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = mlx.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>\n  func.return %0 : tensor<4xf32>\n}\n"
    status, _, err = _run(tmp_path, body, source, capsys)
    assert status == 1 and err.count("\n") == 0 and message in err, err


def test_a_missing_script_or_entry_point_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "in.mlir"
    module.write_text("func.func @f() {\n  func.return\n}\n")
    assert mlx_opt([str(module), "-p", f'transform-interpreter{{transform_file="{tmp_path / "none.mlir"}"}}']) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no transform script" in err, err
    assert mlx_opt([str(module), "-p", f'transform-interpreter{{transform_file="{EXAMPLE}" entry_point="main"}}']) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "has no transform.named_sequence @main" in err, err
