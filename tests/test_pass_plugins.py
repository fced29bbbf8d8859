"""Passes from outside the package (`conversions/plugins.py`): a file written in a
temporary folder, registered through `mlx-opt --load-pass-plugin`, `mlxir compile
--load-pass-plugin ... -p` and `mlxir.load_pass_plugin` + `mlxir.compile(pipeline=)`,
its rewrite visible in the IR and the compiled model still eager PyTorch's; an
installed package's `mlxir.passes` entry point; and each way a plugin can be wrong,
one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

import mlxir
from mlxir.conversions import plugins
from mlxir.conversions.registry import PASSES
from mlxir.tools.mlx_opt import run as mlx_opt

PLUGIN = '''
"""A researcher's pass, outside mlxir: every `mlx.add` gets its operands swapped
(addition commutes, broadcasting included), and the count is kept."""
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlxir.dialects import mlx

SWAPPED: list[int] = []


@dataclass(frozen=True)
class SwapAddOperandsPass(ModulePass):
    """Swaps the two operands of every mlx.add."""

    name = "swap-add-operands"
    only_first: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        count = 0
        for add in [o for o in op.walk() if isinstance(o, mlx.BINARY_OP_CLASSES["add"])]:
            lhs, rhs = add.operands
            add.operands = (rhs, lhs)
            count += 1
            if self.only_first:
                break
        SWAPPED.append(count)
'''

MODULE = """func.func @f(%a: tensor<4xf32>, %b: tensor<1xf32>) -> tensor<4xf32> {
  %0 = mlx.add %a, %b : tensor<4xf32>, tensor<1xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


class Residual(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x)) + x[:, :1]


@pytest.fixture(scope="module")
def plugin_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The plugin, written once; its passes leave the registry after this module."""
    path = tmp_path_factory.mktemp("plugin") / "swap_add.py"
    path.write_text(PLUGIN)
    before = set(PASSES)
    yield path
    for name in set(PASSES) - before:
        del PASSES[name]
        plugins._ORIGINS.pop(name, None)  # pyright: ignore[reportPrivateUsage]


def _swapped(path: Path) -> list[int]:
    module = next(m for name, m in sys.modules.items() if name.startswith("mlxir_pass_plugin_") and m.__file__ == str(path))
    return module.SWAPPED


def test_mlx_opt_runs_a_pass_from_a_file(plugin_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "f.mlir"
    source.write_text(MODULE)
    assert mlx_opt([f"--load-pass-plugin={plugin_file}", str(source), "-p", "swap-add-operands"]) == 0
    assert "mlx.add %b, %a : tensor<1xf32>, tensor<4xf32> -> tensor<4xf32>" in capsys.readouterr().out
    # as a flag, with its option, in MLIR's pipeline grammar, and listed
    assert mlx_opt(["--load-pass-plugin", str(plugin_file), str(source), "--swap-add-operands=only-first=true"]) == 0
    assert "mlx.add %b, %a" in capsys.readouterr().out
    pipeline = "--pass-pipeline=builtin.module(swap-add-operands,swap-add-operands)"
    assert mlx_opt([f"--load-pass-plugin={plugin_file}", str(source), pipeline]) == 0
    assert "mlx.add %a, %b" in capsys.readouterr().out
    assert mlx_opt([f"--load-pass-plugin={plugin_file}", "--list-passes"]) == 0
    assert "swap-add-operands            Swaps the two operands of every mlx.add." in capsys.readouterr().out


def _exported() -> tuple[torch.nn.Module, torch.export.ExportedProgram]:
    torch.manual_seed(0)
    model = Residual().eval()
    batch = torch.export.Dim("batch", min=2)
    return model, torch.export.export(model, (torch.randn(3, 16),), dynamic_shapes=({0: batch},))


def test_mlxir_compile_takes_the_plugin_and_still_computes_the_model(plugin_file: Path) -> None:
    model, exported = _exported()
    mlxir.load_pass_plugin(plugin_file)
    before = len(_swapped(plugin_file))
    program = mlxir.compile(exported, pipeline="lower-to-mlx,swap-add-operands")
    assert _swapped(plugin_file)[before:] and _swapped(plugin_file)[before] >= 1
    x = torch.randn(7, 16)  # not the exported batch
    np.testing.assert_allclose(np.array(program(x).tolist()), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert mlxir.load_pass_plugin(plugin_file) == ["swap-add-operands"]  # again: replaces its own


def test_mlxir_compile_command_takes_the_plugin(
    plugin_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlxir.tools.cli import main_with

    model, exported = _exported()
    pt2 = tmp_path / "residual.pt2"
    torch.export.save(exported, str(pt2))
    out = tmp_path / "residual.mlxfb"
    arguments = ["compile", str(pt2), "-o", str(out), "-p", "lower-to-mlx,swap-add-operands"]
    before = len(_swapped(plugin_file)) if any(n.startswith("mlxir_pass_plugin_") for n in sys.modules) else 0
    assert main_with([*arguments, "--load-pass-plugin", str(plugin_file)]) == 0
    assert len(_swapped(plugin_file)) == before + 1
    capsys.readouterr()
    x = torch.randn(5, 16)
    np.testing.assert_allclose(np.array(mlxir.load(out)(x).tolist()), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert main_with(["compile", str(pt2), "-o", str(out), "--load-pass-plugin", str(tmp_path / "none.py")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.endswith("none.py: no such pass plugin file"), err


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n", "the pass plugin failed to import: SyntaxError: "),
        ("raise RuntimeError('no GPU here')\n", "the pass plugin failed to import: RuntimeError: no GPU here"),
        ("X = 1\n", "defines no ModulePass subclass with a `name`"),
        (
            "from xdsl.passes import ModulePass\nclass Mine(ModulePass):\n    name = 'cse'\n"
            "    def apply(self, ctx, op): pass\n",
            "pass 'cse' is already registered (by mlxir)",
        ),
    ],
    ids=["syntax", "raises", "no-pass", "taken-name"],
)
def test_a_broken_plugin_is_one_line_naming_the_file(
    source: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin = tmp_path / "broken.py"
    plugin.write_text(source)
    module = tmp_path / "f.mlir"
    module.write_text(MODULE)
    assert mlx_opt([f"--load-pass-plugin={plugin}", str(module), "-p", "cse"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert err.startswith(f"mlx-opt: error: {plugin}: ") and message in err, err
    with pytest.raises(mlxir.PluginError, match=re.escape(message)):
        mlxir.load_pass_plugin(plugin)
    assert "cse" in PASSES and PASSES["cse"].factory().__module__.startswith("xdsl.")


ENTRY_POINT_MODULE = '''
from dataclasses import dataclass
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class InstalledPass(ModulePass):
    """A pass an installed package registers."""

    name = "installed-noop"

    def apply(self, ctx, op) -> None:
        pass


class Wrong(InstalledPass):
    name = "cse"
'''


def _installed(tmp_path: Path, entry: str) -> dict[str, str]:
    """A folder holding a distribution whose `mlxir.passes` entry point is `entry`,
    and the environment that puts it on the path."""
    (tmp_path / "installed_passes.py").write_text(textwrap.dedent(ENTRY_POINT_MODULE))
    info = tmp_path / "installed_passes-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: installed-passes\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[mlxir.passes]\n{entry}\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}


def test_an_installed_packages_entry_point_registers_its_pass(tmp_path: Path) -> None:
    env = _installed(tmp_path, "installed-noop = installed_passes:InstalledPass")
    done = subprocess.run(
        [sys.executable, "-c", "from mlxir.tools.mlx_opt import main; main()", "--list-passes"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "installed-noop               A pass an installed package registers." in done.stdout


def test_an_installed_pass_with_a_taken_name_is_one_line(tmp_path: Path) -> None:
    env = _installed(tmp_path, "cse = installed_passes:Wrong")
    done = subprocess.run(
        [sys.executable, "-c", "from mlxir.tools.mlx_opt import main; main()", "--list-passes"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    err = done.stderr.strip()
    assert err.count("\n") == 0, err
    assert "entry point cse = installed_passes:Wrong (mlxir.passes): pass 'cse' is already registered (by mlxir)" in err


DIALECT_PLUGIN = '''
"""A researcher's dialect and the pass that lowers it to mlx."""
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from mlxir.dialects import mlx


