"""Hugging Face causal LMs end to end: `mlxir.tools.llm` exports one step program per
model (prefill and decode, dynamic batch, prompt and past lengths), compiles it, and
generates; everything is compared with eager transformers.

Tiny models with random weights built from configs (no downloads): 2 layers, hidden 64,
4 query / 2 KV heads, vocab 256. Per model:

- prefill logits of a prompt (batch 1) and of a left-padded batch of 3 prompts of
  lengths 7, 4 and 2, at the real (non-padded) positions: PyTorch's SDPA zeros the fully
  masked query rows of padding, MLX's does not, and those rows are never used;
- 16 decode steps teacher-forced with transformers' greedy tokens (the logits of every
  step), and free-running `llm.generate` against `model.generate` (the tokens).

Tolerances: float32 logits within 1e-4 absolute and identical greedy tokens. bfloat16
logits within 3% of the largest reference logit magnitude (1 bf16 ulp at the logits'
scale is 0.4%; measured up to 1.5%), greedy tokens identical wherever transformers'
top-2 margin exceeds twice that tolerance; random tiny models have nearly flat logits,
so a free-running bf16 run may part from transformers only at such a near tie (the test
checks that it does, and nowhere else).

Gemma 3 and Mistral run with a sliding window of 4 (shorter than prompt + 16 tokens),
Gemma 3 with one sliding and one full-attention layer.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from llm_models import MODELS, build_model  # noqa: E402

from mlxir.tools import llm  # noqa: E402

# Its tests share compiled programs (module fixtures, caches): one worker compiles them once.
pytestmark = pytest.mark.xdist_group("test_llm")

NEW_TOKENS = 16
F32_ATOL = 1e-4
BF16_RTOL_OF_SCALE = 0.03


@functools.cache
def model_for(name: str, dtype: torch.dtype) -> Any:
    return build_model(name, dtype)


@functools.cache
def compiled_for(
    name: str, dtype: torch.dtype, with_mask: bool = True, cache: str | None = None
) -> llm.CompiledLLM:
    return llm.compile_llm(
        model_for(name, dtype), attention_mask=with_mask, max_seq=64, max_past=64, max_batch=4, cache=cache
    )


def prompts(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch 1: one prompt of 7 tokens. Batch 3: prompts of 7, 4 and 2 tokens, left-padded
    with token 0 (mask 0)."""
    generator = torch.Generator().manual_seed(1)
    lengths = [7, 4, 2][:batch]
    ids = torch.zeros(batch, 7, dtype=torch.long)
    mask = torch.zeros(batch, 7, dtype=torch.long)
    for row, n in enumerate(lengths):
        ids[row, 7 - n :] = torch.randint(3, 256, (n,), generator=generator)
        mask[row, 7 - n :] = 1
    return ids, mask


def positions_of(mask: torch.Tensor) -> torch.Tensor:
    """transformers' position ids of a (left-)padded batch: the reference's."""
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)


def offsets_of(mask: torch.Tensor, start: int) -> mx.array:
    """The step program's `position_offset` for new tokens from index `start` of a
    left-padded `mask`: `start - pads` (each real token then sits at transformers'
    position)."""
    return mx.array((start - (mask == 0).sum(-1)).numpy())


def to_torch(array: mx.array) -> torch.Tensor:
    return torch.from_numpy(np.array(array.astype(mx.float32)))


def tolerance(dtype: torch.dtype, reference: torch.Tensor) -> float:
    if dtype == torch.float32:
        return F32_ATOL
    return BF16_RTOL_OF_SCALE * float(reference.float().abs().max())


def margin(logits: torch.Tensor) -> torch.Tensor:
    """Top-1 minus top-2 logit per row."""
    top = logits.float().topk(2, dim=-1).values
    return top[..., 0] - top[..., 1]


def eager_reference(model: Any, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, Any]:
    with torch.no_grad():
        prefill = model(input_ids=ids, attention_mask=mask, position_ids=positions_of(mask)).logits
        generated = model.generate(
            ids,
            attention_mask=mask,
            max_new_tokens=NEW_TOKENS,
            do_sample=False,
            output_logits=True,
            return_dict_in_generate=True,
        )
    return prefill, generated


