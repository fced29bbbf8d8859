"""mlxir's own weight quantization (`quantize-weights`, `mlxir.Quantize`): every
matmul against a constant weight runs as `mx.quantized_matmul` on `mx.quantize(w)`,
and the program computes what eager torch computes with each such weight replaced by
`mx.dequantize(mx.quantize(w))`.

Tolerances (max abs error against that dequantized reference in eager torch, outputs
of magnitude ~1): f32 1e-4 (MLX's quantized product sums in another order than a
float GEMM), bf16 5e-2 (a few bf16 roundings of the activations; MLX's CPU quantized
product in bf16 is itself within 5% of the largest output of its dequantized product,
`tests/test_kernels.py`). LLM logits: f32 within 1e-4, bf16 within 3% of the largest
reference logit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from llm_models import MODELS, build_model
from torch import nn
from torch.export import Dim, export

import mlxir
from mlxir.tools.mlx_opt import run as mlx_opt

TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 5e-2}


def dequantized(weight: torch.Tensor, quantize: mlxir.Quantize) -> torch.Tensor:
    """`mx.dequantize(mx.quantize(w))` of a torch `[N, K]` weight, as a torch tensor."""
    w = mx.array(weight.float().numpy()).astype(mx.bfloat16 if weight.dtype == torch.bfloat16 else mx.float32)
    parts = mx.quantize(w, quantize.group_size, quantize.bits, mode=quantize.mode)
    back = mx.dequantize(*parts, group_size=quantize.group_size, bits=quantize.bits, mode=quantize.mode)
    return torch.from_numpy(np.array(back.astype(mx.float32))).to(weight.dtype)


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(128, 256)
        self.down = nn.Linear(256, 32, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def _reference(model: Mlp, quantize: mlxir.Quantize) -> Mlp:
    reference = Mlp().to(model.up.weight.dtype)
    reference.load_state_dict(model.state_dict())
    with torch.no_grad():
        for linear in (reference.up, reference.down):
            linear.weight.copy_(dequantized(linear.weight, quantize))
    return reference


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize(
    "bits,group_size", [(4, 32), (4, 64), (8, 64), (4, 128), (2, 32), (3, 32), (6, 64)]
)
def test_quantized_mlp_matches_the_dequantized_reference(bits: int, group_size: int, dtype: torch.dtype) -> None:
    torch.manual_seed(bits * group_size)
    model = Mlp().eval().to(dtype)
    quantize = mlxir.Quantize(bits=bits, group_size=group_size)
    ep = export(model, (torch.randn(3, 128).to(dtype),), dynamic_shapes={"x": {0: Dim("n", max=64)}})
    program = mlxir.compile(ep, quantize=quantize)
    ops = [ins.op for ins in program.info.instructions]
    assert ops.count("mlx.quantized_matmul") == 2 and "mlx.matmul" not in ops, ops
    reference = _reference(model, quantize)
    for rows in (1, 5):
        x = torch.randn(rows, 128).to(dtype)
        with torch.no_grad():
            expected = reference(x).float()
        got = torch.as_tensor(program(x)).float()
        assert (got - expected).abs().max().item() <= TOLERANCE[dtype]


def test_quantized_weights_are_stored_packed() -> None:
    """At 4 bits a weight and its group scales and biases take about 1/5 of its f32
    bytes: (4 + 2 * 32 / 64) / 32 of them."""
    model = Mlp().eval()
    ep = export(model, (torch.randn(3, 128),))
    full = len(mlxir.compile(ep).to_bytes())
    quantized = len(mlxir.compile(ep, quantize=mlxir.Quantize(bits=4, group_size=64)).to_bytes())
    weight_bytes = 4 * (128 * 256 + 256 * 32)
    saved = full - quantized
    assert saved >= weight_bytes * (1 - (4 + 1) / 32) - 1024, (full, quantized)


def test_weights_the_predicate_skips_stay_float() -> None:
    model = Mlp().eval()
    ep = export(model, (torch.randn(3, 128),))
    program = mlxir.compile(ep, quantize=mlxir.Quantize(skip=lambda name: "down" in name))
    ops = [ins.op for ins in program.info.instructions]
    assert ops.count("mlx.quantized_matmul") == 1 and ops.count("mlx.matmul") == 1, ops


@pytest.mark.parametrize(
    "quantize,message",
    [
        (mlxir.Quantize(bits=7), "bits in [2, 3, 4, 5, 6, 8], not 7"),
        (mlxir.Quantize(group_size=16), "group size in [32, 64, 128], not 16"),
        (mlxir.Quantize(mode="int4"), "mode 'int4' is not one of"),
        (mlxir.Quantize(bits=4, group_size=64, mode="mxfp4"), "group size in [32], not 64"),
    ],
)
def test_schemes_mlx_lacks_are_refused(quantize: mlxir.Quantize, message: str) -> None:
    ep = export(Mlp().eval(), (torch.randn(3, 128),))
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        mlxir.compile(ep, quantize=quantize)


def test_the_pass_takes_its_options_from_mlx_opt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ep = export(Mlp().eval(), (torch.randn(3, 128),))
    path = tmp_path / "mlp.mlir"
    path.write_text(str(mlxir.import_program(ep)))
    assert mlx_opt([str(path), "-p", "lower-to-mlx,quantize-weights{bits=8 group-size=32}"]) == 0
    out = capsys.readouterr().out
    assert out.count("mlx.quantized_matmul") == 2 and "group_size 32 bits 8" in out
    assert mlx_opt([str(path), "-p", "lower-to-mlx,quantize-weights{bits=7}"]) != 0
    assert "quantize-weights: affine quantization takes bits in" in capsys.readouterr().err


def _dequantized_reference(model: Any, quantize: mlxir.Quantize) -> Any:
    """`model` with every linear weight replaced by `mx.dequantize(mx.quantize(w))`; a
    tied LM head gets its own dequantized copy and the embedding stays float, as in
    the quantized program."""
    import copy

    reference = copy.deepcopy(model)
    head = reference.get_output_embeddings()
    with torch.no_grad():
        for module in reference.modules():
            if isinstance(module, nn.Linear) and module is not head:
                module.weight.copy_(dequantized(module.weight, quantize))
        head.weight = nn.Parameter(dequantized(head.weight.detach().clone(), quantize))
    return reference


def _assert_generates_like(compiled: Any, reference: Any, seed: int) -> None:
    """8 greedy tokens of the program equal the reference model's, and the first
    step's logits agree within 1e-4, on a 12-token random prompt."""
    from mlxir.tools import llm

    ids = torch.randint(3, 256, (1, 12), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        expected = reference.generate(ids, max_new_tokens=8, do_sample=False)[0, 12:].tolist()
        first_logits = reference(ids).logits[0, -1].numpy()
    tokens, logits = [], []
    for token, step_logits in llm.stream_tokens(compiled, mx.array(ids.numpy()), max_new_tokens=8):
        tokens.append(int(token[0]))
        logits.append(np.array(step_logits[0]))
    np.testing.assert_allclose(logits[0], first_logits, atol=1e-4)
    assert tokens == expected


@pytest.mark.parametrize("name", MODELS)
def test_every_family_at_4_bits_matches_the_dequantized_reference(name: str) -> None:
    """Greedy tokens and the first step's logits (within 1e-4) of a 4-bit program of
    every tested family against transformers with its linear weights dequantized (Qwen2's
    biased q/k/v: a quantized product plus its bias; Gemma 3, Qwen3 and Cohere's tied
    head: quantized beside the float embedding)."""
    from mlxir.tools import llm

    model = build_model(name)
    model.generation_config.eos_token_id = None
    quantize = mlxir.Quantize(bits=4, group_size=64)
    compiled = llm.compile_llm(model, quantize=quantize)
    ops = [ins.op for ins in compiled.program.info.instructions]
    assert "mlx.matmul" not in ops and "mlx.addmm" not in ops, ops
    reference = _dequantized_reference(model, quantize)
    _assert_generates_like(compiled, reference, seed=1)


def test_cli_compile_quantizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mlxir.tools.cli import main_with

    pt2 = tmp_path / "mlp.pt2"
    torch.export.save(export(Mlp().eval(), (torch.randn(3, 128),)), str(pt2))
    program = tmp_path / "mlp.mlxfb"
    assert main_with(["compile", str(pt2), "-o", str(program), "--quantize", "4", "--group-size", "32"]) == 0
    capsys.readouterr()
    assert main_with(["inspect", str(program)]) == 0
    out = capsys.readouterr().out
    assert "mlx.quantized_matmul 2" in out
    # 4 * (128 * 256 + 256 * 32) f32 bytes; stored: the packed weights (1/8) and the f32
    # scales and biases of each group of 32 (2 * 4 bytes per 32 weights: 1/4 of a byte each)
    weights = 128 * 256 + 256 * 32
    stored = weights // 2 + weights // 32 * 8
    assert f"quantized: 2 matmul weights, 4 bits, groups of 32, affine: {stored:,} bytes ({4 * weights:,} unquantized" in out
    assert main_with(["compile", str(pt2), "-o", str(program), "--quantize", "4", "--group-size", "48"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlxir compile: error: ") and "group size in [32, 64, 128], not 48" in err
    assert main_with(["compile", str(pt2), "-o", str(program), "--quantize-embeddings"]) == 2
    assert "--quantize-embeddings needs --quantize BITS" in capsys.readouterr().err
    assert main_with(["compile", str(pt2), "-o", str(program), "--activation-bits", "8"]) == 2
    assert "--activation-bits needs --quantize BITS" in capsys.readouterr().err
    approximate = ["compile", str(pt2), "-o", str(program), "--quantize", "4", "--activation-bits", "8"]
    assert main_with(approximate) == 0
    assert "x rounded to 8 bits (approximate)" in capsys.readouterr().err
    products = [i for i in mlxir.load(program).info.instructions if i.op == "mlx.quantized_matmul"]
    assert len(products) == 2 and all(i.props.get("activation_bits") == 8 for i in products)
    assert main_with([*approximate[:-2], "--quantize-mode", "mxfp4", "--group-size", "32", "--activation-bits", "8"]) == 2
    assert "activation bits need affine quantization, not mxfp4" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["llama", "qwen3", "gemma3"])
def test_bf16_activations_with_4_bit_weights(name: str) -> None:
    """A bf16 model at 4 bits against its dequantized reference in bf16: first-step
    logits within 3% of the largest reference logit (`test_llm.py`'s bf16 bound; MLX's
    CPU quantized product in bf16 is the larger part of it, measured 1.4-2.2% here) and
    the same 8 greedy tokens (these seeds have no near tie)."""
    from mlxir.tools import llm

    model = build_model(name, torch.bfloat16)
    model.generation_config.eos_token_id = None
    quantize = mlxir.Quantize(bits=4, group_size=64)
    compiled = llm.compile_llm(model, quantize=quantize)
    reference = _dequantized_reference(model, quantize)
    ids = torch.randint(3, 256, (1, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = reference.generate(ids, max_new_tokens=8, do_sample=False)[0, 12:].tolist()
        first_logits = reference(ids).logits[0, -1].float().numpy()
    tokens, logits = [], []
    for token, step_logits in llm.stream_tokens(compiled, mx.array(ids.numpy()), max_new_tokens=8):
        tokens.append(int(token[0]))
        logits.append(np.array(step_logits[0].astype(mx.float32)))
    scale = float(np.abs(first_logits).max())
    assert float(np.abs(logits[0] - first_logits).max()) <= 0.03 * scale
    assert tokens == expected


@pytest.mark.parametrize("name", ["gemma3", "llama"])
def test_quantized_embeddings_match_the_dequantized_reference(name: str) -> None:
    """`embeddings=True`: the embedding table runs as `quantized_take`. Gemma 3 ties its
    LM head to it, so one quantized copy serves both and no float copy is left; Llama's
    untied head is a matmul weight of its own. Greedy tokens and the first step's
    logits (within 1e-4) against transformers with the table and every linear weight
    dequantized."""
    import copy

    from mlxir.tools import llm

    model = build_model(name)
    model.generation_config.eos_token_id = None
    quantize = mlxir.Quantize(bits=4, group_size=64, embeddings=True)
    compiled = llm.compile_llm(model, quantize=quantize)
    info = compiled.program.info
    ops = [ins.op for ins in info.instructions]
    assert ops.count("mlx.quantized_take") == 1 and "mlx.take" not in ops, ops
    table = model.get_input_embeddings().weight
    float_tables = [a for a in info.constants.values() if tuple(a.shape) == tuple(table.shape)]
    assert not float_tables, "a float copy of the embedding table is left"
    tied = model.get_output_embeddings().weight is table
    assert tied == (name == "gemma3")
    reference = copy.deepcopy(model)
    weights = {id(m.weight): m.weight for m in reference.modules() if isinstance(m, nn.Linear | nn.Embedding)}
    with torch.no_grad():
        for weight in weights.values():  # a tied weight once
            weight.copy_(dequantized(weight, quantize))
    _assert_generates_like(compiled, reference, seed=2)
    assert "and 1 embedding tables" in (compiled.quantized or "")
