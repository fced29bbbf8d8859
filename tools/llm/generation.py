"""The generate loop: `stream_tokens` drives a `CompiledLLM` through the prefill (in
chunks if asked) and the decode steps, pipelined with `mx.async_eval`, and grows a
fixed cache by `CACHE_CHUNK` slots; `generate` collects its tokens as
`model.generate` returns them, and `stream_generate` takes text in and streams text
out (mlx-lm style), measured in `GenerationStats`."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mlxir.tools.llm.kv_quantization import QuantizedCache
from mlxir.tools.llm.sampling import apply_processors, sample_next

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.tools.llm.compile import CompiledLLM
    from mlxir.tools.llm.prompt_cache import PromptCache
    from mlxir.tools.llm.speculative import SpeculativeStats
    from mlxir.tools.tokenizer import TextTokenizer


ROTATING_KEEP = 4
"""The first tokens a rotating cache keeps (mlx-lm's `RotatingKVCache` default)."""


def stream_tokens(
    llm: CompiledLLM,
    input_ids: Any,
    attention_mask: Any | None = None,
    *,
    max_new_tokens: int = 32,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    min_p: float = 0.0,
    seed: int = 0,
    eos_token_id: int | Sequence[int] | None = None,
    pad_token_id: int = 0,
    prefill_chunk: int | None = None,
    sampler: Callable[[mx.array], mx.array] | None = None,
    logits_processors: Sequence[Callable[[mx.array, mx.array], mx.array]] = (),
    prompt_cache: PromptCache | None = None,
    max_kv_size: int | None = None,
    keep: int = ROTATING_KEEP,
    kv_bits: int | None = None,
    kv_group_size: int = 64,
) -> Iterator[tuple[mx.array, mx.array]]:
    """Yields `(token, logits)` step by step: the next token of every row (`mx.array`
    int64 `[B]`) and the logits it was chosen from (`[B, V]`, the program's dtype). The
    first step is the prefill (in chunks of `prefill_chunk` tokens if given); the
    cache stays on the MLX side. Rows that produced an EOS continue with
    `pad_token_id`; the stream stops when every row has finished, after
    `max_new_tokens` tokens (-1: no limit), or when a program with a fixed cache has
    no slot left (its `max_capacity`).

    `sampler` (mlx-lm's shape: logits `[B, V]` in, tokens out) replaces the built-in
    one (`do_sample`, `temperature`, `top_k`, `top_p`, `min_p`); each of
    `logits_processors` (the tokens so far `[B, T]`, logits) rewrites the logits first.
    `prompt_cache` (`prompt_cache.py`, one row) holds the cache after the tokens that
    come before `input_ids`: only `input_ids` are read, and the tokens are those of the
    whole prompt.

    `max_kv_size` makes the cache rotate as mlx-lm's `RotatingKVCache` does: once it
    holds that many tokens, each new one drops the oldest after the first `keep`, and
    positions keep counting, so generation goes on past the program's context. It takes
    the growing program with positions (`load(..., positions=True)`), one unpadded row
    and a prompt shorter than `max_kv_size`.

    `kv_bits` holds the cache quantized between steps (`kv_quantization.py`, groups of
    `kv_group_size` along the head dimension), on the growing program without a mask."""
    import mlx.core as mx

    from mlxir.evaluator.arrays import to_mx

    ids = to_mx(input_ids, mx.int64) if not isinstance(input_ids, mx.array) else input_ids
    ids = ids.astype(mx.int64)
    if ids.ndim != 2:
        raise ValueError(f"input_ids must be [batch, length], got shape {tuple(ids.shape)}")
    batch, length = ids.shape
    if length == 0:
        raise ValueError("the prompt is empty: give at least one token")
    if prefill_chunk is not None and prefill_chunk < 1:
        raise ValueError(f"prefill_chunk must be at least 1, got {prefill_chunk}")
    if max_new_tokens < -1:
        raise ValueError(f"max_new_tokens must be -1 (no limit) or at least 0, got {max_new_tokens}")
    if attention_mask is None:
        mask = mx.ones((batch, length), dtype=mx.int64)
    else:
        mask = attention_mask if isinstance(attention_mask, mx.array) else to_mx(attention_mask, mx.int64)
        mask = mask.astype(mx.int64)
    if not llm.with_mask and attention_mask is not None and not bool(mx.all(mask == 1)):
        raise ValueError("this program was exported without attention_mask: it cannot take padding")
    # Left padding: row b's token i is at position i - pads[b] (transformers' count of
    # real tokens so far, minus one, for every real token).
    pads = mx.sum(mask == 0, axis=-1).astype(mx.int64)
    if not bool(mx.all((mx.arange(length)[None, :] >= pads[:, None]) == (mask == 1))):
        raise ValueError(
            "attention_mask must be left-padded: each row zeros (padding), then ones"
        )
    eos: set[int] = (
        set()
        if eos_token_id is None
        else {int(eos_token_id)} if isinstance(eos_token_id, int) else {int(t) for t in eos_token_id}
    )
    key = mx.random.key(seed)
    fixed = llm.cache in ("fixed", "recurrent")
    attention = llm.kv_count  # the cache's first tensors; recurrent states follow
    limit = llm.max_capacity if fixed else None
    context = llm.context_limit
    cached = 0
    if prompt_cache is not None:
        prompt_cache.check(llm)
        if batch != 1:
            raise ValueError(f"a prompt cache holds one sequence: input_ids has {batch} rows")
        cached = len(prompt_cache.tokens)
        if context is not None:
            context -= cached  # the slots the cached prompt holds
    if max_kv_size is not None:
        if llm.cache != "growing" or not llm.with_mask:
            raise ValueError("a rotating cache (max_kv_size) takes the growing program with positions: load(..., positions=True)")
        if batch != 1 or attention_mask is not None or prompt_cache is not None:
            raise ValueError("a rotating cache (max_kv_size) takes one unpadded row, without a prompt cache")
        if not 0 <= keep < max_kv_size:
            raise ValueError(f"max_kv_size must be more than the {keep} tokens it keeps, got {max_kv_size}")
        if length >= max_kv_size:
            raise ValueError(f"the prompt has {length} tokens: a rotating cache of {max_kv_size} takes fewer")
        context = None  # the cache never outgrows max_kv_size
    if context is not None and length > context:
        raise ValueError(f"the prompt has {length + cached} tokens: this program's context holds {context + cached}")
    quantized: QuantizedCache | None = None
    if kv_bits is not None:
        if llm.cache != "growing" or llm.with_mask or prompt_cache is not None or max_kv_size is not None:
            raise ValueError(
                "a quantized KV cache (kv_bits) takes the growing program without a mask (what llm.load "
                "compiles), without a prompt cache or a rotating cache"
            )
        quantized = QuantizedCache(kv_bits, kv_group_size)
        quantized.check([d for _, d in llm.kv_shapes])
    kv = llm.empty_cache(batch) if prompt_cache is None else list(prompt_cache.kv)
    finished = mx.zeros((batch,), dtype=mx.bool_)
    # What earlier work left in MLX's buffer cache (an earlier stream's cache and
    # activations) would sit resident beside this stream's prefill.
    mx.clear_cache()

    def run(tokens: mx.array, start: int, stop: int, evaluate: bool = True) -> mx.array:
        nonlocal kv, mask
        if fixed:
            if stop > kv[0].shape[2]:  # whole chunks of slots; the mask covers them all
                slots = _capacity_for(max(stop, mask.shape[1]), limit)
                kv = [
                    mx.pad(t, [(0, 0), (0, 0), (0, slots - t.shape[2]), (0, 0)]) if i < attention else t
                    for i, t in enumerate(kv)
                ]
                # Slots past the prompt: ones, masked by causality until written.
                mask = mx.concatenate([mask, mx.ones((batch, slots - mask.shape[1]), dtype=mx.int64)], axis=1)
            before = kv
            logits, kv = llm.step(
                tokens, kv, mask, start - pads, mx.array(start, dtype=mx.int64), evaluate=evaluate
            )
            if llm.cache == "recurrent" and start < length:
                # A pad leaves a row's recurrent states as they were (zeros: the pads
                # come first), as transformers' prefill masks it out of the scan.
                real = mask[:, start] == 1
                kv = kv[:attention] + [
                    mx.where(mx.reshape(real, (-1, *([1] * (new.ndim - 1)))), new, old)
                    for new, old in zip(kv[attention:], before[attention:])
                ]
        elif max_kv_size is not None:
            held = kv[0].shape[2]
            window = mx.ones((1, held + tokens.shape[1]), dtype=mx.int64)
            logits, kv = llm.step(tokens, kv, window, mx.array([start], dtype=mx.int64), evaluate=evaluate)
            if held + tokens.shape[1] > max_kv_size:
                kv = [mx.concatenate([t[:, :, :keep], t[:, :, t.shape[2] - (max_kv_size - keep) :]], axis=2) for t in kv]
        elif llm.with_mask:
            logits, kv = llm.step(tokens, kv, mask[:, :stop], start - pads, evaluate=evaluate)
        elif quantized is not None:
            logits, full = llm.step(tokens, quantized.dequantized(kv), evaluate=evaluate)
            quantized.append(full)
            kv = quantized.arrays()
        else:
            logits, kv = llm.step(tokens, kv, evaluate=evaluate)
        return logits[:, -1, :]

    history = ids if prompt_cache is None else mx.concatenate([mx.array([prompt_cache.tokens], dtype=mx.int64), ids], axis=1)

    def choose(logits: mx.array) -> tuple[mx.array, mx.array]:
        """The next tokens, and which rows have finished once they are out."""
        nonlocal key, finished, history
        if logits_processors:
            logits = apply_processors(logits_processors, history, logits.astype(mx.float32))
        if sampler is not None:
            token = sampler(logits).astype(mx.int64)
        else:
            sub = None
            if do_sample:
                key, sub = mx.random.split(key)
            token = sample_next(
                logits, do_sample=do_sample, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p, key=sub
            )
        if logits_processors:
            history = mx.concatenate([history, token[:, None]], axis=1)
        if eos:
            token = mx.where(finished, pad_token_id, token)
            is_eos = mx.zeros((batch,), dtype=mx.bool_)
            for t in eos:
                is_eos = is_eos | (token == t)
            finished = finished | is_eos
        return token, finished

    # A recurrent program takes one token per call (see `mlxir.tools.llm`).
    chunk = 1 if llm.cache == "recurrent" else prefill_chunk or length
    for start in range(0, length, chunk):
        stop = min(start + chunk, length)
        # Lazy, then evaluated once `kv` names the new cache: the old cache is then an
        # input of the graph only, and MLX writes the prompt's keys and values into its
        # buffers (donated) instead of copies of them.
        last = run(ids[:, start:stop], start, stop, evaluate=False)
        mx.eval(last, *kv)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        # The prefill's activations and the cache buffers a chunk outgrew are freed into
        # MLX's buffer cache, sized as no decode step asks again: release them (mlx-lm
        # does too) instead of carrying them as resident memory.
        mx.clear_cache()
    # Pipelined as mlx-lm does: step n + 1's graph is built on step n's lazy token and
    # handed to MLX (`async_eval`) before step n's token is waited for, so building a
    # step overlaps computing the previous one.
    token, done = choose(last)  # pyright: ignore[reportPossiblyUnboundVariable] (the prefill loop ran: the prompt has tokens)
    mx.async_eval(token)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves async_eval's *args unannotated)
    # The cache's size when the buffer cache was last released, and when `token`'s step
    # ran: a step that outgrew the cache frees the smaller one, which no later step reuses.
    released = size = _capacity_for(length, limit)
    if max_new_tokens == 0:
        return
    for index in itertools.count():
        total = length + index + 1
        more = (max_new_tokens < 0 or index + 1 < max_new_tokens) and (context is None or total <= context)
        if more:
            if llm.with_mask and not fixed and max_kv_size is None:
                mask = mx.concatenate([mask, mx.ones((batch, 1), dtype=mx.int64)], axis=1)
            following_logits = run(token[:, None], total - 1, total, evaluate=False)
            following, following_done = choose(following_logits)
            mx.async_eval(following, *kv)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves async_eval's *args unannotated)
        mx.eval(token)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        if size != released:
            mx.clear_cache()
            released = size
        yield token, last  # pyright: ignore[reportPossiblyUnboundVariable] (the prefill loop ran: the prompt has tokens)
        if not more or (eos and bool(mx.all(done))):
            return
        token, done, last = following, following_done, following_logits  # pyright: ignore[reportPossiblyUnboundVariable] (set above when `more`, the only way here)
        size = _capacity_for(total, limit)


CACHE_CHUNK = 32
"""A fixed cache grows by this many slots at a time: its shape, and with it the decode
step's input signature, changes once per chunk (a new trace). Attention runs over every
slot, so a smaller chunk wastes less work on empty ones: over 64 greedy steps after a
128-token prompt, 32 against 256 took 28.5 against 31.9 ms/token on the 56M Llama
(f32, median of 5 rounds in one process) and 4.2 against 5.5 on the small one at vocab
512. mlx-lm allocates 256 at a time but attends only to the filled slots, which a
program with static shapes cannot."""


def _capacity_for(tokens: int, limit: int | None) -> int:
    """Slots for `tokens` tokens: whole chunks, within the program's `limit`."""
    capacity = -(-tokens // CACHE_CHUNK) * CACHE_CHUNK
    return capacity if limit is None else max(tokens, min(capacity, limit))


def generate(
    llm: CompiledLLM,
    input_ids: Any,
    attention_mask: Any | None = None,
    *,
    max_new_tokens: int = 32,
    on_token: Callable[[mx.array], None] | None = None,
    logits: list[mx.array] | None = None,
    **options: Any,
) -> Any:
    """Generates up to `max_new_tokens` tokens after the prompt; returns the prompt and
    the new tokens, `[B, S + new]`, as the kind of `input_ids` (torch, numpy or MLX),
    like `model.generate`. `on_token` sees each step's tokens; `logits`, if given, gets
    each step's logits appended. Options: see `stream_tokens`.

    Called as mlx-lm's `generate(model, tokenizer, prompt, verbose=False, **kwargs)`
    (a tokenizer in second place, the prompt text or ids third or as `prompt=`), it
    returns the generated text: `stream_generate`'s pieces joined, its keyword
    arguments taken as they are, and with `verbose` the text and the speeds printed."""
    import mlx.core as mx

    if hasattr(input_ids, "encode_prompt"):  # mlx-lm's generate(model, tokenizer, prompt)
        prompt = options.pop("prompt", attention_mask)
        if prompt is None:
            raise TypeError("generate(model, tokenizer, prompt): give the prompt")
        verbose = bool(options.pop("verbose", False))
        stats = options.pop("stats", None) or GenerationStats()
        text = ""
        for piece in stream_generate(llm, input_ids, prompt, stats=stats, **options):
            text += piece
            if verbose:
                print(piece, end="", flush=True)
        if verbose:
            print()
            print(f"Prompt: {stats.prompt_tokens} tokens, {stats.prompt_tps:.3f} tokens-per-sec")
            print(f"Generation: {stats.generation_tokens} tokens, {stats.generation_tps:.3f} tokens-per-sec")
            print(f"Peak memory: {stats.peak_memory / 1e9:.3f} GB")
        return text

    from mlxir.evaluator.arrays import to_mx

    tokens: list[mx.array] = []
    for token, step_logits in stream_tokens(
        llm, input_ids, attention_mask, max_new_tokens=max_new_tokens, **options
    ):
        tokens.append(token)
        if logits is not None:
            logits.append(step_logits)
        if on_token is not None:
            on_token(token)
    prompt = input_ids if isinstance(input_ids, mx.array) else to_mx(input_ids, mx.int64)
    out = mx.concatenate([prompt.astype(mx.int64), mx.stack(tokens, axis=1)], axis=1) if tokens else prompt
    if isinstance(input_ids, mx.array):
        return out
    import numpy as np  # only for torch or NumPy prompts: a run on mx.arrays never imports it

    array = cast("np.ndarray[Any, np.dtype[Any]]", np.array(out))  # numpy cannot see an mx.array's dtype
    if type(input_ids).__module__.startswith("torch"):
        import torch

        return torch.from_numpy(array)  # pyright: ignore[reportUnknownMemberType] (torch leaves from_numpy's parameter unannotated)
    return array


@dataclass
class GenerationStats:
    """What `stream_generate` measured: tokens and seconds of the prompt (prefill) and
    of the generation, and MLX's peak memory in bytes."""

    prompt_tokens: int = 0
    prompt_s: float = 0.0
    generation_tokens: int = 0
    generation_s: float = 0.0
    peak_memory: int = 0
    finish_reason: str = ""
    """"stop" (an end-of-sequence token), "length" (`max_tokens` reached) or "context"
    (the program's context is full), as mlx-lm names them ("context" is mlxir's)."""

    @property
    def prompt_tps(self) -> float:
        return self.prompt_tokens / self.prompt_s if self.prompt_s else 0.0

    @property
    def generation_tps(self) -> float:
        return self.generation_tokens / self.generation_s if self.generation_s else 0.0


def stream_generate(
    compiled: CompiledLLM,
    tokenizer: TextTokenizer,
    prompt: str | Sequence[int],
    *,
    max_tokens: int = 256,
    temp: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    min_p: float = 0.0,
    seed: int = 0,
    ignore_eos: bool = False,
    extra_eos_tokens: Sequence[int] = (),
    system_prompt: str | None = None,
    chat_template: bool = True,
    stats: GenerationStats | None = None,
    sampler: Callable[[mx.array], mx.array] | None = None,
    logits_processors: Sequence[Callable[[mx.array, mx.array], mx.array]] = (),
    draft: CompiledLLM | None = None,
    num_draft_tokens: int = 3,
    draft_stats: SpeculativeStats | None = None,
    prompt_cache: PromptCache | None = None,
    max_kv_size: int | None = None,
    kv_bits: int | None = None,
    kv_group_size: int = 64,
) -> Iterator[str]:
    """Yields the generated text piece by piece as tokens come (mlx-lm's
    `stream_generate`): the prompt goes through the tokenizer's chat template when it
    has one (unless `chat_template=False`; token ids are taken as they are), then up to
    `max_tokens` tokens are generated (-1: until an end-of-sequence token or the end of
    the program's context), greedily at `temp=0`, else sampled with temperature,
    top-k, top-p and min-p from `seed` (or by `sampler`, after `logits_processors`:
    `stream_tokens`), stopping at an end-of-sequence token (the tokenizer's and
    `extra_eos_tokens`) unless `ignore_eos`. The pieces join to the decoded generation, special tokens
    skipped; a piece is held back while it ends inside a multi-byte character.
    `stats`, when given, is filled in as generation goes."""
    import mlx.core as mx

    if isinstance(prompt, str) and prompt_cache is not None:
        ids = tokenizer.encode(prompt, add_special_tokens=False)
    elif isinstance(prompt, str):
        ids = tokenizer.encode_prompt(prompt, system_prompt=system_prompt, chat_template=chat_template)
    else:
        ids = [int(t) for t in prompt]
    if not ids:
        raise ValueError("the prompt has no tokens")
    stats = stats if stats is not None else GenerationStats()
    stats.prompt_tokens = len(ids)
    if draft is not None and (prompt_cache is not None or max_kv_size is not None):
        raise ValueError("speculative decoding takes neither a prompt cache nor a rotating cache")
    eos = None if ignore_eos else sorted({*tokenizer.eos_token_ids, *extra_eos_tokens}) or None
    if hasattr(mx, "reset_peak_memory"):
        mx.reset_peak_memory()
    tokens: list[int] = []
    shown = ""
    start = time.perf_counter()
    first = start
    if draft is not None:
        if temp > 0 or sampler is not None or logits_processors:
            raise ValueError("speculative decoding here is greedy: no temperature, sampler or logits processors")
        from mlxir.tools.llm.speculative import stream_speculative

        tokens_only = stream_speculative(
            compiled, draft, ids, max_new_tokens=max_tokens, num_draft_tokens=num_draft_tokens,
            eos_token_id=eos, stats=draft_stats,
        )
        steps: Iterator[tuple[Any, Any]] = ((mx.array([value]), None) for value in tokens_only)
    else:
        steps = stream_tokens(
            compiled,
            mx.array([ids], dtype=mx.int64),
            max_new_tokens=max_tokens,
            do_sample=temp > 0,
            temperature=temp if temp > 0 else 1.0,
            top_k=top_k,
            top_p=top_p,
            min_p=min_p,
            seed=seed,
            eos_token_id=eos,
            sampler=sampler,
            logits_processors=logits_processors,
            prompt_cache=prompt_cache,
            max_kv_size=max_kv_size,
            kv_bits=kv_bits,
            kv_group_size=kv_group_size,
        )
    stats.finish_reason = "length" if max_tokens == 0 else "context"
    for index, (token, _) in enumerate(steps):
        now = time.perf_counter()
        if index == 0:
            first = now
            stats.prompt_s = now - start
        else:
            stats.generation_s = now - first
        stats.generation_tokens = index + 1
        value = int(token[0].item())  # pyright: ignore[reportArgumentType] (an int64 array)
        if eos is not None and value in eos:
            stats.finish_reason = "stop"
            break
        if index + 1 == max_tokens:
            stats.finish_reason = "length"
        tokens.append(value)
        text = tokenizer.decode(tokens)
        if text.endswith("\ufffd") or not text.startswith(shown):
            continue  # inside a multi-byte character (or a merge that rewrote the tail)
        if len(text) > len(shown):
            piece, shown = text[len(shown) :], text
            yield piece
    text = tokenizer.decode(tokens)
    if text.startswith(shown) and len(text) > len(shown):
        yield text[len(shown) :]
    stats.peak_memory = peak_memory()


def peak_memory() -> int:
    """The process's peak memory in bytes: MLX's count where it keeps one (its GPU
    backends), else the resident high-water mark (`VmHWM`: MLX's CPU backend counts
    nothing), else 0."""
    import mlx.core as mx

    counted = int(mx.get_peak_memory()) if hasattr(mx, "get_peak_memory") else 0
    if counted:
        return counted
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