def check_teacher_forced(
    compiled: llm.CompiledLLM,
    ids: torch.Tensor,
    mask: torch.Tensor,
    prefill_ref: torch.Tensor,
    generated: Any,
    dtype: torch.dtype,
) -> None:
    """Prefill, then one decode step per transformers token; every step's logits match
    and its argmax is transformers' token (bf16: unless the reference margin is a tie).
    A fixed cache gets every slot at once (capacity prompt + new tokens) and the whole
    mask; a growing one gets the mask so far."""
    batch = ids.shape[0]
    tol = tolerance(dtype, prefill_ref)
    full_mask = torch.cat([mask, torch.ones(batch, NEW_TOKENS, dtype=torch.long)], dim=1)
    fixed = compiled.cache == "fixed"

    def call(tokens: torch.Tensor, kv: list[mx.array], start: int) -> tuple[mx.array, list[mx.array]]:
        stop = start + tokens.shape[1]
        if fixed:
            return compiled.step(
                mx.array(tokens.numpy()), kv, mx.array(full_mask.numpy()),
                offsets_of(full_mask, start), mx.array(start, dtype=mx.int64),
            )
        return compiled.step(
            mx.array(tokens.numpy()), kv, mx.array(full_mask[:, :stop].numpy()), offsets_of(full_mask, start)
        )

    logits, kv = call(ids, compiled.empty_cache(batch, full_mask.shape[1] if fixed else 0), 0)
    got = to_torch(logits)
    real = mask.bool()
    error = float((got - prefill_ref.float())[real].abs().max())
    assert error <= tol, f"prefill logits differ by {error:.3g} (tolerance {tol:.3g})"

    tokens = generated.sequences[:, ids.shape[1] :]
    step_logits = got[:, -1]
    for step in range(NEW_TOKENS):
        reference = generated.logits[step].float()
        error = float((step_logits - reference).abs().max())
        assert error <= tol, f"step {step}: logits differ by {error:.3g} (tolerance {tol:.3g})"
        decided = margin(reference) > 2 * tol
        ours = step_logits.argmax(-1)
        assert torch.equal(ours[decided], tokens[decided, step]), f"step {step}: greedy tokens differ"
        if dtype == torch.float32:
            assert torch.equal(ours, tokens[:, step]), f"step {step}: greedy tokens differ"
        if step + 1 == NEW_TOKENS:
            break
        logits, kv = call(tokens[:, step : step + 1], kv, ids.shape[1] + step)
        step_logits = to_torch(logits)[:, -1]


