"""One program over 2 ranks (docs/distributed.md): `shard-tensor-parallel`, globals
split over ranks, mlxir's launcher and `mlxir generate --tensor-parallel`.

Every multi-rank test starts 2 ranks on 127.0.0.1 with mlxir's launcher (ring
backend), under a timeout, and every rank exits by itself. The reference is the same
model compiled unsplit and run in this process: greedy tokens must be equal and the
logits within 1e-4 (f32; the split reorders only the sums of the row products)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import mlxir
from mlxir.tools import llm
from mlxir.tools.launch import TIMED_OUT, launch, mpi_available

sys.path.insert(0, str(Path(__file__).parent))
from distributed_rank import NEW_TOKENS, PROMPT  # noqa: E402
from llm_models import MODELS, build_model  # noqa: E402

# Its tests share compiled programs (module fixtures, caches): one worker compiles them once.
pytestmark = pytest.mark.xdist_group("test_distributed")

RANK_SCRIPT = str(Path(__file__).parent / "distributed_rank.py")
LOGIT_TOLERANCE = 1e-4
TIMEOUT_S = 180


def _moe_model() -> Any:
    import transformers

    config = transformers.Qwen3MoeConfig(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        moe_intermediate_size=32,
        num_experts=4,
        num_experts_per_tok=2,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=256,
        pad_token_id=0,
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    return transformers.Qwen3MoeForCausalLM(config).eval()


def _model(family: str) -> Any:
    return _moe_model() if family == "qwen3_moe" else build_model(family)


def _reference(exported: llm.ExportedLLM) -> tuple[np.ndarray, np.ndarray]:
    one = llm.compile_llm(exported)
    logits: list[Any] = []
    tokens = llm.generate(one, PROMPT, max_new_tokens=NEW_TOKENS, logits=logits)
    return np.array(tokens), np.stack([np.array(x) for x in logits])


def _split_program(exported: llm.ExportedLLM, path: Path, **options: Any) -> Path:
    parts, _ = mlxir.compiled_parts(exported.ep, tensor_parallel=2, **options)
    path.write_bytes(bytes(parts))
    return path


def _check_weight_bytes(path: Path) -> None:
    """Each rank reads the replicated weights and 1/2 of the split ones: nothing more."""
    from mlxir.codegen.reader import read_program

    info = read_program(path.read_bytes())
    names = {g.name for g in info.globals}
    assert not {g.name.removesuffix(".ranks2") for g in info.globals if g.name.endswith(".ranks2")} & names  # no whole copy left
    replicated = sum(g.length for g in info.globals if g.ranks == 1)
    split = sum(g.length for g in info.globals if g.ranks == 2)
    assert split > 0 and info.ranks == 2
    for rank in (0, 1):
        assert sum(g.length for g in info.for_rank(rank).globals) == replicated + split // 2


@pytest.mark.parametrize("family", [*MODELS, "qwen3_moe"])
def test_two_ranks_generate_what_one_does(family: str, tmp_path: Path) -> None:
    exported = llm.export_llm(_model(family), attention_mask=False)
    tokens, logits = _reference(exported)
    program = _split_program(exported, tmp_path / "split.mlxfb")
    out = tmp_path / "out.npz"
    assert launch([sys.executable, RANK_SCRIPT, "generate", str(program), str(out)], 2, timeout=TIMEOUT_S) == 0
    got = np.load(out)
    np.testing.assert_array_equal(got["tokens"], tokens)
    assert np.abs(got["logits"] - logits).max() <= LOGIT_TOLERANCE
    _check_weight_bytes(program)


def test_quantized_weights_split_along_their_groups(tmp_path: Path) -> None:
    exported = llm.export_llm(_model("llama"), attention_mask=False)
    scheme = mlxir.Quantize(bits=4, group_size=32)
    one = llm.CompiledLLM.from_program(mlxir.compile(exported.ep, quantize=scheme))
    logits: list[Any] = []
    tokens = np.array(llm.generate(one, PROMPT, max_new_tokens=NEW_TOKENS, logits=logits))
    program = _split_program(exported, tmp_path / "split.mlxfb", quantize=scheme)
    text = mlxir.deserialize(program.read_bytes())
    split = [op for op in text.walk() if op.name == "mlx.global" and "ranks" in op.properties]
    assert any(str(op.properties["type"]).endswith("xui32>") for op in split)  # packed 4-bit weights
    out = tmp_path / "out.npz"
    assert launch([sys.executable, RANK_SCRIPT, "generate", str(program), str(out)], 2, timeout=TIMEOUT_S) == 0
    got = np.load(out)
    np.testing.assert_array_equal(got["tokens"], tokens)
    assert np.abs(got["logits"] - np.stack([np.array(x) for x in logits])).max() <= LOGIT_TOLERANCE


def test_a_split_program_refuses_one_process(tmp_path: Path) -> None:
    exported = llm.export_llm(_model("llama"), attention_mask=False)
    program = _split_program(exported, tmp_path / "split.mlxfb")
    with pytest.raises(mlxir.ProgramError, match="split over 2 ranks .* runs in a group of 1"):
        mlxir.load(program)


def test_a_rank_killed_mid_run_fails_the_launch(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    exported = llm.export_llm(_model("llama"), attention_mask=False)
    program = _split_program(exported, tmp_path / "split.mlxfb")
    start = time.monotonic()
    command = [sys.executable, RANK_SCRIPT, "generate", str(program), str(tmp_path / "out.npz"), "--die-after", "4"]
    status = launch(command, 2, timeout=TIMEOUT_S)
    assert status != 0 and time.monotonic() - start < TIMEOUT_S
    message = capfd.readouterr().err.strip().splitlines()[-1]
    assert message == "mlxir launch: rank 1 was killed by SIGKILL"
    assert not (tmp_path / "out.npz").exists()


def test_a_hung_rank_is_ended_at_the_timeout(capfd: pytest.CaptureFixture[str]) -> None:
    start = time.monotonic()
    assert launch([sys.executable, RANK_SCRIPT, "hang"], 2, timeout=15) == TIMED_OUT
    assert time.monotonic() - start < 15 + 10  # the timeout, then the grace period
    assert capfd.readouterr().err.strip().splitlines()[-1] == "mlxir launch: rank 1 still running after 15 s: ended"


def test_the_ring_backend_is_the_default_and_mpi_runs_where_installed(tmp_path: Path) -> None:
    out = tmp_path / "collectives.npz"
    command = [sys.executable, RANK_SCRIPT, "collectives", str(out)]
    assert launch(command, 2, timeout=TIMEOUT_S) == 0  # ring, with no mpirun needed
    if not mpi_available():
        with pytest.raises(FileNotFoundError, match="needs mpirun"):
            launch(command, 2, timeout=TIMEOUT_S, backend="mpi")
        return
    ring = dict(np.load(out))
    out.unlink()
    assert launch(command, 2, timeout=TIMEOUT_S, backend="mpi") == 0
    mpi = np.load(out)
    for name, value in ring.items():
        np.testing.assert_array_equal(mpi[name], value)


@pytest.fixture(scope="module")
def hf_folder_with_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_generate import save_tiny_llama

    folder = tmp_path_factory.mktemp("tiny-llama-ranks")
    save_tiny_llama(folder)
    return folder


def test_generate_tensor_parallel(tmp_path: Path, hf_folder_with_tokenizer: Path) -> None:
    """`mlxir generate --tensor-parallel 2` prints what one rank prints."""
    mlxir_command = str(Path(sys.executable).parent / "mlxir")
    base = [mlxir_command, "generate", "--model", str(hf_folder_with_tokenizer), "-p", "hello", "--max-tokens", "12", "--ignore-eos"]
    env = dict(os.environ, MLXIR_CACHE_DIR=str(tmp_path / "cache"))
    one = subprocess.run(base, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    two = subprocess.run([*base, "--tensor-parallel", "2"], capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    assert two.stdout == one.stdout and one.stdout.strip()
    assert "mlxir: running on 2 ranks, 127.0.0.1 (ring)" in two.stderr
    assert len(re.findall(r"^Generation: ", two.stderr, flags=re.MULTILINE)) == 1  # rank 0's alone


class _Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(8, 16, bias=False)
        self.down = torch.nn.Linear(16, 8, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.up(x)))


def test_compile_and_run_tensor_parallel(tmp_path: Path) -> None:
    """`mlxir compile --tensor-parallel 2` splits a .pt2's MLP; `mlxir run` starts the
    2 ranks itself and prints rank 0's outputs, those of the module."""
    torch.manual_seed(0)
    module = _Mlp().eval()
    x = torch.randn(3, 8)
    torch.export.save(torch.export.export(module, (x,)), tmp_path / "mlp.pt2")
    np.save(tmp_path / "x.npy", x.numpy())
    mlxir_command = str(Path(sys.executable).parent / "mlxir")
    compiled = subprocess.run(
        [mlxir_command, "compile", str(tmp_path / "mlp.pt2"), "-o", str(tmp_path / "mlp.mlxfb"), "--tensor-parallel", "2"],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert "split 1 pairs over 2 ranks" in compiled.stderr
    ran = subprocess.run(
        [mlxir_command, "run", str(tmp_path / "mlp.mlxfb"), "--input", str(tmp_path / "x.npy"), "--output-dir", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert ran.returncode == 0, ran.stderr
    assert "mlxir: running on 2 ranks" in ran.stderr
    got = np.load(tmp_path / "out" / "output_0.npy")
    np.testing.assert_allclose(got, module(x).detach().numpy(), atol=1e-5, rtol=1e-5)  # f32: only the sum order differs
    assert ran.stdout.count("->") == 1  # rank 0 reported; rank 1 stayed silent
