"""Where a program stops matching PyTorch (`mlxir debug`, `mlxir.debug.divergence`).

First divergence (`compare`): every node's compiled value against eager PyTorch's; a
miscompile (here a pass made to break `mlx.add`, registered for the test) shows first
at the node whose lowering holds the broken op, its inputs still agreeing.

Pass bisection (`bisect_passes`, `--bisect`): every pass of the default pipeline keeps
a small model's outputs within tolerance; the broken pass is named first, with the IR
it changed. Both commands exit 1 on a divergence and 0 without."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from llm_models import MODELS, build_model
from small_models import Embed  # noqa: E402
from torch.export import Dim, export
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir.conversions.registry import PASSES, PassEntry
from mlxir.debug.divergence import PassOutcome, bisect_passes, compare, pipeline_passes, write_repro
from mlxir.dialects import mlx
from mlxir.support.locations import nodes_of, result_locations
from mlxir.tools.cli import main_with


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.norm = torch.nn.LayerNorm(8)
        self.up = torch.nn.Linear(8, 16)
        self.down = torch.nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class AddBecomesSubtract(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AddOp, rewriter: PatternRewriter) -> None:
        subtract = mlx.SubtractOp(op.lhs, op.rhs, op.result.type)
        subtract.location = op.location  # as every pattern does: the op's node stays known
        rewriter.replace(op, subtract)


@dataclass(frozen=True)
class BreakAddPass(ModulePass):
    """A miscompile on purpose: every mlx.add becomes mlx.subtract."""

    name = "test-break-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(AddBecomesSubtract()).rewrite_module(op)


@pytest.fixture
def broken_pass(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(PASSES, BreakAddPass.name, PassEntry(lambda: BreakAddPass, "breaks adds"))
    return BreakAddPass.name


def exported() -> torch.export.ExportedProgram:
    x = torch.randn(2, 5, 8)
    return export(Block().eval(), (x,), dynamic_shapes=({1: Dim("seq", min=2, max=64)},))


def test_every_node_matches_eager_pytorch() -> None:
    report = compare(exported(), torch.randn(2, 7, 8))  # not the export-time shape
    assert [c.node for c in report.nodes] == ["layer_norm", "linear", "gelu", "linear_1", "add"]
    assert all(c.within_tolerance and c.cosine > 0.9999 for c in report.nodes), report.table(every_node=True)
    assert report.first_divergence is None
    assert all(c.location.startswith(__file__) for c in report.nodes)


def test_the_first_divergent_node_is_the_one_whose_inputs_agree(broken_pass: str) -> None:
    pipeline = f"convert-aten-to-mlx,canonicalize,{broken_pass},cse,dce"
    report = compare(exported(), torch.randn(2, 7, 8), pipeline=pipeline)
    found = report.first_divergence
    # a linear with a bias lowers to matmul + add when fuse-bias-add does not run
    assert found is not None and found.node == "linear", report.table(every_node=True)
    assert found.inputs == ("layer_norm",) and report.nodes[0].within_tolerance
    assert found.out_of_tolerance > 0.5 and found.max_abs_error > 0.1 and found.cosine < 0.99
    assert found.mlx_op == "mlx.subtract"  # the broken op, in the node's lowering
    assert "first divergence: linear (aten.linear.default, computed by mlx.subtract) at " in report.table()


def test_the_reproducer_is_the_node_alone(broken_pass: str, tmp_path: Path) -> None:
    """The reproducer compiled with the default pipeline gives eager's value: it is the
    node, its inputs and its expected value (compiled with the broken pipeline, it
    diverges as the whole program did, in the command's test)."""
    import mlxir

    report = compare(exported(), torch.randn(2, 7, 8), pipeline=f"convert-aten-to-mlx,{broken_pass}")
    files = write_repro(report, str(tmp_path))
    program = mlxir.load(str(tmp_path / "node.mlxfb"))
    *paths, _command = files
    inputs = [np.load(f) for f in paths if "input_" in f]
    assert [i.shape for i in inputs] == [(2, 7, 8), (16, 8), (16,)]  # x, weight, bias
    (got,) = program.call_flat(*inputs)
    np.testing.assert_allclose(np.asarray(got), np.load(tmp_path / "expected.npy"), rtol=1e-4, atol=1e-4)


def test_the_default_pipeline_keeps_the_outputs_pass_by_pass() -> None:
    report = bisect_passes(exported(), torch.randn(2, 7, 8))  # not the export-time shape
    names = [p.name for p in report.passes]
    assert names == pipeline_passes(None)
    assert "fuse-layer-norm" in names and "merge-projections" in names  # optimize-mlx, written out
    assert report.passes[0].name == "convert-aten-to-mlx" and report.passes[0].max_abs_error is not None
    assert all(p.within_tolerance for p in report.passes), report.table()
    assert report.first_divergent is None
    assert "no pass takes the outputs beyond tolerance" in report.table()


def test_a_pass_that_breaks_the_outputs_is_named_with_its_diff(broken_pass: str) -> None:
    pipeline = f"convert-aten-to-mlx,canonicalize,{broken_pass},cse,dce"
    measured: list[PassOutcome] = []
    report = bisect_passes(exported(), torch.randn(2, 9, 8), pipeline=pipeline, on_pass=measured.append)
    assert measured == report.passes  # each handed on as soon as it was measured
    found = report.first_divergent
    assert found is not None and found.name == broken_pass, report.table()
    assert "+" in found.diff and "mlx.subtract" in found.diff and "-" in found.diff
    assert [p.within_tolerance for p in report.passes] == [True, True, False, False, False]


def test_the_command_exits_1_and_prints_the_pass(broken_pass: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "block.pt2"
    torch.export.save(exported(), str(path))
    np.save(tmp_path / "x.npy", torch.randn(2, 6, 8).numpy())
    nodes = ["debug", str(path), "--input", str(tmp_path / "x.npy")]
    assert main_with([*nodes, "--all"]) == 0
    assert "no divergence: 5 node values" in capsys.readouterr().out
    assert main_with([*nodes, "--atol", "0", "--rtol", "0"]) == 1  # float32 roundings, refused
    assert "first divergence: " in capsys.readouterr().out
    repro = tmp_path / "repro"
    broken = f"convert-aten-to-mlx,canonicalize,{broken_pass}"
    overlay = tmp_path / "overlay.json"
    assert main_with([*nodes, "-p", broken, "--repro", str(repro), "--overlay", str(overlay)]) == 1
    out = capsys.readouterr().out
    assert "first divergence: linear (aten.linear.default, computed by mlx.subtract)" in out
    results = json.loads(overlay.read_text())["forward"]["results"]
    assert results["layer_norm"]["value"] < 1e-4 < results["linear"]["value"]  # the first divergence
    command = out.split("run it: mlxir ")[1].split()
    assert main_with(command) == 0  # the reproducer runs, and reproduces the divergence
    got, expected = np.load(repro / "got" / "output_0.npy"), np.load(repro / "expected.npy")
    assert got.shape == expected.shape and not np.allclose(got, expected, atol=1e-2)
    assert "mlx.subtract" in (repro / "node.mlir").read_text()
    common = ["debug", "--bisect", str(path), "--input", str(tmp_path / "x.npy")]
    assert main_with(common) == 0
    assert "no pass takes the outputs beyond tolerance" in capsys.readouterr().out
    assert main_with([*common, "-p", f"convert-aten-to-mlx,{broken_pass}"]) == 1
    out = capsys.readouterr().out
    assert f"first divergent pass: {broken_pass}" in out and "mlx.subtract" in out
    rows = out.splitlines()  # the table, printed row by row as the passes ran
    assert rows[0].startswith("pass ") and rows[1].startswith("convert-aten-to-mlx ") and rows[1].endswith(" ok")
    assert rows[2].startswith(f"{broken_pass} ") and rows[2].endswith("BEYOND TOLERANCE")
    assert main_with([*common, "-p", "no-such-pass"]) == 2  # a usage error, found before the run
    assert "unknown pass 'no-such-pass'" in capsys.readouterr().err
    np.save(tmp_path / "wrong.npy", torch.randn(3, 6, 8).numpy())  # batch 2 was exported
    assert main_with([*common, "--overlay", str(overlay)]) == 2
    assert "--overlay needs per-node errors" in capsys.readouterr().err
    for mode in ([], ["--bisect"]):
        assert main_with(["debug", *mode, str(path), "--input", str(tmp_path / "wrong.npy")]) == 1
        err = capsys.readouterr().err
        assert "eager PyTorch cannot run the exported program on these inputs" in err
        assert "internal error" not in err


def test_a_tensor_of_another_kind_than_the_exports_is_named() -> None:
    """Float token ids for an embedding (eager PyTorch would fail inside aten.embedding
    with a multi-line traceback) are refused naming the input; integers of another
    width run."""
    from mlxir.debug.inputs import check_input_kinds

    ep = export(Embed(), (torch.tensor([[1, 2, 3]]),))
    check_input_kinds(ep, [torch.tensor([[4, 5]], dtype=torch.int32)])
    with pytest.raises(ValueError, match="input 'tokens' is float32, where the program was exported with int64"):
        check_input_kinds(ep, [torch.ones(1, 3)])
    with pytest.raises(ValueError, match="input 'tokens' is bool"):
        check_input_kinds(ep, [torch.ones(1, 3, dtype=torch.bool)])


def test_half_precision_is_compared_at_its_own_tolerance() -> None:
    """A bfloat16 program differs from eager bfloat16 by bf16 roundings (well beyond
    float32's 1e-4) and matches at bfloat16's stated tolerance: neither mode reports a
    divergence."""
    model = Block().to(torch.bfloat16).eval()
    x = torch.randn(2, 5, 8, dtype=torch.bfloat16)
    ep = export(model, (x,), dynamic_shapes=({1: Dim("seq", min=2, max=64)},))
    run = torch.randn(2, 7, 8, dtype=torch.bfloat16)
    report = compare(ep, run)
    assert report.first_divergence is None, report.table(every_node=True)
    assert max(c.max_abs_error for c in report.nodes) > 1e-4  # bf16 roundings do show
    assert bisect_passes(ep, run).first_divergent is None
    # float32's tolerance, asked for: the same roundings are divergences
    assert compare(ep, run, atol=1e-4, rtol=1e-4).first_divergence is not None
    assert bisect_passes(ep, run, atol=1e-4, rtol=1e-4).first_divergent is not None


def test_nodes_decomposed_alone_keep_their_exported_names() -> None:
    """hardswish is decomposed node by node into add, clamp, mul and div: those nodes
    must not take the names of the exported graph's own `mul` and `add`, which the
    comparison looks up in eager PyTorch by name."""

    class Act(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.hardswish(x) * 3 + 1

    ep = export(Act(), (torch.randn(2, 5),))
    assert [n.name for n in ep.graph.nodes if n.op == "call_function"] == ["hardswish", "mul", "add"]
    report = compare(ep, torch.randn(2, 5) * 4)
    assert [c.node for c in report.nodes] == ["hardswish", "mul", "add"]
    assert report.first_divergence is None, report.table(every_node=True)
    assert [c.mlx_op for c in report.nodes][1:] == ["mlx.multiply", "mlx.add"]


def gelu_line() -> int:
    """The source line of Block.forward's expression, where each op's location points."""
    return Block.forward.__code__.co_firstlineno + 1


def test_a_module_from_the_users_own_pipeline_is_compared_by_location(broken_pass: str) -> None:
    """An mlx-level module made by a pipeline of the user's (here with a broken pass),
    given as a ModuleOp: its values are found by each op's loc("node"(...)), with no
    output added before the passes, and the first divergence is the same node as when
    debug compiles with that pipeline itself."""
    import mlxir

    ep = exported()
    module = mlxir.import_program(ep)
    mlxir.lower(module, f"convert-aten-to-mlx,canonicalize,{broken_pass},cse,dce")
    report = compare(ep, torch.randn(2, 7, 8), module=module)
    found = report.first_divergence
    assert found is not None and found.node == "linear" and found.mlx_op == "mlx.subtract"
    assert found.location.startswith(f"{__file__}:{gelu_line()}")
    assert report.nodes[0].node == "layer_norm" and report.nodes[0].within_tolerance
    clean = mlxir.import_program(ep)
    mlxir.lower(clean)
    report = compare(ep, torch.randn(2, 3, 8), module=clean)
    assert [c.node for c in report.nodes] == ["layer_norm", "linear", "gelu", "linear_1", "add"]
    assert report.first_divergence is None, report.table(every_node=True)


def test_a_hand_edited_module_is_debugged_from_its_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mlxir compile --emit mlx --elide-weights` prints the module with each op's
    location and no weight values; an edit to one op's constant (gelu's 1/sqrt(2)) is
    found by `mlxir debug --module`: the node, the mlx op, the source line, exit 1.
    The unedited text reports no divergence; the weights come from the .pt2."""
    path = tmp_path / "block.pt2"
    torch.export.save(exported(), str(path))
    np.save(tmp_path / "x.npy", torch.randn(2, 6, 8).numpy())
    text_path = tmp_path / "block.mlir"
    assert main_with(["compile", str(path), "--emit", "mlx", "--elide-weights", "-o", str(text_path)]) == 0
    text = text_path.read_text()
    assert 'mlx.global @up.weight "parameter" : tensor<16x8xf32> loc(unknown)' in text  # no value
    assert f'loc("gelu"("{__file__}":{gelu_line()}:0))' in text
    debug = ["debug", str(path), "--input", str(tmp_path / "x.npy"), "--module"]
    assert main_with([*debug, str(text_path)]) == 0
    assert "no divergence: 5 node values" in capsys.readouterr().out
    edited = tmp_path / "edited.mlir"
    edited.write_text(text.replace("dense<0.707106769>", "dense<0.5>"))
    assert edited.read_text() != text
    assert main_with([*debug, str(edited), "--all"]) == 1
    out = capsys.readouterr().out
    assert f"first divergence: gelu (aten.gelu.default, computed by mlx.multiply) at {__file__}:{gelu_line()}" in out
    rows = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert "ok" in rows["linear"] and "DIVERGES" in rows["gelu"] and "DIVERGES" in rows["add"]
    repro = tmp_path / "repro"
    assert main_with([*debug, str(edited), "--repro", str(repro)]) == 1
    command = capsys.readouterr().out.split("run it: mlxir ")[1].split()
    assert main_with(command) == 0  # gelu's ops from the module, on linear's value in the run
    got, expected = np.load(repro / "got" / "output_0.npy"), np.load(repro / "expected.npy")
    assert got.shape == expected.shape == (2, 6, 16) and not np.allclose(got, expected, atol=1e-2)
    cut = (repro / "node.mlir").read_text()
    assert "0.707106769" not in cut and "mlx.erf" in cut  # the edited ops
    assert '"linear' not in cut and '"layer_norm"' not in cut and "mlx.global" not in cut  # gelu's alone
    assert [p.name for p in repro.glob("input_*.npy")] == ["input_0.npy"]


def test_a_bfloat16_module_reproducer_takes_float32_files(broken_pass: str, tmp_path: Path) -> None:
    """NumPy has no bfloat16: the module reproducer's inputs are float32 files, cast
    back first thing, and it reproduces the divergence of the broken module."""
    import mlx.core as mx

    import mlxir

    model = Block().to(torch.bfloat16).eval()
    x = torch.randn(2, 5, 8, dtype=torch.bfloat16)
    ep = export(model, (x,), dynamic_shapes=({1: Dim("seq", min=2, max=64)},))
    module = mlxir.import_program(ep)
    mlxir.lower(module, f"convert-aten-to-mlx,canonicalize,{broken_pass}")
    report = compare(ep, torch.randn(2, 7, 8, dtype=torch.bfloat16), module=module)
    found = report.first_divergence
    assert found is not None and found.node == "linear", report.table(every_node=True)
    *files, _command = write_repro(report, str(tmp_path))
    (got,) = mlxir.load(str(tmp_path / "node.mlxfb")).call_flat(np.load(tmp_path / "input_0.npy"))
    got_array = np.asarray(mx.array(got).astype(mx.float32))
    expected = np.load(tmp_path / "expected.npy")
    assert np.load(tmp_path / "input_0.npy").dtype == np.float32
    assert got_array.shape == expected.shape and not np.allclose(got_array, expected, atol=0.1)


def test_a_module_debug_cannot_map_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import mlxir

    ep = exported()
    path = tmp_path / "block.pt2"
    torch.export.save(ep, str(path))
    np.save(tmp_path / "x.npy", torch.randn(2, 6, 8).numpy())
    module = mlxir.import_program(ep)
    mlxir.lower(module)
    cases = {
        "plain.mlir": (str(module), "no op of the module names a node of the exported program"),
        "renamed.mlir": (
            "",
            "globals without a value that the .pt2 cannot give: @up.weights : tensor<16x8xf32> "
            "(the .pt2 compiles to no such global)",
        ),
        "broken.mlir": ("builtin.module {\n  %0 = mlx.nonsense\n}\n", "Operation mlx.nonsense is not registered"),
    }
    emitted = tmp_path / "emitted.mlir"
    assert main_with(["compile", str(path), "--emit", "mlx", "--elide-weights", "-o", str(emitted)]) == 0
    cases["renamed.mlir"] = (emitted.read_text().replace("@up.weight ", "@up.weights "), cases["renamed.mlir"][1])
    assert main_with(["compile", str(path), "--emit", "aten", "-o", str(tmp_path / "aten.mlir")]) == 0
    cases["aten.mlir"] = ((tmp_path / "aten.mlir").read_text(), "the module holds aten ops")
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text)
        command = ["debug", str(path), "--input", str(tmp_path / "x.npy"), "--module", str(tmp_path / name)]
        assert main_with(command) == 1, name
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, (name, err)
        assert name != "broken.mlir" or f"{tmp_path / name}:" in err  # file:line:col
    assert main_with(["debug", "--bisect", str(path), "--input", str(tmp_path / "x.npy"), "--module", str(emitted)]) == 2  # a usage error
    assert "--bisect runs the pipeline's passes, so it takes no --module" in capsys.readouterr().err


@pytest.mark.parametrize("family", MODELS)
def test_every_llm_familys_fused_module_keeps_its_provenance(family: str) -> None:
    """After the default pipeline's fusions (merged projections, split heads, rope,
    norms), every mlx op still names the nodes it computes, and the values found by
    location in the unedited module match eager PyTorch: no false divergence."""
    import mlxir

    model = build_model(family)

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=ids, use_cache=False).logits

    ids = torch.randint(0, 256, (1, 6))
    ep = export(Logits(), (ids,), dynamic_shapes=({1: Dim("seq", min=2, max=64)},))
    module = mlxir.import_program(ep)
    mlxir.lower(module)
    unnamed = [
        op.name
        for op in module.walk()
        if op.name.startswith("mlx.") and op.name != "mlx.global"
        and not all(nodes_of(loc) for loc in result_locations(op))
    ]
    assert not unnamed, unnamed
    report = compare(ep, torch.randint(0, 256, (1, 9)), module=module)  # not the export-time length
    assert report.first_divergence is None, report.table(every_node=True)
    assert len(report.nodes) >= 40 and {"mlx.rms_norm", "mlx.layer_norm"} & {c.mlx_op for c in report.nodes}


def test_a_module_that_writes_its_input_is_compared_node_by_node() -> None:
    """The input's new value is an output after the observations: both modes find
    the node values, not the written-back one, nothing diverges, and the user's
    tensor is not written by the comparison. (`mul_` itself is not compared: torch's
    whole-program re-trace, which functionalizes it, names its node `mul`.)"""
    import mlxir

    class Writes(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x.mul_(2)
            return torch.relu(x) + 1

    ep = export(Writes(), (torch.randn(4, 3),))
    x = torch.randn(4, 3)
    before = x.clone()
    report = compare(ep, x)
    assert [c.node for c in report.nodes] == ["relu", "add"], report.table(every_node=True)
    assert report.first_divergence is None and torch.equal(x, before)
    module = mlxir.import_program(ep)
    mlxir.lower(module)
    by_location = compare(ep, x, module=module)
    assert [c.node for c in by_location.nodes] == ["relu", "add"]
    assert by_location.first_divergence is None and torch.equal(x, before)