def check_free_running(
    compiled: llm.CompiledLLM,
    ids: torch.Tensor,
    mask: torch.Tensor | None,
    generated: Any,
    dtype: torch.dtype,
    tol: float,
) -> None:
    """`llm.generate` gives transformers' greedy tokens (bf16: up to a near tie)."""
    logits: list[mx.array] = []
    out = llm.generate(compiled, ids, mask, max_new_tokens=NEW_TOKENS, logits=logits)
    assert out.shape == generated.sequences.shape
    assert torch.equal(out[:, : ids.shape[1]], ids)
    if dtype == torch.float32:
        assert torch.equal(out, generated.sequences)
        return
    new, reference = out[:, ids.shape[1] :], generated.sequences[:, ids.shape[1] :]
    for step in range(NEW_TOKENS):
        differ = new[:, step] != reference[:, step]
        if bool(differ.any()):
            ties = margin(generated.logits[step])[differ]
            assert bool((ties <= 2 * tol).all()), (
                f"step {step}: tokens differ where transformers' margin is {ties.tolist()} "
                f"(> {2 * tol:.3g})"
            )
            return


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name", MODELS)
def test_prefill_and_greedy_decode(name: str, dtype: torch.dtype) -> None:
    """The default program: the fixed-capacity cache, decode steps compiled."""
    check_prefill_and_greedy_decode(name, dtype, compiled_for(name, dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name", ["llama", "gemma3"])
def test_growing_cache(name: str, dtype: torch.dtype) -> None:
    compiled = compiled_for(name, dtype, cache="growing")
    assert compiled.cache == "growing"
    check_prefill_and_greedy_decode(name, dtype, compiled)


def check_prefill_and_greedy_decode(name: str, dtype: torch.dtype, compiled: llm.CompiledLLM) -> None:
    model = model_for(name, dtype)
    for batch in (1, 3):
        ids, mask = prompts(batch)
        prefill_ref, generated = eager_reference(model, ids, mask)
        check_teacher_forced(compiled, ids, mask, prefill_ref, generated, dtype)
        check_free_running(compiled, ids, mask, generated, dtype, tolerance(dtype, prefill_ref))


@pytest.mark.parametrize("name", ["llama", "qwen3"])
def test_without_attention_mask(name: str) -> None:
    """The variant without attention_mask/position_ids: batch 1 and an unpadded batch 2."""
    model = model_for(name, torch.float32)
    compiled = compiled_for(name, torch.float32, with_mask=False)
    assert not compiled.with_mask
    assert [s.name for s in compiled.program.inputs][:3] == ["input_ids", "kv[0]", "kv[1]"]
    generator = torch.Generator().manual_seed(2)
    for batch in (1, 2):
        ids = torch.randint(3, 256, (batch, 6), generator=generator)
        with torch.no_grad():
            prefill_ref = model(input_ids=ids).logits
            generated = model.generate(
                ids, max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                return_dict_in_generate=True,
            )
        logits, _ = compiled.step(mx.array(ids.numpy()), compiled.empty_cache(batch))
        assert float((to_torch(logits) - prefill_ref).abs().max()) <= F32_ATOL
        step_logits: list[mx.array] = []
        out = llm.generate(compiled, ids, max_new_tokens=NEW_TOKENS, logits=step_logits)
        assert torch.equal(out, generated.sequences)
        for ours, reference in zip(step_logits, generated.logits):
            assert float((to_torch(ours) - reference).abs().max()) <= F32_ATOL


def test_one_program_serves_every_length() -> None:
    """One program: a 1-token prompt (mask length 1 < torch's inferred minimum of 4), a
    prompt prefilled in chunks of 3 (past > 0 and seq > 1), and plain decode."""
    model = model_for("llama", torch.float32)
    compiled = compiled_for("llama", torch.float32)
    ids = torch.tensor([[17]])
    with torch.no_grad():
        reference = model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False)
    assert torch.equal(llm.generate(compiled, ids, max_new_tokens=NEW_TOKENS), reference)

    ids, mask = prompts(3)
    whole: list[mx.array] = []
    chunked: list[mx.array] = []
    a = llm.generate(compiled, ids, mask, max_new_tokens=8, logits=whole)
    b = llm.generate(compiled, ids, mask, max_new_tokens=8, logits=chunked, prefill_chunk=3)
    assert torch.equal(a, b)
    for x, y in zip(whole, chunked):
        assert float(mx.max(mx.abs(x - y))) <= 1e-5


def test_the_fixed_cache_grows_by_chunks() -> None:
    """A generation that outgrows the first chunk of slots: the cache is padded by
    another chunk (a new signature, traced again) and the tokens stay transformers'."""
    model = model_for("llama", torch.float32)
    compiled = compiled_for("llama", torch.float32)
    assert compiled.cache == "fixed"
    length = llm.CACHE_CHUNK - 3
    ids = torch.randint(3, 256, (2, length), generator=torch.Generator().manual_seed(5))
    mask = torch.ones_like(ids)
    mask[1, :4] = 0  # a left-padded row
    ids[1, :4] = 0
    with torch.no_grad():
        reference = model.generate(ids, attention_mask=mask, max_new_tokens=10, do_sample=False)
    assert torch.equal(llm.generate(compiled, ids, mask, max_new_tokens=10), reference)


def test_a_prompt_cache_of_the_fixed_cache(tmp_path: Path) -> None:
    """The fixed cache saved after a prefix (`prompt_cache.py`: any cache's state) and
    read back, plus the rest of the prompt, gives transformers' tokens of the whole
    prompt, past a chunk of slots; the cache trims back to a shorter prefix as well."""
    from mlxir.tools.llm.cache import make_cache
    from mlxir.tools.llm.prompt_cache import PromptCache, make_prompt_cache

    model = model_for("llama", torch.float32)
    compiled = compiled_for("llama", torch.float32)
    ids = torch.randint(3, 256, (1, llm.CACHE_CHUNK + 4), generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        reference = model.generate(ids, max_new_tokens=8, do_sample=False)[0, ids.shape[1] :].tolist()
    prompt = ids[0].tolist()
    make_prompt_cache(compiled, prompt[:10], config=llm.GenerationConfig()).save(tmp_path / "fixed")
    cache = PromptCache.load(tmp_path / "fixed")
    assert cache.kind == "FixedCache"
    rest = mx.array([prompt[10:]], dtype=mx.int64)
    got = [int(t.item()) for t, _ in llm.stream_tokens(compiled, rest, max_new_tokens=8, prompt_cache=cache)]
    assert got == reference
    # Read two tokens too many, trim them, read the rest: the same tokens.
    longer = make_cache(compiled, llm.GenerationConfig())
    longer.step(compiled, mx.array([prompt[:12]], dtype=mx.int64))
    assert longer.trim(2) == 2 and longer.offset == 10
    trimmed = PromptCache.of(prompt[:10], longer)
    assert [int(t.item()) for t, _ in llm.stream_tokens(compiled, rest, max_new_tokens=8, prompt_cache=trimmed)] == reference


def test_a_prompt_longer_than_a_chunk_prefilled_in_pieces() -> None:
    """Chunked prefill of a prompt longer than one chunk of cache slots: the cache is
    sized for the whole prompt at the first piece."""
    model = model_for("llama", torch.float32)
    compiled = compiled_for("llama", torch.float32)
    ids = torch.randint(3, 256, (1, llm.CACHE_CHUNK + 8), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        reference = model.generate(ids, max_new_tokens=6, do_sample=False)
    assert torch.equal(llm.generate(compiled, ids, max_new_tokens=6, prefill_chunk=5), reference)


@pytest.mark.parametrize(
    ("ids", "options", "message"),
    [
        (torch.zeros((1, 0), dtype=torch.int64), {}, "the prompt is empty"),
        (torch.zeros((1, 0), dtype=torch.int64), {"prefill_chunk": 2}, "the prompt is empty"),
        (torch.zeros((3,), dtype=torch.int64), {}, r"input_ids must be \[batch, length\], got shape \(3,\)"),
        (torch.ones((1, 4), dtype=torch.int64), {"prefill_chunk": 0}, "prefill_chunk must be at least 1, not 0"),
    ],
)
def test_bad_prompts_are_clear_errors(ids: torch.Tensor, options: dict[str, int], message: str) -> None:
    """An empty prompt, a prompt without a batch dimension and a chunk of no tokens are
    the caller's mistakes, said as such before anything runs (they were an
    UnboundLocalError, a tuple-unpacking error, and a chunk of 0 silently read as the
    whole prompt)."""
    compiled = compiled_for("llama", torch.float32)
    with pytest.raises(ValueError, match=message):
        llm.generate(compiled, ids, max_new_tokens=2, **options)


def test_inputs_stay_mlx() -> None:
    """MLX inputs give MLX outputs: the cache never leaves MLX."""
    compiled = compiled_for("llama", torch.float32)
    ids, mask = prompts(1)
    out = llm.generate(compiled, mx.array(ids.numpy()), mx.array(mask.numpy()), max_new_tokens=4)
    assert isinstance(out, mx.array) and out.shape == (1, 11)
    capacity = mx.concatenate([mx.array(mask.numpy()), mx.ones((1, 3), dtype=mx.int64)], axis=1)
    logits, kv = compiled.step(
        mx.array(ids.numpy()), compiled.empty_cache(1, 10), capacity, offsets_of(mask, 0), mx.array(0, dtype=mx.int64)
    )
    assert isinstance(logits, mx.array) and all(isinstance(t, mx.array) for t in kv)
    assert kv[0].shape == (1, 2, 10, 16)


def test_sampling() -> None:
    compiled = compiled_for("llama", torch.float32)
    ids, mask = prompts(3)
    greedy = llm.generate(compiled, ids, mask, max_new_tokens=8)
    sample = functools.partial(llm.generate, compiled, ids, mask, max_new_tokens=8, do_sample=True)
    first, again, other = sample(seed=3), sample(seed=3), sample(seed=4)
    assert torch.equal(first, again)
    assert not torch.equal(first, other)
    assert torch.equal(sample(seed=5, top_k=1), greedy)
    assert torch.equal(sample(seed=5, top_p=1e-6), greedy)
    assert torch.equal(sample(seed=5, temperature=1e-4), greedy)


def test_sample_next_warpers() -> None:
    probs = mx.array([[0.04, 0.6, 0.3, 0.06]] * 512)
    logits = mx.log(probs)
    key = mx.random.key(0)

    def drawn(**options: Any) -> set[int]:
        tokens = llm.sample_next(logits, do_sample=True, key=key, **options)
        return set(np.array(tokens).tolist())

    assert drawn() == {0, 1, 2, 3}
    assert drawn(top_k=3) == {1, 2, 3}
    assert drawn(top_k=2) == {1, 2}
    assert drawn(top_p=0.5) == {1}  # the most likely token alone reaches 0.5
    assert drawn(top_p=0.85) == {1, 2}
    assert drawn(top_p=0.92) == {1, 2, 3}
    assert drawn(temperature=0.05) == {1}
    assert set(np.array(llm.sample_next(logits)).tolist()) == {1}


def test_eos_stops_and_pads() -> None:
    compiled = compiled_for("llama", torch.float32)
    ids, mask = prompts(3)
    greedy = llm.generate(compiled, ids, mask, max_new_tokens=8)
    eos = int(greedy[0, 7 + 2])  # row 0's third new token
    out = llm.generate(compiled, ids, mask, max_new_tokens=8, eos_token_id=eos, pad_token_id=0)
    row = out[0, 7:].tolist()
    assert row[: row.index(eos) + 1] == greedy[0, 7 : 7 + row.index(eos) + 1].tolist()
    assert all(t == 0 for t in row[row.index(eos) + 1 :])


def test_saved_program_generates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import mlxir

    compiled = compiled_for("qwen3", torch.float32)
    path = tmp_path / "qwen3.mlxfb"
    compiled.program.save(path)
    program = mlxir.load(path)
    assert isinstance(program, mlxir.Program)  # an .mlxfb file, not a .pte
    reloaded = llm.CompiledLLM.from_program(program)
    assert reloaded.with_mask and reloaded.kv_shapes == compiled.kv_shapes
    ids, mask = prompts(3)
    assert torch.equal(
        llm.generate(reloaded, ids, mask, max_new_tokens=6),
        llm.generate(compiled, ids, mask, max_new_tokens=6),
    )

    from mlxir.tools.cli import main_with

    ids_arg = ",".join(str(int(t)) for t in ids[0])
    code = main_with(["generate", str(path), "--ids", ids_arg, "--max-new-tokens", "6"])
    assert code == 0
    expected = llm.generate(compiled, ids[:1], max_new_tokens=6)[0, 7:].tolist()
    assert capsys.readouterr().out.split() == [str(t) for t in expected]


@pytest.mark.parametrize("name", ["llama", "qwen3"])
def test_static_cache_variant(name: str) -> None:
    """transformers' static-cache export (strict=True): the cache is program state,
    written with index_copy and copy each call; one token per call."""
    import mlxir

    model = model_for(name, torch.float32)
    ep = llm.export_static_llm(model, max_cache_len=32)
    program = mlxir.compile(ep)
    assert any(name.startswith("key_cache") for name in program.state)
    # its graph writes the cache in place: torch functionalizes it (a whole re-trace)
    from mlxir.conversions.torch_to_aten import import_program

    because = import_program(ep).attributes["mlxir.decomposed_by_torch"]
    assert "mutates tensors in place" in str(because), because
    ids, _ = prompts(1)
    with torch.no_grad():
        generated = model.generate(
            ids, max_new_tokens=8, do_sample=False, output_logits=True, return_dict_in_generate=True
        )
    tokens = generated.sequences[0].tolist()
    for position, token in enumerate(tokens[:-1]):
        logits = program(torch.tensor([[token]]), torch.tensor([position]))
        if position >= ids.shape[1] - 1:
            step = position - ids.shape[1] + 1
            assert float((logits[0, -1] - generated.logits[step][0]).abs().max()) <= F32_ATOL
            assert int(logits[0, -1].argmax()) == tokens[position + 1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name", MODELS)
def test_importing_node_by_node_equals_decomposing_the_program(name: str, dtype: torch.dtype) -> None:
    """The default import (the graph as exported, nodes decomposed alone where mlxir
    lacks an importer) and torch's whole-program `run_decompositions` give the same
    program: the same logits, bit for bit, for a padded batch's prefill and 4 decode
    steps. Only the whole-program import says torch decomposed it."""
    from mlxir import lower  # the pipeline of this device, as before the compiler took its target
    from mlxir.codegen import serialize
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR
    from mlxir.runtime.program import Program

    exported = llm.export_llm(model_for(name, dtype), max_seq=64, max_past=64, max_batch=4)
    ids, mask = prompts(3)
    runs = []
    for mode in ("nodes", "program"):
        module = import_program(exported.ep, decompose=mode)
        assert (DECOMPOSED_BY_TORCH_ATTR in module.attributes) == (mode == "program")
        lower(module)
        compiled = llm.CompiledLLM.from_program(Program(serialize(module)))
        logits: list[mx.array] = []
        tokens = llm.generate(compiled, ids, mask, max_new_tokens=4, logits=logits)
        runs.append((tokens, [np.array(step.astype(mx.float32)) for step in logits]))
    (nodes_tokens, nodes_logits), (program_tokens, program_logits) = runs
    assert torch.equal(nodes_tokens, program_tokens)
    assert len(nodes_logits) == len(program_logits) == 4
    for step, (a, b) in enumerate(zip(nodes_logits, program_logits)):
        assert np.array_equal(a, b), f"step {step}: max difference {np.abs(a - b).max()}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name", MODELS)
def test_every_family_gets_the_fusions(name: str, dtype: torch.dtype) -> None:
    """The program of every tested family (the one the tests above compare with
    transformers), compiled for the CPU target as a compile on the CPU picks, fuses its
    rotary embeddings (`fuse-rope`: no rope of its own left) and then computes them as
    rotated pairs (`cpu-rope-pairs`: q and k of the 2 layers read one angle table,
    one cosine and one sine, per rope base), its q/k/v (or fused qkv) projection as one product per
    layer, writes its cache by slice updates and reads weights without instructions."""
    program = compiled_for(name, dtype).program
    ops = Counter(ins.op for ins in program.info.instructions)
    assert ops["mlx.rope"] == 0, ops
    # Gemma 3's sliding-window and full-attention layers rotate with different bases.
    tables = 2 if name == "gemma3" else 1
    assert ops["mlx.cos"] == ops["mlx.sin"] == tables, ops
    assert ops["mlx.weight"] == 0, ops
    # the fixed cache's keys and values written by one slice update each
    assert ops["mlx.dynamic_slice_update"] == 4 and ops["mlx.scatter"] == 0, ops
    projections = ops["mlx.matmul"] + ops["mlx.addmm"]
    # per layer: one q/k/v product, the output projection, the MLP's (merged) up
    # products and its down product, at most; plus the LM head
    assert projections <= 2 * 4 + 1, ops


def test_a_compiled_decode_step_graph_on_the_cpu(tmp_path: Path) -> None:
    """What MLX runs for a decode step of the default program, compiled on the CPU: the
    cache written by slice updates (no scatter), one angle table for all ropes (MLX's
    own CPU rope computes one per call), and the greedy tokens still transformers'."""
    compiled = compiled_for("llama", torch.float32)
    ids, mask = prompts(2)
    model = model_for("llama", torch.float32)
    with torch.no_grad():
        reference = model.generate(ids, attention_mask=mask, max_new_tokens=8, do_sample=False)
    with mx.stream(mx.cpu):
        assert torch.equal(llm.generate(compiled, ids, mask, max_new_tokens=8), reference)
        batch, length = ids.shape
        kv = [mx.zeros((batch, h, llm.CACHE_CHUNK, d)) for h, d in compiled.kv_shapes]
        slots = mx.ones((batch, llm.CACHE_CHUNK), dtype=mx.int64)
        for _ in range(compiled.program.auto_compile_after + 1):
            outputs = compiled.step(
                mx.ones((batch, 1), dtype=mx.int64), kv, slots,
                mx.array([length] * batch, dtype=mx.int64), mx.array(length, dtype=mx.int64),
                evaluate=False,
            )
        assert compiled.program.traces >= 1
        mx.export_to_dot(str(tmp_path / "step.dot"), outputs[0], *outputs[1])
    nodes = Counter(re.findall(r'label ="(\w+)"', (tmp_path / "step.dot").read_text()))
    assert nodes["DynamicSliceUpdate"] == 4 and nodes["Scatter"] == 0, nodes
    assert nodes["Cos"] == nodes["Sin"] == 1, nodes
