"""Sampling: the next token from a step's logits, the argmax or a sample with
temperature, top-k and top-p (`sample_next`)."""

from __future__ import annotations

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
    key: mx.array | None = None,
) -> mx.array:
    """The next token per row of `logits[B, V]` (int64 `[B]`): argmax, or a sample
    from softmax(logits / temperature) restricted to the `top_k` most likely tokens
    and to the smallest set whose probability reaches `top_p` (like transformers'
    warpers: top-k first, then top-p; the most likely token always stays)."""
    import mlx.core as mx

    logits = logits.astype(mx.float32)
    if not do_sample or temperature == 0.0:
        return mx.argmax(logits, axis=-1).astype(mx.int64)
    logits = logits / temperature
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
    return mx.random.categorical(logits, axis=-1, key=key).astype(mx.int64)
