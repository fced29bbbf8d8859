"""Prompt caches (mlx_lm's `cache_prompt` and `--prompt-cache-file`): a generation's
cache (`cache.py`) after a prompt's tokens, computed once and saved, as mlx-lm's
`save_prompt_cache`/`load_prompt_cache` save its cache objects, so a generation that
starts with that prompt reads only what follows it. Generating from a cache plus new
tokens gives the tokens the whole prompt would give (`tests/test_generate.py`).

The file is MLX safetensors, at exactly the name given (MLX itself would add
`.safetensors`): one array per saved cache array (`a0`, `a1`, ...) and, in its
metadata, the cache's class and meta state, the prompt's token ids and the model it
was made with (checked when a generation reads it)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mlxir.tools.llm.cache import CACHE_CLASSES, CacheError, GrowingCache, StepCache, make_cache

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.tools.llm.compile import CompiledLLM
    from mlxir.tools.llm.config import GenerationConfig

FORMAT = "mlxir-prompt-cache-2"
FIRST_FORMAT = "mlxir-prompt-cache-1"
"""Growing caches only, as `kv0`, `kv1`, ...: still read."""


class PromptCacheError(CacheError):
    """A prompt cache file that cannot serve this program (or is not one)."""


@dataclass
class PromptCache:
    tokens: list[int]
    """The prompt the cache holds."""
    state: list[mx.array]
    """The saved cache's arrays (`StepCache.state`, one row)."""
    kind: str = GrowingCache.__name__
    """The saved cache's class (`cache.CACHE_CLASSES`)."""
    meta_state: dict[str, str] = field(default_factory=dict[str, str])
    model: str = ""
    """What the cache was made with (a folder or a program), for `generate` to load."""

    @classmethod
    def of(cls, tokens: Sequence[int], cache: StepCache, model: str = "") -> PromptCache:
        """The prompt cache of `cache` after reading `tokens`."""
        return cls(list(tokens), cache.state, type(cache).__name__, cache.meta_state, model)

    def describe(self) -> str:
        """The cache in words, for errors: "a RotatingCache of 64 tokens"."""
        size = self.meta_state.get("max_size")
        bits = self.meta_state.get("bits")
        return f"a {self.kind}" + (f" of {size} tokens" if size else "") + (f" of {bits} bits" if bits else "")

    def cache_for(self, llm: CompiledLLM, config: GenerationConfig | None = None) -> StepCache:
        """A cache that goes on from this one on `llm`'s program; `PromptCacheError`
        unless the program takes it and `config`'s cache options are the saved ones
        (or not given)."""
        cls = CACHE_CLASSES.get(self.kind)
        if cls is None:
            raise PromptCacheError(f"this prompt cache holds a {self.kind}, which this mlxir does not know")
        if config is not None:
            self.check_options(config)
        try:
            return cls.from_state(llm, self.state, self.meta_state)
        except CacheError as error:
            raise PromptCacheError(f"this prompt cache holds {self.describe()}, which this program cannot continue: {error}") from None

    def check_options(self, config: GenerationConfig) -> None:
        """Raises `PromptCacheError` unless `config`'s cache options (`max_kv_size`,
        `kv_bits`) are the saved cache's, or not given."""
        asked = {
            "max_size": config.max_kv_size,
            "keep": config.keep if config.max_kv_size is not None else None,
            "bits": config.kv_bits,
            "group_size": config.kv_group_size if config.kv_bits is not None else None,
        }
        for name, value in asked.items():
            if value is not None and self.meta_state.get(name) != str(value):
                raise PromptCacheError(
                    f"this prompt cache holds {self.describe()}: generate from it with the cache options "
                    "it was made with (max_kv_size, kv_bits), or without any"
                )

    @property
    def load_options(self) -> dict[str, Any]:
        """What `compile.load` needs to compile a program that continues this cache."""
        cls = CACHE_CLASSES.get(self.kind)
        return dict(cls.load_options) if cls is not None else {}

    def check(self, llm: CompiledLLM) -> None:
        """Raises `PromptCacheError` unless `llm` can continue from this cache."""
        self.cache_for(llm)

    def save(self, path: str | Path) -> Path:
        """Writes the file at `path`, exactly (returned)."""
        import mlx.core as mx

        path = Path(path)
        metadata = {
            "format": FORMAT,
            "cache": self.kind,
            "meta_state": json.dumps(self.meta_state),
            "tokens": json.dumps(self.tokens),
            "model": self.model,
        }
        # MLX adds `.safetensors` to a name without it: write such a name, then rename it.
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial.safetensors")
        mx.save_safetensors(str(partial), {f"a{i}": t for i, t in enumerate(self.state)}, metadata=metadata)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves its metadata parameter unannotated)
        partial.replace(path)
        return path

    @staticmethod
    def locate(path: str | Path) -> Path | None:
        """The file a prompt cache named `path` is in: `path`, or `path.safetensors`
        where an older mlxir wrote it (None: neither exists)."""
        path = Path(path)
        older = path.with_name(path.name + ".safetensors")
        return path if path.is_file() else older if older.is_file() else None

    @classmethod
    def load(cls, path: str | Path) -> PromptCache:
        import mlx.core as mx

        found = cls.locate(path)
        if found is None:
            raise PromptCacheError(f"'{path}': no such prompt cache file")
        try:
            loaded = mx.load(str(found), format="safetensors", return_metadata=True)
            arrays, metadata = cast("tuple[dict[str, mx.array], dict[str, str]]", loaded)
        except Exception as error:  # MLX raises RuntimeError/ValueError for unreadable files
            raise PromptCacheError(f"'{path}' is not a prompt cache file ({error})") from None
        tokens = [int(t) for t in json.loads(metadata.get("tokens", "[]"))]
        model = metadata.get("model", "")
        if metadata.get("format") == FIRST_FORMAT:
            state = [arrays[f"kv{i}"] for i in range(len(arrays))]
            return cls(tokens, state, GrowingCache.__name__, {"offset": str(len(tokens))}, model)
        if metadata.get("format") != FORMAT:
            raise PromptCacheError(f"'{path}' is not an mlxir prompt cache (written by `mlxir cache-prompt`)")
        state = [arrays[f"a{i}"] for i in range(len(arrays))]
        meta_state = cast(dict[str, str], json.loads(metadata["meta_state"]))
        return cls(tokens, state, metadata["cache"], meta_state, model)


def make_prompt_cache(
    llm: CompiledLLM, tokens: Sequence[int], model: str = "", config: GenerationConfig | None = None
) -> PromptCache:
    """The cache `config` asks for (`max_kv_size`, `kv_bits`; else the program's own)
    after `llm`'s program has read `tokens` (in calls of `prefill_chunk` tokens)."""
    import mlx.core as mx

    from mlxir.tools.llm.config import GenerationConfig
    from mlxir.tools.llm.generation import prefill

    if not tokens:
        raise ValueError("the prompt is empty: give at least one token")
    config = (config or GenerationConfig()).check()
    cache = make_cache(llm, config)
    room = cache.room(llm)
    if room is not None and len(tokens) > room:
        raise ValueError(f"the prompt has {len(tokens)} tokens: this program's context holds {room}")
    prefill(llm, cache, mx.array([list(tokens)], dtype=mx.int64), config.prefill_chunk)
    return PromptCache.of(tokens, cache, model)
