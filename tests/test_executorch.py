"""ExecuTorch interop end to end (`mlxir.interop.executorch`), against eager PyTorch.

- Edge input: `mlxir.compile` of an `EdgeProgramManager`'s program (Edge op overloads,
  dim-order ops), on the models of the ATen path (`test_models`: MLP, CNN, transformer
  block with a bool attention mask).
- Backend: `to_edge_transform_and_lower(ep, partitioner=[MlxirPartitioner()])
  .to_executorch()` writes a `.pte` whose method is one mlxir delegate call;
  `mlxir.load` runs it. The models: the same three, and a tiny transformers Llama with
  a static KV cache (the cache is the delegate's state, carried across calls).
- Partial support: a model with an op mlxir cannot compile gets partitions around it,
  the partitioner names the op with the importer's reason, and `mlxir.load` refuses the
  `.pte` naming the kernel left outside the delegates.

Every run uses shapes the export never saw (a dynamic batch or sequence length). Tolerances
against eager PyTorch: float32 1e-4 relative + 1e-5 absolute; float16 1e-2 + 1e-2;
bfloat16 4e-2 + 4e-2 (a few ulps at the outputs' scale after reductions of 8-256 terms).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_models import CNN, MLP, Block
from torch import nn
from torch.export import Dim, export

import mlxir
from mlxir.codegen import ProgramError
from mlxir.interop.executorch import BACKEND_ID, MlxirPartitioner, PteProgram

# The `executorch` extra: `make venv` (and so CI) installs it.
import executorch.exir as executorch_exir  # isort: skip  (after mlxir.interop, which quiets its import)

TOLERANCES = {
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (4e-2, 4e-2),
}


class WithCdist(nn.Module):
    """An MLP with `torch.cdist` in the middle (core ATen `_cdist_forward`), which mlxir
    compiles only through its own decomposition, which the partitioner does not count."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 4)
        self.centers = nn.Parameter(torch.randn(5, 4))
        self.fc2 = nn.Linear(5, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.cdist(torch.tanh(self.fc1(x)), self.centers))


