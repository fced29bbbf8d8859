"""Sampling: the next token from a step's logits, the argmax or a sample with
temperature, top-k, top-p and min-p (`sample_next`); `make_sampler` and
`make_logits_processors` build the same as callables, shaped like mlx-lm's."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mlx.core as mx


def sample_next(
    logits: mx.array,
    *,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    min_p: float = 0.0,
    key: mx.array | None = None,
) -> mx.array:
    """The next token per row of `logits[B, V]` (int64 `[B]`): argmax, or a sample
    from softmax(logits / temperature) restricted to the `top_k` most likely tokens
    and to the smallest set whose probability reaches `top_p` (like transformers'
    warpers: top-k first, then top-p; the most likely token always stays), and to the
    tokens at least `min_p` times as likely as the most likely one (mlx-lm's min-p)."""
    import mlx.core as mx

    logits = logits.astype(mx.float32)
    if not do_sample or temperature == 0.0:
        return mx.argmax(logits, axis=-1).astype(mx.int64)
    logits = warp_logits(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    return mx.random.categorical(logits, axis=-1, key=key).astype(mx.int64)


def warp_logits(
    logits: mx.array, *, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0
) -> mx.array:
    """The float32 logits `sample_next` samples from: divided by `temperature`, the
    tokens top-k, top-p and min-p leave out at -inf."""
    import mlx.core as mx

    logits = logits.astype(mx.float32) / temperature
    neg_inf = mx.array(-float("inf"), dtype=mx.float32)
    vocab = logits.shape[-1]
    if 0 < top_k < vocab:
        kth = mx.sort(logits, axis=-1)[:, vocab - top_k : vocab - top_k + 1]
        logits = mx.where(logits < kth, neg_inf, logits)
    if top_p < 1.0:
        order = mx.argsort(-logits, axis=-1)
        sorted_logits = mx.take_along_axis(logits, order, axis=-1)
        probs = mx.softmax(sorted_logits, axis=-1)
        before = mx.cumsum(probs, axis=-1) - probs  # mass of the more likely tokens
        sorted_logits = mx.where(before >= top_p, neg_inf, sorted_logits)
        inverse = mx.argsort(order, axis=-1)
        logits = mx.take_along_axis(sorted_logits, inverse, axis=-1)
    if min_p > 0.0:
        # p >= min_p * p_max, in logits: logit >= max logit + log(min_p).
        floor = mx.max(logits, axis=-1, keepdims=True) + math.log(min_p)
        logits = mx.where(logits < floor, neg_inf, logits)
    return logits


def probabilities(
    logits: mx.array,
    *,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    min_p: float = 0.0,
) -> mx.array:
    """The distribution `sample_next` draws each row's token from (`[B, V]`, float32):
    one-hot at the argmax when greedy. Speculative sampling compares the draft's and the
    main model's (`speculative.py`)."""
    import mlx.core as mx

    if not do_sample or temperature == 0.0:
        best = mx.argmax(logits, axis=-1, keepdims=True)
        return (mx.arange(logits.shape[-1])[None, :] == best).astype(mx.float32)
    warped = warp_logits(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    return mx.softmax(warped, axis=-1)


def make_sampler(
    temp: float = 0.0, top_p: float = 1.0, min_p: float = 0.0, top_k: int = 0, *, seed: int | None = None
) -> Callable[[mx.array], mx.array]:
    """A sampler as mlx-lm's `make_sampler` makes one: logits `[B, V]` in, the next
    token of each row out; greedy at `temp=0`. Draws from MLX's global random state,
    seeded with `seed` when given."""
    import mlx.core as mx

    if seed is not None:
        mx.random.seed(seed)

    def sample(logits: mx.array) -> mx.array:
        return sample_next(logits, do_sample=temp > 0, temperature=temp or 1.0, top_k=top_k, top_p=top_p, min_p=min_p)

    return sample


def make_logits_processors(
    repetition_penalty: float | None = None, repetition_context_size: int = 20
) -> list[Callable[[mx.array, mx.array], mx.array]]:
    """Logits processors as mlx-lm's `make_logits_processors` makes them: each takes
    the tokens so far (`[B, T]`, prompt included) and a step's logits (`[B, V]`) and
    returns new logits. A repetition penalty divides the positive logits (multiplies the
    negative ones) of the last `repetition_context_size` tokens by the penalty."""
    processors: list[Callable[[mx.array, mx.array], mx.array]] = []
    if repetition_penalty is not None and repetition_penalty != 1.0:
        if repetition_penalty <= 0:
            raise ValueError(f"repetition_penalty must be positive, got {repetition_penalty}")
        processors.append(_repetition_penalty(repetition_penalty, repetition_context_size))
    return processors


def _repetition_penalty(penalty: float, context: int) -> Callable[[mx.array, mx.array], mx.array]:
    import mlx.core as mx

    def apply(tokens: mx.array, logits: mx.array) -> mx.array:
        recent = tokens[:, -context:] if context > 0 else tokens[:, :0]
        if recent.shape[1] == 0:
            return logits
        picked = mx.take_along_axis(logits, recent, axis=-1)
        picked = mx.where(picked < 0, picked * penalty, picked / penalty)
        return mx.put_along_axis(logits, recent, picked, axis=-1)

    return apply


def apply_processors(
    processors: Sequence[Callable[[mx.array, mx.array], mx.array]], tokens: mx.array, logits: mx.array
) -> mx.array:
    for processor in processors:
        logits = processor(tokens, logits)
    return logits