@irdl_op_definition
class DoubleOp(IRDLOperation):
    name = "research.double"
    input = operand_def(TensorType[Attribute])
    output = result_def(TensorType[Attribute])
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"


Research = Dialect("research", [DoubleOp])


class LowerDouble(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DoubleOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, mlx.BINARY_OP_CLASSES["add"](op.input, op.input, op.output.type))


@dataclass(frozen=True)
class LowerResearchPass(ModulePass):
    """research.double(x) -> mlx.add(x, x)."""

    name = "lower-research"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LowerDouble()).rewrite_module(op)
'''


def test_a_dialect_plugin_puts_its_ops_beside_mlx_and_its_pass_lowers_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlxir.dialects.context import DIALECTS

    plugin = tmp_path / "research.py"
    plugin.write_text(DIALECT_PLUGIN)
    source = tmp_path / "r.mlir"
    source.write_text(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = research.double %a : tensor<4xf32> -> tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n"
    )
    try:
        assert mlx_opt([str(source), "-p", "cse"]) == 1
        assert "Operation research.double is not registered" in capsys.readouterr().err
        assert mlx_opt([f"--load-dialect-plugin={plugin}", str(source)]) == 0
        assert "research.double %a : tensor<4xf32> -> tensor<4xf32>" in capsys.readouterr().out
        assert mlx_opt([f"--load-dialect-plugin={plugin}", str(source), "-p", "lower-research"]) == 0
        assert "%0 = mlx.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>" in capsys.readouterr().out
    finally:
        DIALECTS.pop("research", None)
        plugins._DIALECT_ORIGINS.pop("research", None)  # pyright: ignore[reportPrivateUsage]
        PASSES.pop("lower-research", None)
        plugins._ORIGINS.pop("lower-research", None)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("X = 1\n", "defines no xDSL Dialect at its top level"),
        ("from xdsl.ir import Dialect\nMine = Dialect('mlx', [])\n", "dialect 'mlx' is already registered (by mlxir)"),
    ],
    ids=["none", "taken-name"],
)
def test_a_broken_dialect_plugin_is_one_line(
    source: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin = tmp_path / "dialects.py"
    plugin.write_text(source)
    module = tmp_path / "f.mlir"
    module.write_text(MODULE)
    assert mlx_opt([f"--load-dialect-plugin={plugin}", str(module)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err == f"mlx-opt: error: {plugin}: {message}", err