def _mlp_case(dtype: torch.dtype) -> tuple[nn.Module, Any, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = MLP().to(dtype).eval()
    ep = export(model, (torch.randn(4, 8, dtype=dtype),), dynamic_shapes=({0: Dim("batch", max=64)},))
    return model, ep, (torch.randn(9, 8, dtype=dtype),)


def _cnn_case(dtype: torch.dtype) -> tuple[nn.Module, Any, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = CNN().eval()
    for bn in (model.bn1, model.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    model = model.to(dtype)
    ep = export(model, (torch.randn(2, 3, 16, 16, dtype=dtype),), dynamic_shapes=({0: Dim("batch", max=8)},))
    return model, ep, (torch.randn(5, 3, 16, 16, dtype=dtype),)


def _block_case(dtype: torch.dtype) -> tuple[nn.Module, Any, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = Block().to(dtype).eval()
    seq = Dim("seq", min=2, max=64)
    x, mask = torch.randn(2, 6, 32, dtype=dtype), torch.ones(2, 6, 6, dtype=torch.bool).tril()
    ep = export(model, (x, mask), dynamic_shapes={"x": {1: seq}, "mask": {1: seq, 2: seq}})
    return model, ep, (torch.randn(2, 11, 32, dtype=dtype), torch.ones(2, 11, 11, dtype=torch.bool).tril())


CASES = {"mlp": _mlp_case, "cnn": _cnn_case, "block": _block_case}


def _close(got: Any, expected: torch.Tensor) -> None:
    got_t = torch.from_numpy(np.asarray(got, dtype=np.float32)) if not isinstance(got, torch.Tensor) else got
    rtol, atol = TOLERANCES[expected.dtype]
    assert got_t.shape == expected.shape
    torch.testing.assert_close(got_t.float(), expected.float(), rtol=rtol, atol=atol)


def _to_pte(ep: Any, tmp_path: Path, partitioner: Any = None, name: str = "model") -> Path:
    lowered = executorch_exir.to_edge_transform_and_lower(ep, partitioner=[partitioner or MlxirPartitioner()])
    path = tmp_path / f"{name}.pte"
    path.write_bytes(lowered.to_executorch().buffer)
    return path


def _method_instructions(path: Path) -> list[Any]:
    from executorch.exir._serialize._program import deserialize_pte_binary

    plan = deserialize_pte_binary(path.read_bytes()).program.execution_plan[0]
    return [i.instr_args for i in plan.chains[0].instructions]


# ---------------------------------------------------------------------------
# Edge programs in
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", list(TOLERANCES), ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_edge_program_compiles_like_the_aten_one(name: str, dtype: torch.dtype) -> None:
    model, ep, inputs = CASES[name](dtype)
    edge = executorch_exir.to_edge(ep).exported_program()
    targets = {type(n.target).__name__ for n in edge.graph.nodes if n.op == "call_function"}
    assert "EdgeOpOverload" in targets
    with torch.no_grad():
        expected = model(*inputs)
    _close(mlxir.compile(edge)(*inputs), expected)


def test_dim_order_ops_import_as_copies() -> None:
    class Casts(nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return x.to(torch.float16).clone(), x.contiguous(memory_format=torch.channels_last) * 2

    ep = export(Casts(), (torch.randn(2, 3, 4, 5),), dynamic_shapes=({0: Dim("b", max=16)},))
    edge = executorch_exir.to_edge(ep).exported_program()
    names = {str(n.target) for n in edge.graph.nodes if n.op == "call_function"}
    assert any("_to_dim_order_copy" in t for t in names) and any("_clone_dim_order" in t for t in names)
    module = mlxir.import_program(edge, decompose=False)
    text = str(module)
    assert "aten._to_copy" in text and "aten.clone" in text
    x = torch.randn(5, 3, 4, 5)
    half, doubled = mlxir.compile(edge)(x)
    assert half.dtype == torch.float16
    _close(half, x.to(torch.float16))
    _close(doubled, x * 2)


# ---------------------------------------------------------------------------
# .pte files out, run by mlxir
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_pte_with_one_mlxir_delegate_runs(name: str, dtype: torch.dtype, tmp_path: Path) -> None:
    from executorch.exir.schema import DelegateCall

    model, ep, inputs = CASES[name](dtype)
    partitioner = MlxirPartitioner()
    path = _to_pte(ep, tmp_path, partitioner)
    assert partitioner.unsupported == {}
    instructions = _method_instructions(path)
    assert [type(i) for i in instructions] == [DelegateCall]
    program = mlxir.load(path)
    assert isinstance(program, PteProgram)
    assert [d.backend for d in program.delegates] == [BACKEND_ID]
    with torch.no_grad():
        expected = model(*inputs)
    _close(program(*inputs), expected)
    with pytest.raises(mlxir.InputError):
        program(torch.randn(2, 2, dtype=dtype))


def _decode_matches_reference(program: Any, reference: Any) -> None:
    """Six tokens, one per call at increasing cache positions: each step's logits depend
    on the cache the earlier steps wrote."""
    for position, token in enumerate([5, 17, 3, 99, 42, 7]):
        ids, cache_position = torch.tensor([[token]]), torch.tensor([position])
        with torch.no_grad():
            expected = reference(input_ids=ids, cache_position=cache_position)
        _close(program(ids, cache_position), expected)


@pytest.mark.parametrize("route", ["pte", "edge"])
def test_llama_with_static_cache_state(route: str, tmp_path: Path) -> None:
    """A transformers Llama with a static KV cache, one token per call; the cache is
    program state (in the `.pte`, owned by the delegate). Reference: the exported
    program run by PyTorch (`ep.module()`), whose buffers carry the same cache."""
    from mlxir.tools.demo_model import build_llama
    from mlxir.tools.llm import export_static_llm

    model = build_llama(seed=1)
    ep = export_static_llm(model, max_cache_len=16)
    reference = ep.module()  # before lowering, which takes the program's buffers
    if route == "edge":
        _decode_matches_reference(mlxir.compile(executorch_exir.to_edge(ep).exported_program()), reference)
        return
    partitioner = MlxirPartitioner()
    program = mlxir.load(_to_pte(ep, tmp_path, partitioner))
    assert partitioner.unsupported == {}
    assert isinstance(program, PteProgram)
    assert len(program.delegates) == 1 and program.programs[0].state
    _decode_matches_reference(program, reference)
    program.reset_state()
    _decode_matches_reference(program, export_static_llm(model, max_cache_len=16).module())


def test_dynamic_cache_llm_goes_through_to_edge_and_runs_from_a_pte(tmp_path: Path) -> None:
    """`export_llm`'s one program for prefill and decode (dynamic batch, prompt and past
    lengths, the cache as inputs and outputs) goes through `to_edge` and the
    partitioner as one delegate, and the `.pte` keeps the exported ranges (batch 1,
    past 0). Reference: transformers with a `DynamicCache`, on a left-padded batch of
    2: a prefill at past 0, then three decode steps each fed the cache the `.pte`
    returned; last-position logits in f32 (1e-4/1e-5)."""
    from transformers import DynamicCache

    from mlxir.tools.demo_model import build_llama
    from mlxir.tools.llm import export_llm

    model = build_llama(seed=2)
    exported = export_llm(model, logits="last", max_seq=64, max_past=64, cache="growing")
    assert not [n for n in exported.ep.graph.nodes if n.target in (torch.sym_min, torch.sym_max)]
    partitioner = MlxirPartitioner()
    program = mlxir.load(_to_pte(exported.ep, tmp_path, partitioner, "llm"))
    assert isinstance(program, PteProgram) and len(program.delegates) == 1
    assert partitioner.unsupported == {}

    for batch, length in ((2, 6), (1, 1)):
        ids = torch.randint(3, 512, (batch, length), generator=torch.Generator().manual_seed(length))
        mask = torch.ones(batch, length, dtype=torch.long)
        mask[1:, :2] = 0  # the second row is left-padded
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
        cache = DynamicCache()
        kv: list[Any] = exported.layout.empty(batch, 0)
        for step in range(4):
            with torch.no_grad():
                expected = model(
                    input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache, use_cache=True
                ).logits[:, -1:]
            # the step program's per-row start: the new tokens' first index minus the pads
            offsets = mask.shape[1] - ids.shape[1] - (mask == 0).sum(-1)
            logits, *kv = program(ids, mask, offsets, *kv)
            _close(logits, expected)
            ids = expected.argmax(-1)
            mask = torch.cat([mask, torch.ones(batch, 1, dtype=torch.long)], dim=1)
            positions = positions[:, -1:] + 1
            del step


class SplittingPartitioner(MlxirPartitioner):
    """MlxirPartitioner, then the second half of its one partition retagged: a method
    of two mlxir delegates, the second reading the first's outputs."""

    def partition(self, exported_program: Any) -> Any:
        from executorch.exir.backend.utils import tag_constant_data

        result = super().partition(exported_program)
        nodes = [n for n in exported_program.graph.nodes if n.op == "call_function"]
        assert {n.meta.get("delegation_tag") for n in nodes} == {"mlxir_0"}
        for node in nodes[len(nodes) // 2 :]:
            node.meta["delegation_tag"] = "mlxir_1"
        for node in exported_program.graph.nodes:
            if node.op == "placeholder":
                node.meta.pop("delegation_tag", None)
        tag_constant_data(exported_program)
        result.partition_tags["mlxir_1"] = self.delegation_spec
        return result


def test_pte_with_two_chained_delegates_runs(tmp_path: Path) -> None:
    from executorch.exir.schema import DelegateCall

    model, ep, inputs = _mlp_case(torch.float32)
    path = _to_pte(ep, tmp_path, SplittingPartitioner())
    assert [type(i) for i in _method_instructions(path)] == [DelegateCall, DelegateCall]
    program = mlxir.load(path)
    assert isinstance(program, PteProgram) and len(program.delegates) == 2
    with torch.no_grad():
        expected = model(*inputs)
    _close(program(*inputs), expected)


def test_pipeline_compile_spec_reaches_the_backend(tmp_path: Path) -> None:
    _, ep, inputs = _mlp_case(torch.float32)
    unoptimized = mlxir.load(_to_pte(ep, tmp_path, MlxirPartitioner(pipeline="convert-aten-to-mlx"), "plain"))
    optimized = mlxir.load(_to_pte(ep, tmp_path, MlxirPartitioner(), "optimized"))
    count = len(unoptimized.programs[0].info.instructions)
    assert count > len(optimized.programs[0].info.instructions)
    _close(unoptimized(*inputs), optimized(*inputs))


# ---------------------------------------------------------------------------
# What mlxir cannot compile stays outside, named
# ---------------------------------------------------------------------------


def test_unsupported_op_splits_the_partition_and_the_pte_is_refused(tmp_path: Path) -> None:
    from executorch.exir.schema import DelegateCall, KernelCall

    torch.manual_seed(0)
    ep = export(WithCdist().eval(), (torch.randn(4, 6),), dynamic_shapes=({0: Dim("batch", max=16)},))
    partitioner = MlxirPartitioner()
    path = _to_pte(ep, tmp_path, partitioner)
    left_out = {str(n.target._op) for n in partitioner.unsupported}  # type: ignore[union-attr]
    assert left_out == {"aten._cdist_forward.default"}
    # The partitioner judges each node by the importer and torch's decompositions;
    # mlxir's own decompositions, which compile cdist (after torch's re-trace too), are
    # not counted by it, so only cdist stays outside the delegates.
    module = mlxir.import_program(ep, decompose="program")
    assert "aten.cdist" not in str(module) and "_cdist_forward" not in str(module)
    kinds = [type(i) for i in _method_instructions(path)]
    assert kinds.count(DelegateCall) == 2 and KernelCall in kinds
    with pytest.raises(ProgramError, match=r"aten::_cdist_forward.out: 1 call\(s\) outside any delegate"):
        mlxir.load(path)


def test_pte_of_another_backend_is_refused_and_inspected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    from mlxir.tools.cli import main_with

    _, ep, _ = _mlp_case(torch.float32)
    path = _to_pte(ep, tmp_path, XnnpackPartitioner())
    with pytest.raises(ProgramError, match="a call to a XnnpackBackend delegate"):
        mlxir.load(path)
    assert main_with(["inspect", str(path)]) == 0
    assert "delegate 0: XnnpackBackend" in capsys.readouterr().out
    assert main_with(["run", str(path)]) == 1
    assert "XnnpackBackend" in capsys.readouterr().err


def test_inspect_lists_delegates_and_describes_payloads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mlxir.tools.cli import main_with

    _, ep, _ = _mlp_case(torch.float32)
    path = _to_pte(ep, tmp_path)
    assert main_with(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "method 'forward': 1 delegate(s)" in out
    assert f"delegate 0: {BACKEND_ID}" in out
    assert "mlx.addmm" in out and "dynamic dims:" in out  # biased linears


def test_load_picks_the_method_by_name(tmp_path: Path) -> None:
    model, ep, inputs = _mlp_case(torch.float32)
    path = _to_pte(ep, tmp_path)
    with torch.no_grad():
        _close(mlxir.load(path, method="forward")(*inputs), model(*inputs))
    with pytest.raises(ProgramError, match="has no method 'decode' \\(it has: forward\\)"):
        mlxir.load(path, method="decode")


def test_corrupt_pte_raises_program_error(tmp_path: Path) -> None:
    _, ep, inputs = _mlp_case(torch.float32)
    data = _to_pte(ep, tmp_path).read_bytes()
    with pytest.raises(ProgramError):
        mlxir.load(data[: len(data) // 3])
    with pytest.raises(ProgramError):
        mlxir.load(data[:8] + b"\xff" * 64)
    rng = np.random.default_rng(0)
    for _ in range(6):
        corrupt = bytearray(data)
        for position in rng.integers(8, len(data), size=8):
            corrupt[position] ^= 0xFF
        try:
            program = mlxir.load(bytes(corrupt))
        except ProgramError:
            continue
        try:
            program(*inputs)
        except (mlxir.InputError, RuntimeError, ProgramError):
            pass
