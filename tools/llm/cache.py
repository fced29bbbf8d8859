"""The cache of a generation, one class per policy, as mlx-lm's `mlx_lm/models/cache.py`
has them, driven by one loop (`generation.stream_tokens`, `speculative.py`):

- `FixedCache`: the fixed-capacity program's slots, grown by `CACHE_CHUNK` at a time;
- `GrowingCache`: the growing program's keys and values, grown by its concatenation;
- `RotatingCache`: a growing cache cut back to its first `keep` and most recent tokens
  (mlx-lm's `RotatingKVCache`), so generation goes past the program's context;
- `QuantizedCache`: a growing cache held quantized between steps (mlx-lm's
  `QuantizedKVCache`, `kv_quantization.py`);
- `RecurrentCache`: a state-space program's states beside its fixed slots, one token
  per call.

Each names the program variant it takes (`check`, `load_options`), builds a call's
inputs after `input_ids` (`inputs`), takes the call's cache outputs (`update`), says
how many more tokens fit (`room`), can be cut back (`trim`) and saved (`state`,
`meta_state`, `from_state`: `prompt_cache.py`). `make_cache` picks the class a
`GenerationConfig` asks for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from mlxir.tools.llm.kv_quantization import QuantizedKV

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.tools.llm.compile import CompiledLLM
    from mlxir.tools.llm.config import GenerationConfig


CACHE_CHUNK = 32
"""A fixed cache grows by this many slots at a time: its shape, and with it the decode
step's input signature, changes once per chunk (a new trace). Attention runs over every
slot, so a smaller chunk wastes less work on empty ones: over 64 greedy steps after a
128-token prompt, 32 against 256 took 28.5 against 31.9 ms/token on the 56M Llama
(f32, median of 5 rounds in one process) and 4.2 against 5.5 on the small one at vocab
512. mlx-lm allocates 256 at a time but attends only to the filled slots, which a
program with static shapes cannot."""

ROTATING_KEEP = 4
"""The first tokens a rotating cache keeps (mlx-lm's `RotatingKVCache` default)."""


class CacheError(ValueError):
    """A cache that cannot serve this program or this call (one line, the reason)."""


class StepCache:
    """What the generate loop holds between calls of a step program: `offset` tokens
    read so far (pads included) by `batch` rows, each left-padded by `left_padding`
    tokens."""

    load_options: ClassVar[dict[str, Any]] = {}
    """What `compile.load` needs to compile the program this cache takes."""
    max_step: int | None = None
    """The most tokens one call reads (None: any)."""
    offset: int

    def __init__(self, llm: CompiledLLM, batch: int = 1, left_padding: Sequence[int] = ()) -> None:
        self.batch = batch
        self.left_padding = list(left_padding) or [0] * batch
        self.offset = 0
        self.kv_shapes = llm.kv_shapes
        self.kv_dtype = llm.kv_dtype
        self.check(llm)

    def check(self, llm: CompiledLLM) -> None:
        """Raises `CacheError` unless `llm`'s program takes this cache."""
        raise NotImplementedError

    def inputs(self, tokens: mx.array) -> list[mx.array]:
        """The inputs after `input_ids` of the call that reads `tokens` `[B, S]`."""
        raise NotImplementedError

    def update(self, read: int, outputs: Sequence[mx.array]) -> None:
        """Takes the cache outputs of the call that read `read` tokens per row."""
        raise NotImplementedError

    @property
    def arrays(self) -> list[mx.array]:
        """The arrays held, to evaluate with a step's logits."""
        raise NotImplementedError

    def room(self, llm: CompiledLLM) -> int | None:
        """How many more tokens `llm`'s program can read into this cache (None: no
        bound)."""
        return None

    def is_trimmable(self) -> bool:
        return True

    def trim(self, count: int) -> int:
        """Forgets the last `count` tokens read (at most `offset`); returns how many."""
        raise NotImplementedError

    def step(self, llm: CompiledLLM, tokens: mx.array, *, evaluate: bool = False) -> mx.array:
        """One call of `llm`'s program on `tokens` `[B, S]`: its logits (lazy unless
        `evaluate`), the cache updated."""
        outputs = llm.program.call_flat(tokens, *self.inputs(tokens), evaluate=evaluate)
        self.update(int(tokens.shape[1]), outputs[1:])
        return outputs[0]

    def padding_mask(self, length: int) -> mx.array:
        """`[B, length]` int64: 0 at each row's left padding, 1 after it."""
        import mlx.core as mx

        pads = mx.array(self.left_padding, dtype=mx.int64)
        return (mx.arange(length)[None, :] >= pads[:, None]).astype(mx.int64)

    def positions(self) -> mx.array:
        """Each row's position of the next token read (`position_offset`)."""
        import mlx.core as mx

        return self.offset - mx.array(self.left_padding, dtype=mx.int64)

    @property
    def state(self) -> list[mx.array]:
        """The arrays a prompt cache file saves (one row, no padding)."""
        return self.arrays

    @property
    def meta_state(self) -> dict[str, str]:
        return {"offset": str(self.offset)}

    @classmethod
    def from_state(cls, llm: CompiledLLM, state: Sequence[mx.array], meta_state: dict[str, str]) -> StepCache:
        """The cache `state` and `meta_state` saved, for `llm`'s program (`CacheError`
        unless it takes it)."""
        cache = cls(llm, **cls._options(meta_state))
        cache.restore(list(state))
        cache.offset = int(meta_state["offset"])
        return cache

    @classmethod
    def _options(cls, meta_state: dict[str, str]) -> dict[str, Any]:
        return {}

    def restore(self, state: list[mx.array]) -> None:
        raise NotImplementedError

    def _check_arrays(self, kv: Sequence[mx.array], what: str = "cache") -> None:
        found = [(int(t.shape[1]), int(t.shape[3])) if t.ndim == 4 else (0, 0) for t in kv]
        self._check_layout(found, [_dtype_name(t) for t in kv], what)

    def _check_layout(self, found: list[tuple[int, int]], dtypes: list[str], what: str) -> None:
        """Raises `CacheError` unless `found` (heads, head dimension) and `dtypes` per
        cache tensor are the program's."""
        expected = list(self.kv_shapes)
        if found != expected or any(dtype != self.kv_dtype for dtype in dtypes):
            raise CacheError(
                f"this {what} was made with another model ({len(found)} cache tensors of heads x dims "
                f"{sorted(set(found))}, where this program's are {len(expected)} of {sorted(set(expected))})"
            )


def _dtype_name(array: mx.array) -> str:
    return str(array.dtype).split(".")[-1]


class GrowingCache(StepCache):
    """The growing program's keys and values, `[B, heads, offset, head_dim]`, which
    each call returns longer. The program with the mask takes left-padded rows; the one
    without takes unpadded rows."""

    def __init__(self, llm: CompiledLLM, batch: int = 1, left_padding: Sequence[int] = ()) -> None:
        self.with_mask = llm.with_mask
        super().__init__(llm, batch, left_padding)
        self.kv = llm.empty_cache(batch)

    def check(self, llm: CompiledLLM) -> None:
        if llm.cache != "growing":
            raise CacheError(f"a {type(self).__name__} takes the growing program; this one's cache is {llm.cache}")
        if not llm.with_mask and any(self.left_padding):
            raise CacheError("this program was exported without attention_mask: it cannot take padding")

    def _mask_inputs(self, tokens: mx.array) -> list[mx.array]:
        if not self.with_mask:
            return []
        return [self.padding_mask(self.offset + int(tokens.shape[1])), self.positions()]

    def inputs(self, tokens: mx.array) -> list[mx.array]:
        return [*self._mask_inputs(tokens), *self.kv]

    def update(self, read: int, outputs: Sequence[mx.array]) -> None:
        self.kv = list(outputs)
        self.offset += read

    @property
    def arrays(self) -> list[mx.array]:
        return self.kv

    def room(self, llm: CompiledLLM) -> int | None:
        context = llm.context_limit
        return None if context is None else context - self.offset

    def trim(self, count: int) -> int:
        count = min(self.offset, count)
        self.offset -= count
        self.kv = [t[:, :, : self.offset] for t in self.kv]
        return count

    def restore(self, state: list[mx.array]) -> None:
        self._check_arrays(state, "prompt cache")
        self.kv = state


class FixedCache(StepCache):
    """The fixed-capacity program's slots: the first `offset` written, the rest masked
    by causality until written; whole chunks of `CACHE_CHUNK` slots are added as a call
    needs them, up to the program's `max_capacity`."""

    kind = "fixed"
    capacity = 0
    """The slots the attention mask covers (those of `kv`; a Mamba program has none)."""

    def __init__(self, llm: CompiledLLM, batch: int = 1, left_padding: Sequence[int] = ()) -> None:
        super().__init__(llm, batch, left_padding)
        self.limit = llm.max_capacity
        self.kv = llm.empty_cache(batch)[: llm.kv_count]

    def check(self, llm: CompiledLLM) -> None:
        if llm.cache != self.kind:
            raise CacheError(f"a {type(self).__name__} takes the {self.kind} program; this one's cache is {llm.cache}")

    def _grown(self, stop: int) -> None:
        import mlx.core as mx

        slots = int(self.kv[0].shape[2]) if self.kv else self.capacity
        if stop > slots:
            wanted = -(-stop // CACHE_CHUNK) * CACHE_CHUNK
            slots = wanted if self.limit is None else max(stop, min(wanted, self.limit))
            self.kv = [mx.pad(t, [(0, 0), (0, 0), (0, slots - t.shape[2]), (0, 0)]) for t in self.kv]
        self.capacity = slots

    def inputs(self, tokens: mx.array) -> list[mx.array]:
        import mlx.core as mx

        self._grown(self.offset + int(tokens.shape[1]))
        past = mx.array(self.offset, dtype=mx.int64)
        return [self.padding_mask(self.capacity), self.positions(), past, *self.kv]

    def update(self, read: int, outputs: Sequence[mx.array]) -> None:
        self.kv = list(outputs[: len(self.kv)])
        self.offset += read

    @property
    def arrays(self) -> list[mx.array]:
        return self.kv

    def room(self, llm: CompiledLLM) -> int | None:
        return None if self.limit is None else self.limit - self.offset

    def trim(self, count: int) -> int:
        # The slots after `offset` are masked by causality until written again.
        count = min(self.offset, count)
        self.offset -= count
        return count

    def restore(self, state: list[mx.array]) -> None:
        self._check_arrays(state, "prompt cache")
        self.kv = state
        self.capacity = int(state[0].shape[2]) if state else 0


class RecurrentCache(FixedCache):
    """A state-space program's recurrent states (a convolution window and a scan state
    per state-space layer) after its attention layers' fixed slots. One token per call:
    a left-padded row keeps its states through its pads, so its scan starts at its first
    real token, as transformers' prefill masks the pads out."""

    kind = "recurrent"
    max_step = 1

    def __init__(self, llm: CompiledLLM, batch: int = 1, left_padding: Sequence[int] = ()) -> None:
        super().__init__(llm, batch, left_padding)
        self.states = llm.empty_cache(batch)[llm.kv_count :]

    def inputs(self, tokens: mx.array) -> list[mx.array]:
        return [*super().inputs(tokens), *self.states]

    def update(self, read: int, outputs: Sequence[mx.array]) -> None:
        import mlx.core as mx

        real = mx.array([self.offset >= pads for pads in self.left_padding])
        new_states = outputs[len(self.kv) :]
        self.states = [
            mx.where(mx.reshape(real, (-1, *([1] * (new.ndim - 1)))), new, old)
            for new, old in zip(new_states, self.states)
        ]
        super().update(read, outputs)

    @property
    def arrays(self) -> list[mx.array]:
        return [*self.kv, *self.states]

    def is_trimmable(self) -> bool:
        return False

    def trim(self, count: int) -> int:
        return 0  # a scan state cannot be taken back

    def restore(self, state: list[mx.array]) -> None:
        attention = len(self.kv)
        super().restore(state[:attention])
        shapes = [tuple(t.shape[1:]) for t in state[attention:]]
        if shapes != [tuple(t.shape[1:]) for t in self.states]:
            raise CacheError(f"this prompt cache's recurrent states are {shapes}, not this program's")
        self.states = state[attention:]


class RotatingCache(GrowingCache):
    """A growing cache of at most `max_size` tokens (mlx-lm's `RotatingKVCache`): after
    each call it keeps its first `keep` tokens and the most recent ones, positions
    counting on, so generation goes on past the program's context. A prompt longer than
    `max_size` is read in calls of at most `max_size` tokens, each attending to the
    cache kept so far; it takes the growing program with positions, one unpadded row."""

    load_options: ClassVar[dict[str, Any]] = {"positions": True}

    def __init__(self, llm: CompiledLLM, batch: int = 1, left_padding: Sequence[int] = (), *, max_size: int, keep: int = ROTATING_KEEP) -> None:
        self.max_size, self.keep = max_size, keep
        super().__init__(llm, batch, left_padding)

    @property
    def max_step(self) -> int | None:  # pyright: ignore[reportIncompatibleVariableOverride] (a property where the base has a class attribute)
        return self.max_size

    def check(self, llm: CompiledLLM) -> None:
        if llm.cache != "growing" or not llm.with_mask:
            raise CacheError(
                "a rotating cache (max_kv_size) takes the growing program with positions: load(..., positions=True)"
            )
        if self.batch != 1 or any(self.left_padding):
            raise CacheError("a rotating cache (max_kv_size) takes one unpadded row")
        if not 0 <= self.keep < self.max_size:
            raise CacheError(f"max_kv_size must be more than the {self.keep} tokens it keeps, got {self.max_size}")
        context = llm.context_limit
        if context is not None and self.max_size >= context:
            raise CacheError(f"max_kv_size must be below this program's context of {context} tokens, got {self.max_size}")

    def inputs(self, tokens: mx.array) -> list[mx.array]:
        import mlx.core as mx

        held = int(self.kv[0].shape[2])
        window = mx.ones((1, held + int(tokens.shape[1])), dtype=mx.int64)
        return [window, mx.array([self.offset], dtype=mx.int64), *self.kv]

    def update(self, read: int, outputs: Sequence[mx.array]) -> None:
        import mlx.core as mx

        kv = list(outputs)
        held = int(kv[0].shape[2])
        if held > self.max_size:
            recent = self.max_size - self.keep
            kv = [mx.concatenate([t[:, :, : self.keep], t[:, :, held - recent :]], axis=2) for t in kv]
        self.kv = kv
        self.offset += read

    def room(self, llm: CompiledLLM) -> int | None:
        return None

    def is_trimmable(self) -> bool:
        return self.offset <= self.max_size  # nothing dropped yet

    def trim(self, count: int) -> int:
        if not self.is_trimmable():
            return 0
        return super().trim(count)

    @property
    def meta_state(self) -> dict[str, str]:
        return {**super().meta_state, "max_size": str(self.max_size), "keep": str(self.keep)}

    @classmethod
    def _options(cls, meta_state: dict[str, str]) -> dict[str, Any]:
        return {"max_size": int(meta_state["max_size"]), "keep": int(meta_state["keep"])}


class QuantizedCache(GrowingCache):
    """A growing cache held quantized between calls (`kv_quantization.QuantizedKV`:
    `bits` per value, in groups of `group_size` along the head dimension); each call
    reads it dequantized and its new slots are quantized once."""

    def __init__(self, llm: CompiledLLM, batch: int = 1, left_padding: Sequence[int] = (), *, bits: int, group_size: int = 64) -> None:
        self.quantized = QuantizedKV(bits, group_size)
        super().__init__(llm, batch, left_padding)
        self.empty = self.kv

    def check(self, llm: CompiledLLM) -> None:
        super().check(llm)
        self.quantized.check([d for _, d in llm.kv_shapes])

    def inputs(self, tokens: mx.array) -> list[mx.array]:
        return [*self._mask_inputs(tokens), *self.quantized.dequantized(self.empty)]

    def update(self, read: int, outputs: Sequence[mx.array]) -> None:
        self.quantized.append(outputs)
        self.offset += read

    @property
    def arrays(self) -> list[mx.array]:
        return self.quantized.arrays()

    def trim(self, count: int) -> int:
        count = min(self.offset, count)
        self.offset -= count
        self.quantized.cut(self.offset)
        return count

    @property
    def meta_state(self) -> dict[str, str]:
        return {
            **super().meta_state,
            "bits": str(self.quantized.bits),
            "group_size": str(self.quantized.group_size),
        }

    @classmethod
    def _options(cls, meta_state: dict[str, str]) -> dict[str, Any]:
        return {"bits": int(meta_state["bits"]), "group_size": int(meta_state["group_size"])}

    def restore(self, state: list[mx.array]) -> None:
        if len(state) != 3 * len(self.empty):
            raise CacheError(f"this prompt cache holds {len(state) // 3} quantized cache tensors, where this program has {len(self.empty)}")
        parts = [(state[i], state[i + 1], state[i + 2]) for i in range(0, len(state), 3)]
        # A scale per `group_size` dimensions, in the keys' and values' dtype.
        group = self.quantized.group_size
        found = [(int(scales.shape[1]), int(scales.shape[3]) * group) for _, scales, _ in parts]
        self._check_layout(found, [_dtype_name(scales) for _, scales, _ in parts], "prompt cache")
        self.quantized.parts = parts
        self.quantized.dtypes = [t.dtype for t in self.empty]
        self.quantized.slots = int(parts[0][0].shape[2]) if parts else 0


CACHE_CLASSES: dict[str, type[StepCache]] = {
    cls.__name__: cls for cls in (FixedCache, GrowingCache, RotatingCache, QuantizedCache, RecurrentCache)
}
"""The classes a prompt cache file may name."""


def cache_class(llm_cache: str, max_kv_size: int | None = None, kv_bits: int | None = None) -> type[StepCache]:
    """The class of the cache a config asks for (`max_kv_size`: rotating, `kv_bits`:
    quantized) on a program whose cache is `llm_cache` ("fixed", "growing" or
    "recurrent")."""
    if max_kv_size is not None:
        return RotatingCache
    if kv_bits is not None:
        return QuantizedCache
    return {"fixed": FixedCache, "recurrent": RecurrentCache}.get(llm_cache, GrowingCache)


def make_cache(llm: CompiledLLM, config: GenerationConfig, batch: int = 1, left_padding: Sequence[int] = ()) -> StepCache:
    """The empty cache `config` asks for, for `batch` rows of `llm`'s program
    (`CacheError` unless the program takes it)."""
    options: dict[str, Any] = {}
    if config.max_kv_size is not None:
        options = {"max_size": config.max_kv_size, "keep": config.keep}
    elif config.kv_bits is not None:
        options = {"bits": config.kv_bits, "group_size": config.kv_group_size}
    return cache_class(llm.cache, config.max_kv_size, config.kv_bits)(llm, batch, left_padding, **options)
