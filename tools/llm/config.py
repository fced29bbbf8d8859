"""`GenerationConfig`: what a generation is asked for (sampling, stopping, the cache,
a draft model), checked in one place (`check`) for the library and `mlxir generate`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlxir.tools.llm.cache import ROTATING_KEEP
from mlxir.tools.llm.kv_quantization import KV_BITS, KV_GROUP_SIZES

if TYPE_CHECKING:
    import mlx.core as mx

Sampler = Callable[["mx.array"], "mx.array"]
LogitsProcessor = Callable[["mx.array", "mx.array"], "mx.array"]


class GenerationConfigError(ValueError):
    """A value or a combination a generation does not take (one line, the reason)."""


FLAGS = {
    "max_new_tokens": "--max-tokens",
    "temperature": "--temp",
    "top_k": "--top-k",
    "top_p": "--top-p",
    "min_p": "--min-p",
    "seed": "--seed",
    "max_kv_size": "--max-kv-size",
    "kv_bits": "--kv-bits",
    "kv_group_size": "--kv-group-size",
    "speculative": "--draft-model",
    "num_draft_tokens": "--num-draft-tokens",
    "sampler": "a sampler",
    "logits_processors": "logits processors",
}
"""What `mlxir generate` calls each field (`GenerationConfig.check(flags=True)`)."""


@dataclass(frozen=True)
class GenerationConfig:
    """What a generation is asked for, checked once (`check`) by the library
    (`stream_tokens`, `stream_generate`) and the CLI alike.

    `sampler` (mlx-lm's shape: logits `[B, V]` in, tokens out) replaces the built-in
    one (`do_sample`, `temperature`, `top_k`, `top_p`, `min_p`, from `seed`); each of
    `logits_processors` (the tokens so far `[B, T]`, logits) rewrites the logits first.
    The cache (`cache.py`): `max_kv_size` rotates it (`RotatingCache`, keeping the
    first `keep` tokens), `kv_bits` holds it quantized (`QuantizedCache`, groups of
    `kv_group_size`), else it is the program's own. `speculative`: a draft model
    proposes `num_draft_tokens` at a time (`speculative.py`)."""

    max_new_tokens: int = 32
    do_sample: bool = False
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    seed: int = 0
    eos_token_id: int | Sequence[int] | None = None
    pad_token_id: int = 0
    prefill_chunk: int | None = None
    sampler: Sampler | None = None
    logits_processors: Sequence[LogitsProcessor] = ()
    max_kv_size: int | None = None
    keep: int = ROTATING_KEEP
    kv_bits: int | None = None
    kv_group_size: int = 64
    speculative: bool = False
    num_draft_tokens: int = 3

    def check(self, *, flags: bool = False) -> GenerationConfig:
        """Returns the config, or raises `GenerationConfigError` naming the first value
        or combination it does not take and why; `flags`: named as `mlxir generate`'s
        flags."""

        def name(field: str) -> str:
            return FLAGS.get(field, field) if flags else field

        def between(value: float, low: float, high: float) -> bool:
            return low <= value <= high

        seed_ok = between(self.seed, 0, 2**64 - 1)
        checks = [
            (self.max_new_tokens >= -1, f"{name('max_new_tokens')} must be -1 (no limit) or at least 0, not {self.max_new_tokens}"),
            (not self.do_sample or self.temperature >= 0, f"{name('temperature')} must be 0 (greedy) or positive, not {self.temperature}"),
            (0 < self.top_p <= 1, f"{name('top_p')} must be in (0, 1], not {self.top_p}"),
            (between(self.min_p, 0, 1), f"{name('min_p')} must be in [0, 1], not {self.min_p}"),
            (self.top_k >= 0, f"{name('top_k')} must be 0 (all tokens) or positive, not {self.top_k}"),
            (seed_ok, f"{name('seed')} must be an integer in [0, 2**64 - 1], not {self.seed}"),
            (self.prefill_chunk is None or self.prefill_chunk >= 1, f"{name('prefill_chunk')} must be at least 1, not {self.prefill_chunk}"),
            (self.num_draft_tokens >= 1, f"{name('num_draft_tokens')} must be at least 1, not {self.num_draft_tokens}"),
            (
                self.kv_bits is None or (self.kv_bits in KV_BITS and self.kv_group_size in KV_GROUP_SIZES),
                f"{name('kv_bits')} takes {', '.join(map(str, KV_BITS))} and {name('kv_group_size')} "
                f"{', '.join(map(str, KV_GROUP_SIZES))}, not {self.kv_bits} and {self.kv_group_size}",
            ),
            (
                self.max_kv_size is None or 0 <= self.keep < self.max_kv_size,
                f"{name('max_kv_size')} must be more than the {self.keep} first tokens it keeps, not {self.max_kv_size}",
            ),
            # What stays impossible, and why.
            (
                self.max_kv_size is None or self.kv_bits is None,
                f"{name('kv_bits')} and {name('max_kv_size')} do not combine: a rotating cache is not held "
                "quantized (nor is mlx-lm's RotatingKVCache)",
            ),
            (
                not self.speculative or self.max_kv_size is None,
                f"{name('speculative')} takes back the proposals it rejects by trimming the cache, which a "
                f"rotating cache ({name('max_kv_size')}) cannot do once it has dropped tokens",
            ),
            (
                not self.speculative or self.sampler is None,
                f"{name('speculative')} samples by comparing the draft's and the main model's distributions "
                "(temperature, top-k, top-p, min-p), which a sampler callable does not give",
            ),
            (
                not self.speculative or not self.logits_processors,
                f"{name('speculative')} does not take {name('logits_processors')} here",
            ),
        ]
        for holds, message in checks:
            if not holds:
                raise GenerationConfigError(message)
        return self

    def sampling(self) -> dict[str, Any]:
        """The built-in sampler's options (`sample_next`, `probabilities`)."""
        return {
            "do_sample": self.do_sample,
            "temperature": self.temperature,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "min_p": self.min_p,
        }

    def eos_ids(self) -> set[int]:
        eos = self.eos_token_id
        return set() if eos is None else {int(eos)} if isinstance(eos, int) else {int(t) for t in eos}

    def load_options(self) -> dict[str, Any]:
        """What `compile.load` needs to compile the program this config runs on (a
        folder compiles to a growing program, or to a recurrent one by itself)."""
        from mlxir.tools.llm.cache import cache_class

        logits = {"logits": "all"} if self.speculative else {}
        return {**cache_class("growing", self.max_kv_size, self.kv_bits).load_options, **logits}


def mlx_lm_options(options: dict[str, Any]) -> dict[str, Any]:
    """`options` with mlx-lm's names (`max_tokens`, `temp`: 0 is greedy) as
    `GenerationConfig`'s fields."""
    renamed = dict(options)
    if "max_tokens" in renamed:
        renamed["max_new_tokens"] = renamed.pop("max_tokens")
    if "temp" in renamed:
        temp = renamed.pop("temp")
        renamed.update(do_sample=temp != 0, temperature=temp if temp != 0 else 1.0)
    return renamed


def configured(config: GenerationConfig | None, options: dict[str, Any]) -> GenerationConfig:
    """`config` with `options` (its fields, by name) replacing its values, checked."""
    fields = {f.name for f in dataclasses.fields(GenerationConfig)}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise TypeError(f"unexpected generation option(s) {', '.join(unknown)}: see GenerationConfig")
    return dataclasses.replace(config or GenerationConfig(), **options).check()
