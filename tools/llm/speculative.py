"""Speculative decoding (mlx_lm.generate's `--draft-model`): a small draft model
proposes a few tokens one by one, the main model reads them all in one call, and the
proposals are kept or rejected so that every token has the main model's distribution
(speculative sampling, Leviathan et al. 2023; Chen et al. 2023): proposal `x`, drawn
from the draft's distribution `q`, is kept with probability `min(1, p(x) / q(x))`
under the main model's `p`; the first one rejected is replaced by a draw from
`max(0, p - q)` normalized, and when all are kept the main model's next distribution
gives one more token. Greedy decoding is the case of one-hot distributions: the tokens
are exactly the main model's greedy tokens; what changes is how many main-model calls
make them.

Each model's cache is the one the config asks for (`cache.py`), and a rejected
proposal is taken back by trimming it (`StepCache.trim`). The main program returns
every position's logits (`load(..., logits="all")`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mlxir.tools.llm.cache import StepCache, make_cache

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.tools.llm.compile import CompiledLLM
    from mlxir.tools.llm.config import GenerationConfig
    from mlxir.tools.llm.prompt_cache import PromptCache


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


def verify(
    proposals: mx.array, draft_probs: mx.array, main_probs: mx.array, key: mx.array
) -> tuple[int, mx.array]:
    """Speculative sampling's verdict on `proposals` `[K]`, drawn from `draft_probs`
    `[K, V]`, under `main_probs` `[K + 1, V]` (the main model's distributions at each
    proposal and after the last): how many proposals are kept, and the token that
    follows them (int64 `[]`), so that every token is distributed as the main model's."""
    import mlx.core as mx

    count = int(proposals.shape[0])
    accept_key, residual_key, bonus_key = mx.random.split(key, 3)
    rows = mx.arange(count)
    p = main_probs[rows, proposals]
    q = draft_probs[rows, proposals]
    # u < p / q, without dividing: u q < p (q > 0 for a drawn proposal).
    kept_each = mx.random.uniform(shape=(count,), key=accept_key) * q < p
    rejected = cast(list[bool], mx.logical_not(kept_each).tolist())
    kept = rejected.index(True) if True in rejected else count
    if kept == count:
        return kept, mx.random.categorical(mx.log(main_probs[count]), key=bonus_key).astype(mx.int64)
    residual = mx.maximum(main_probs[kept] - draft_probs[kept], 0.0)
    return kept, mx.random.categorical(mx.log(residual), key=residual_key).astype(mx.int64)


def stream_speculative(
    main: CompiledLLM,
    draft: CompiledLLM,
    prompt: Sequence[int],
    config: GenerationConfig | None = None,
    *,
    prompt_cache: PromptCache | None = None,
    stats: SpeculativeStats | None = None,
    **options: Any,
) -> Iterator[int]:
    """Yields the main model's tokens after `prompt` (one sequence; after the tokens of
    `prompt_cache`, made with the main model, when given), sampled as `config` says
    (with `options`, its fields, in place of its values: `max_new_tokens`, -1 no limit;
    `num_draft_tokens`; greedy unless `do_sample`), through an end-of-sequence token,
    or until the main program's context is full."""
    import mlx.core as mx

    from mlxir.tools.llm.config import configured
    from mlxir.tools.llm.generation import prefill
    from mlxir.tools.llm.sampling import probabilities

    config = configured(config, {"speculative": True, **options})
    if not prompt:
        raise ValueError("the prompt is empty: give at least one token")
    main_cache = make_cache(main, config) if prompt_cache is None else prompt_cache.cache_for(main, config)
    draft_cache = make_cache(draft, config)
    for role, cache in (("main", main_cache), ("draft", draft_cache)):
        if not cache.is_trimmable():
            raise ValueError(
                f"the {role} model's {type(cache).__name__} cannot take back rejected proposals: "
                "speculative decoding takes attention-only models"
            )
    eos = config.eos_ids()
    stats = stats if stats is not None else SpeculativeStats()
    room = main_cache.room(main)
    if room is not None and len(prompt) > room:
        raise ValueError(f"the prompt has {len(prompt) + main_cache.offset} tokens: this program's context holds {room + main_cache.offset}")
    sampling = config.sampling()
    key = mx.random.key(config.seed)

    def distribution(logits: mx.array) -> mx.array:
        return probabilities(logits, **sampling)

    def draw(probs: mx.array) -> int:
        nonlocal key
        key, sub = mx.random.split(key)
        return cast(int, mx.random.categorical(mx.log(probs), key=sub).item())

    ids = mx.array([list(prompt)], dtype=mx.int64)
    logits = main_cache.step(main, ids, evaluate=True)
    stats.main_calls += 1
    if logits.shape[1] != ids.shape[1]:
        raise ValueError("the main model's program returns only the last logits: load it with logits='all'")
    token = draw(distribution(logits[:, -1])[0])
    cached = prompt_cache.tokens if prompt_cache is not None else []
    draft_pending = [*cached, *prompt]  # agreed tokens the draft has not read yet
    produced = 0
    limit = config.max_new_tokens

    def done(value: int) -> bool:
        return value in eos or produced == limit

    produced += 1
    yield token
    if done(token):
        return
    # `token`: the last agreed token, read by neither model yet.
    while True:
        room = main_cache.room(main)
        if room is not None and room < 1:
            return
        wanted = config.num_draft_tokens if room is None else min(config.num_draft_tokens, room - 1)
        if limit >= 0:
            wanted = min(wanted, limit - produced - 1)
        proposals: list[int] = []
        draft_probs: list[mx.array] = []
        if wanted > 0:
            draft_in = [*draft_pending, token]
            for _ in range(wanted):
                if len(draft_in) > 1:
                    draft_logits = prefill(draft, draft_cache, mx.array([draft_in], dtype=mx.int64))
                else:
                    draft_logits = draft_cache.step(draft, mx.array([draft_in], dtype=mx.int64), evaluate=True)[:, -1]
                draft_probs.append(distribution(draft_logits)[0])
                proposals.append(draw(draft_probs[-1]))
                draft_in = [proposals[-1]]
            draft_pending = []
        else:
            draft_pending = [*draft_pending, token]
        logits = main_cache.step(main, mx.array([[token, *proposals]], dtype=mx.int64), evaluate=True)
        stats.main_calls += 1
        main_probs = distribution(logits[0])
        key, sub = mx.random.split(key)
        if proposals:
            kept, following = verify(mx.array(proposals), mx.stack(draft_probs), main_probs, sub)
        else:
            kept, following = 0, mx.random.categorical(mx.log(main_probs[0]), key=sub)
        stats.drafted += len(proposals)
        stats.accepted += kept
        # The main model read `token` and every proposal: keep `token` and the kept ones.
        _take_back(main_cache, len(proposals) - kept)
        if proposals:
            # The draft read `token` and every proposal but the last: keep what was agreed.
            if kept == len(proposals):
                draft_pending = proposals[-1:]
            else:
                _take_back(draft_cache, len(proposals) - 1 - kept)
        following_token = int(following.item())  # pyright: ignore[reportArgumentType] (an int64 array)
        for value in [*proposals[:kept], following_token]:
            produced += 1
            yield value
            if done(value):
                return
        token = following_token


def _take_back(cache: StepCache, count: int) -> None:
    if count and cache.trim(count) != count:
        raise RuntimeError(f"a {type(cache).__name__} could not take back {count} tokens")
