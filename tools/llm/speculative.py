"""Speculative decoding, greedy (mlx_lm.generate's `--draft-model`): a small draft
model proposes a few tokens one by one, the main model reads them all in one call, and
the longest prefix it agrees with is kept, followed by the main model's own next token.
The tokens are exactly the main model's greedy tokens; what changes is how many
main-model calls make them.

Both programs are growing-cache step programs without a mask (what `load` compiles);
the main one returns every position's logits (`load(..., logits="all")`). A rejected
proposal is undone by cutting the caches back along their slot axis."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.tools.llm.compile import CompiledLLM


@dataclass
class SpeculativeStats:
    """How the draft fared: tokens it proposed, how many the main model kept, and the
    main model's calls (the prefill included)."""

    drafted: int = 0
    accepted: int = 0
    main_calls: int = 0

    @property
    def acceptance(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0


def _check(llm: CompiledLLM, role: str) -> None:
    if llm.cache != "growing" or llm.with_mask:
        raise ValueError(
            f"the {role} model's program has a {llm.cache} cache{' with a mask' if llm.with_mask else ''}: "
            "speculative decoding takes growing-cache programs without a mask (what llm.load compiles)"
        )


def _argmax(logits: mx.array) -> int:
    import mlx.core as mx

    return cast(int, mx.argmax(logits).item())


def _cut(kv: Sequence[mx.array], slots: int) -> list[mx.array]:
    return [t[:, :, :slots] for t in kv]


def stream_speculative(
    main: CompiledLLM,
    draft: CompiledLLM,
    prompt: Sequence[int],
    *,
    max_new_tokens: int = 32,
    num_draft_tokens: int = 3,
    eos_token_id: int | Sequence[int] | None = None,
    stats: SpeculativeStats | None = None,
) -> Iterator[int]:
    """Yields the main model's greedy tokens after `prompt` (one sequence), up to
    `max_new_tokens` (-1: no limit), through an end-of-sequence token, or until the
    main program's context is full."""
    import mlx.core as mx

    _check(main, "main")
    _check(draft, "draft")
    if num_draft_tokens < 1:
        raise ValueError(f"num_draft_tokens must be at least 1, got {num_draft_tokens}")
    if not prompt:
        raise ValueError("the prompt is empty: give at least one token")
    eos: set[int] = (
        set() if eos_token_id is None else {eos_token_id} if isinstance(eos_token_id, int) else set(eos_token_id)
    )
    stats = stats if stats is not None else SpeculativeStats()
    context = main.context_limit
    if context is not None and len(prompt) > context:
        raise ValueError(f"the prompt has {len(prompt)} tokens: this program's context holds {context}")
    ids = mx.array([list(prompt)], dtype=mx.int64)
    logits, main_kv = main.step(ids, main.empty_cache(1))
    stats.main_calls += 1
    if logits.shape[1] != ids.shape[1]:
        raise ValueError("the main model's program returns only the last logits: load it with logits='all'")
    token = _argmax(logits[0, -1])
    draft_kv = draft.empty_cache(1)
    draft_pending = list(prompt)  # agreed tokens the draft has not read yet
    main_past = len(prompt)  # tokens in the main model's cache
    produced = 0

    def done(value: int) -> bool:
        return value in eos or produced == max_new_tokens

    produced += 1
    yield token
    if done(token):
        return
    # `token`: the last agreed token, read by neither model yet.
    while context is None or main_past + 1 <= context:
        room = num_draft_tokens if context is None else min(num_draft_tokens, context - main_past - 1)
        if max_new_tokens >= 0:
            room = min(room, max_new_tokens - produced - 1)
        proposals: list[int] = []
        if room > 0:
            draft_in = [*draft_pending, token]
            for _ in range(room):
                draft_logits, draft_kv = draft.step(mx.array([draft_in], dtype=mx.int64), draft_kv)
                proposals.append(_argmax(draft_logits[0, -1]))
                draft_in = [proposals[-1]]
        else:
            draft_pending = [*draft_pending, token]
        logits, main_kv = main.step(mx.array([[token, *proposals]], dtype=mx.int64), main_kv)
        stats.main_calls += 1
        choices = cast(list[int], mx.argmax(logits[0], axis=-1).tolist())
        kept = 0
        while kept < len(proposals) and proposals[kept] == choices[kept]:
            kept += 1
        stats.drafted += len(proposals)
        stats.accepted += kept
        # The main cache read `token` and every proposal: keep `token` and the kept ones.
        main_past += 1 + kept
        main_kv = _cut(main_kv, main_past)
        if proposals:
            # The draft read `token` and every proposal but the last: keep what was agreed.
            unread = 1 if kept == len(proposals) else 0
            draft_kv = _cut(draft_kv, main_past - unread)
            draft_pending = proposals[-1:] if unread else []
        for value in [*proposals[:kept], choices[kept]]:
            produced += 1
            yield value
            if done(value):
                return
        token = choices[kept]
