"""The generate loop: `stream_tokens` drives a `CompiledLLM` through the prefill (in
chunks if asked) and the decode steps, pipelined with `mx.async_eval`, one loop over
whichever cache a `GenerationConfig` asks for (`cache.py`: each cache builds a call's
inputs and takes its outputs); `generate` collects its tokens as `model.generate`
returns them, and `stream_generate` takes text in and streams text out (mlx-lm style),
measured in `GenerationStats`."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mlxir.tools.llm.cache import CACHE_CHUNK, ROTATING_KEEP, CacheError, StepCache, make_cache
from mlxir.tools.llm.config import (
    GenerationConfig,
    GenerationConfigError,
    configured,
    mlx_lm_options,
)
from mlxir.tools.llm.sampling import apply_processors, sample_next

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.tools.llm.compile import CompiledLLM
    from mlxir.tools.llm.prompt_cache import PromptCache
    from mlxir.tools.llm.speculative import SpeculativeStats
    from mlxir.tools.tokenizer import TextTokenizer

# CACHE_CHUNK and ROTATING_KEEP lived here before cache.py, GenerationConfig is what
# the loop takes: callers reach them as `generation.<name>`.
__all__ = [
    "CACHE_CHUNK",
    "ROTATING_KEEP",
    "GenerationConfig",
    "GenerationConfigError",
    "GenerationStats",
    "generate",
    "mlx_lm_options",
    "peak_memory",
    "prefill",
    "stream_generate",
    "stream_tokens",
]


def stream_tokens(
    llm: CompiledLLM,
    input_ids: Any,
    attention_mask: Any | None = None,
    *,
    config: GenerationConfig | None = None,
    prompt_cache: PromptCache | None = None,
    **options: Any,
) -> Iterator[tuple[mx.array, mx.array]]:
    """Yields `(token, logits)` step by step: the next token of every row (`mx.array`
    int64 `[B]`) and the logits it was chosen from (`[B, V]`, the program's dtype). The
    first step is the prefill (in calls of `prefill_chunk` tokens if given); the cache
    (`cache.py`, the kind `config` asks for) stays on the MLX side. Rows that produced
    an EOS continue with `pad_token_id`; the stream stops when every row has finished,
    after `max_new_tokens` tokens (-1: no limit), or when the program's cache has no
    room left. `options` are `GenerationConfig` fields, replacing `config`'s.

    `prompt_cache` (`prompt_cache.py`, one row) holds the cache after the tokens that
    come before `input_ids`: only `input_ids` are read, and the tokens so far are those
    of the whole prompt."""
    import mlx.core as mx

    config = configured(config, options)
    ids, padding = _prompt_rows(llm, input_ids, attention_mask)
    batch, length = ids.shape
    if prompt_cache is not None:
        if batch != 1:
            raise CacheError(f"a prompt cache holds one sequence: input_ids has {batch} rows")
        cache = prompt_cache.cache_for(llm, config)
        history = mx.concatenate([mx.array([prompt_cache.tokens], dtype=mx.int64), ids], axis=1)
    else:
        cache = make_cache(llm, config, batch, padding)
        history = ids
    room = cache.room(llm)
    if room is not None and length > room:
        raise ValueError(f"the prompt has {length + cache.offset} tokens: this program's context holds {room + cache.offset}")
    eos = config.eos_ids()
    key = mx.random.key(config.seed)
    finished = mx.zeros((batch,), dtype=mx.bool_)
    # What earlier work left in MLX's buffer cache (an earlier stream's cache and
    # activations) would sit resident beside this stream's prefill.
    mx.clear_cache()

    def choose(logits: mx.array) -> tuple[mx.array, mx.array]:
        """The next tokens, and which rows have finished once they are out."""
        nonlocal key, finished, history
        if config.logits_processors:
            logits = apply_processors(config.logits_processors, history, logits.astype(mx.float32))
        if config.sampler is not None:
            token = config.sampler(logits).astype(mx.int64)
        else:
            sub = None
            if config.do_sample:
                key, sub = mx.random.split(key)
            token = sample_next(logits, key=sub, **config.sampling())
        if config.logits_processors:
            history = mx.concatenate([history, token[:, None]], axis=1)
        if eos:
            token = mx.where(finished, config.pad_token_id, token)
            is_eos = mx.zeros((batch,), dtype=mx.bool_)
            for t in eos:
                is_eos = is_eos | (token == t)
            finished = finished | is_eos
        return token, finished

    last = prefill(llm, cache, ids, config.prefill_chunk)
    # Pipelined as mlx-lm does: step n + 1's graph is built on step n's lazy token and
    # handed to MLX (`async_eval`) before step n's token is waited for, so building a
    # step overlaps computing the previous one.
    token, done = choose(last)
    mx.async_eval(token)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves async_eval's *args unannotated)
    if config.max_new_tokens == 0:
        return
    # The cache's chunks when the buffer cache was last released, and when `token`'s
    # step ran: a step that outgrew the cache frees the smaller one, which no later
    # step reuses.
    released = chunks = _chunks(cache.offset)
    for index in itertools.count():
        room = cache.room(llm)
        more = (config.max_new_tokens < 0 or index + 1 < config.max_new_tokens) and (room is None or room > 0)
        if more:
            following_logits = cache.step(llm, token[:, None])[:, -1, :]
            following, following_done = choose(following_logits)
            mx.async_eval(following, *cache.arrays)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves async_eval's *args unannotated)
        mx.eval(token)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        if chunks != released:
            mx.clear_cache()
            released = chunks
        yield token, last
        if not more or (eos and bool(mx.all(done))):
            return
        token, done, last = following, following_done, following_logits  # pyright: ignore[reportPossiblyUnboundVariable] (set above when `more`, the only way here)
        chunks = _chunks(cache.offset)


def prefill(llm: CompiledLLM, cache: StepCache, ids: mx.array, chunk: int | None = None) -> mx.array:
    """Reads the prompt `ids` `[B, S]` (S >= 1) into `cache`, in calls of at most
    `chunk` tokens (and the cache's `max_step`); returns the last position's logits
    `[B, V]`, evaluated."""
    import mlx.core as mx

    length = int(ids.shape[1])
    step = min(n for n in (chunk, cache.max_step, length) if n)
    last = None
    for start in range(0, length, step):
        # Lazy, then evaluated once the cache holds the new arrays: the old cache is
        # then an input of the graph only, and MLX writes the prompt's keys and values
        # into its buffers (donated) instead of copies of them.
        last = cache.step(llm, ids[:, start : start + step])[:, -1, :]
        mx.eval(last, *cache.arrays)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        # The prefill's activations and the cache buffers a chunk outgrew are freed into
        # MLX's buffer cache, sized as no decode step asks again: release them (mlx-lm
        # does too) instead of carrying them as resident memory.
        mx.clear_cache()
    if last is None:
        raise ValueError("the prompt is empty: give at least one token")
    return last


def _prompt_rows(llm: CompiledLLM, input_ids: Any, attention_mask: Any | None) -> tuple[mx.array, list[int]]:
    """The prompt as int64 `[B, S]` and each row's left padding, checked."""
    import mlx.core as mx

    from mlxir.evaluator.arrays import to_mx

    ids = (input_ids if isinstance(input_ids, mx.array) else to_mx(input_ids, mx.int64)).astype(mx.int64)
    if ids.ndim != 2:
        raise ValueError(f"input_ids must be [batch, length], got shape {tuple(ids.shape)}")
    batch, length = ids.shape
    if length == 0 or batch == 0:
        raise ValueError("the prompt is empty: give at least one token")
    if attention_mask is None:
        return ids, [0] * batch
    mask = (attention_mask if isinstance(attention_mask, mx.array) else to_mx(attention_mask, mx.int64)).astype(mx.int64)
    if tuple(mask.shape) != (batch, length):
        raise ValueError(f"attention_mask must be the shape of input_ids {(batch, length)}, got {tuple(mask.shape)}")
    # Left padding: row b's token i is at position i - pads[b] (transformers' count of
    # real tokens so far, minus one, for every real token).
    pads = mx.sum(mask == 0, axis=-1).astype(mx.int64)
    if not bool(mx.all((mx.arange(length)[None, :] >= pads[:, None]) == (mask == 1))):
        raise ValueError("attention_mask must be left-padded: each row zeros (padding), then ones")
    padding = cast(list[int], pads.tolist())
    if any(padding) and not llm.with_mask:
        raise ValueError("this program was exported without attention_mask: it cannot take padding")
    return ids, padding


def _chunks(tokens: int) -> int:
    return -(-tokens // CACHE_CHUNK)


def generate(
    llm: CompiledLLM,
    input_ids: Any,
    attention_mask: Any | None = None,
    *,
    max_new_tokens: int | None = None,
    on_token: Callable[[mx.array], None] | None = None,
    logits: list[mx.array] | None = None,
    **options: Any,
) -> Any:
    """Generates up to `max_new_tokens` tokens (default: the config's, 32) after the
    prompt; returns the prompt and the new tokens, `[B, S + new]`, as the kind of
    `input_ids` (torch, numpy or MLX), like `model.generate`. `on_token` sees each
    step's tokens; `logits`, if given, gets each step's logits appended. Options: see
    `stream_tokens`.

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
    if max_new_tokens is not None:
        options["max_new_tokens"] = max_new_tokens
    for token, step_logits in stream_tokens(llm, input_ids, attention_mask, **options):
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
    config: GenerationConfig | None = None,
    *,
    ignore_eos: bool = False,
    extra_eos_tokens: Sequence[int] = (),
    system_prompt: str | None = None,
    chat_template: bool = True,
    stats: GenerationStats | None = None,
    draft: CompiledLLM | None = None,
    draft_stats: SpeculativeStats | None = None,
    prompt_cache: PromptCache | None = None,
    **options: Any,
) -> Iterator[str]:
    """Yields the generated text piece by piece as tokens come (mlx-lm's
    `stream_generate`): the prompt goes through the tokenizer's chat template when it
    has one (unless `chat_template=False`; token ids are taken as they are; after a
    `prompt_cache`, the text as it is), then tokens are generated as `config` says,
    with `options` in place of its values: its fields, or mlx-lm's names (`max_tokens`,
    default 256, -1 until an end-of-sequence token or the end of the program's context;
    `temp`, 0 greedy). Generation stops at an end-of-sequence token (the tokenizer's
    and `extra_eos_tokens`) unless `ignore_eos`. With a `draft` model the tokens come
    from speculative decoding (`speculative.py`, counted in `draft_stats`). The pieces
    join to the decoded generation, special tokens skipped; a piece is held back while
    it ends inside a multi-byte character. `stats`, when given, is filled in as
    generation goes."""
    import mlx.core as mx

    if isinstance(prompt, str) and prompt_cache is not None:
        ids = tokenizer.encode(prompt, add_special_tokens=False)
    elif isinstance(prompt, str):
        ids = tokenizer.encode_prompt(prompt, system_prompt=system_prompt, chat_template=chat_template)
    else:
        ids = [int(t) for t in prompt]
    if not ids:
        raise ValueError("the prompt has no tokens")
    eos = None if ignore_eos else sorted({*tokenizer.eos_token_ids, *extra_eos_tokens}) or None
    base = config or GenerationConfig(max_new_tokens=256)
    config = configured(base, {"eos_token_id": eos, "speculative": draft is not None, **mlx_lm_options(options)})
    max_tokens = config.max_new_tokens
    stats = stats if stats is not None else GenerationStats()
    stats.prompt_tokens = len(ids)
    if hasattr(mx, "reset_peak_memory"):
        mx.reset_peak_memory()
    tokens: list[int] = []
    shown = ""
    start = time.perf_counter()
    first = start
    if draft is not None:
        from mlxir.tools.llm.speculative import stream_speculative

        steps: Iterator[int] = stream_speculative(
            compiled, draft, ids, config=config, prompt_cache=prompt_cache, stats=draft_stats
        )
    else:
        steps = (int(token[0].item()) for token, _ in stream_tokens(compiled, mx.array([ids], dtype=mx.int64), config=config, prompt_cache=prompt_cache))  # pyright: ignore[reportArgumentType] (an int64 array)
    stats.finish_reason = "length" if max_tokens == 0 else "context"
    for index, value in enumerate(steps):
        now = time.perf_counter()
        if index == 0:
            first = now
            stats.prompt_s = now - start
        else:
            stats.generation_s = now - first
        stats.generation_tokens = index + 1
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
