"""Prompt caches (mlx_lm's `cache_prompt` and `--prompt-cache-file`): the keys and
values of a prompt's tokens, computed once and saved, so a generation that starts with
that prompt reads only what follows it. Generating from a cache plus new tokens gives
the tokens the whole prompt would give (`tests/test_generate.py`).

The file is MLX safetensors: one array per cache tensor (`kv0`, `kv1`, ...) and, in
its metadata, the prompt's token ids, the model it was made with and the cache's layout
(checked when a generation reads it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.tools.llm.compile import CompiledLLM

FORMAT = "mlxir-prompt-cache-1"


class PromptCacheError(ValueError):
    """A prompt cache file that cannot serve this program (or is not one)."""


@dataclass
class PromptCache:
    tokens: list[int]
    """The prompt the cache holds."""
    kv: list[mx.array]
    """The step program's cache after reading `tokens` (batch 1)."""
    model: str = ""
    """What the cache was made with (a folder or a program), for `generate` to load."""

    def save(self, path: str | Path) -> None:
        import mlx.core as mx

        metadata = {
            "format": FORMAT,
            "tokens": json.dumps(self.tokens),
            "model": self.model,
            "layout": json.dumps(_layout(self.kv)),
        }
        mx.save_safetensors(str(path), {f"kv{i}": t for i, t in enumerate(self.kv)}, metadata=metadata)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves its metadata parameter unannotated)

    @classmethod
    def load(cls, path: str | Path) -> PromptCache:
        import mlx.core as mx

        try:
            arrays, metadata = cast("tuple[dict[str, mx.array], dict[str, str]]", mx.load(str(path), return_metadata=True))
        except Exception as error:  # MLX raises RuntimeError/ValueError for unreadable files
            raise PromptCacheError(f"'{path}' is not a prompt cache file ({error})") from None
        if metadata.get("format") != FORMAT:
            raise PromptCacheError(f"'{path}' is not an mlxir prompt cache (written by `mlxir cache-prompt`)")
        kv = [arrays[f"kv{i}"] for i in range(len(arrays))]
        return cls(tokens=[int(t) for t in json.loads(metadata["tokens"])], kv=kv, model=metadata.get("model", ""))

    def check(self, llm: CompiledLLM) -> None:
        """Raises `PromptCacheError` unless `llm` can continue from this cache."""
        if llm.cache != "growing" or llm.with_mask:
            raise PromptCacheError("a prompt cache continues a growing-cache program without a mask (what llm.load compiles)")
        expected = [(h, d) for h, d in llm.kv_shapes]
        found = [(int(t.shape[1]), int(t.shape[3])) for t in self.kv]
        if found != expected or any(str(t.dtype).split(".")[-1] != llm.kv_dtype for t in self.kv):
            raise PromptCacheError(
                f"this prompt cache was made with another model ({len(found)} cache tensors of heads x dims "
                f"{sorted(set(found))}, where this program's are {len(expected)} of {sorted(set(expected))})"
            )


def _layout(kv: Sequence[mx.array]) -> list[list[int | str]]:
    return [[*map(int, t.shape), str(t.dtype).split(".")[-1]] for t in kv]


def make_prompt_cache(llm: CompiledLLM, tokens: Sequence[int], model: str = "") -> PromptCache:
    """The cache of `llm`'s program after reading `tokens` (one call)."""
    import mlx.core as mx

    if not tokens:
        raise ValueError("the prompt is empty: give at least one token")
    probe = PromptCache(list(tokens), [], model)
    if llm.cache != "growing" or llm.with_mask:
        probe.check(llm)
    context = llm.context_limit
    if context is not None and len(tokens) > context:
        raise ValueError(f"the prompt has {len(tokens)} tokens: this program's context holds {context}")
    _, kv = llm.step(mx.array([list(tokens)], dtype=mx.int64), llm.empty_cache(1))
    mx.eval(*kv)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
    return PromptCache(list(tokens), kv, model)
