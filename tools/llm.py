"""Hugging Face causal LMs on mlxir: export with an explicit KV cache, compile, generate.

    from mlxir.tools import llm

    exported = llm.export_llm(model)                  # torch.export, one program
    compiled = llm.compile_llm(exported)              # mlxir.compile + what generate needs
    tokens = llm.generate(compiled, input_ids, attention_mask, max_new_tokens=32)

The design: ONE program per model serves prefill and decode. Its signature is

    step(input_ids[B, S], attention_mask[B, P+S], position_offset[B], kv_0 ... kv_2L-1)
        -> (logits[B, S or 1, V], new_kv_0 ... new_kv_2L-1)

with `kv_2i`/`kv_2i+1` the keys/values of layer i, `[B, kv_heads, P, head_dim]`, and
batch B, prompt length S >= 1 and past length P >= 0 all dynamic. Prefill is the call
with P = 0 (the empty cache, i.e. `[B, H, 0, D]` tensors), decode the call with S = 1,
and chunked prefill anything in between: the graph is the same. Inside, the cache
tensors become a `DynamicCache` whose layers concatenate the new keys/values, exactly
as transformers does, and the program returns the grown cache. `attention_mask=False`
exports the variant without `attention_mask`/`position_offset` (unpadded batches; the
positions are `P .. P+S-1`).

That is the growing cache (`cache="growing"`): every decode step has new shapes. The
default with the mask is the fixed-capacity cache (`cache="fixed"`), as mlx-lm keeps:

    step(input_ids[B, S], attention_mask[B, C], position_offset[B], past_length[],
         kv_0 ... kv_2L-1) -> (logits[B, S or 1, V], written_kv_0 ... written_kv_2L-1)

with `kv_i` `[B, kv_heads, C, head_dim]`, C the capacity. The new keys/values are
written at slots `past_length .. past_length+S-1` (`index_copy`, out of place; MLX
reuses the buffer when the old cache is not referenced any more) and attention runs
over all C slots: transformers' mask hides the slots after each query's own (not yet
written) and the padding the mask marks. The capacity grows by `CACHE_CHUNK` slots
when full, so decode steps repeat one input signature per chunk: the program runs
them as one `mx.compile`d trace (`Program(compile=...)`), and the first trace on a
machine builds MLX's CPU kernels (seconds, once; see `mlxir.runtime.program`).

Positions are `position_offset[b] + t` for the new tokens `t < S` of row `b`: the
model's `position_ids`, built inside the program, so that they provably count up by
one and the rotary embedding fuses into `mx.fast.rope` with a per-row start
(`fuse-rope`). For a left-padded row with `n` pads the offset is `P - n`: its real
tokens get transformers' positions `0, 1, ...`; its pads get negative ones instead of
transformers' 1s. That changes only what is computed at the pads themselves (their
logits and cached keys), which no real token attends to. `stream_tokens` takes
left-padded masks only.

- torch.export needs `prefer_deferred_runtime_asserts_over_guards=True` to accept the
  contiguity guard of the cache `cat`; the deferred asserts are dropped by the importer.
- The attention mask's length is its own symbol (torch.export cannot say `S + P` for an
  input), and its range comes out as `[4, ...]` because torch assumes unspecialized
  sizes are >= 2 when it adds `S + P`; `export_llm` widens it to the real range.
- Sliding-window layers (Gemma 3, Mistral) keep the full cache here: every layer is a
  plain `DynamicLayer` and the sliding window lives in the mask transformers builds
  from positions. The sliding layers' cache is longer than it needs to be but no length
  is ever specialized (transformers' `DynamicSlidingWindowLayer` would be, to the
  window size), and the attention result is the same: the extra keys are masked.
- Grouped-query attention is exported as SDPA with `enable_gqa=True` (MLX's attention
  is grouped-query natively) instead of transformers' `repeat_kv`: the `reshape` of the
  expanded cache collapses strides with `min`, which non-strict export records as
  `torch.sym_min` in a deferred assert (`Min(D*L, kv*D*L) == D*L`, `L = P + S`), and
  ExecuTorch's Edge verifier refuses that node (see `_grouped_query_sdpa`).
- `logits="last"` keeps only the last position's logits (`logits_to_keep=1`): what
  generation needs, and it spares the LM head on the whole prompt.

`generate` keeps the cache as `mx.array`s between steps (the program returns MLX
arrays when given MLX arrays); greedy or sampling with temperature, top-k and top-p
from a seed (`mx.random`). With a left-padded batch, the padded query rows of the
prefill attend to nothing: PyTorch's SDPA gives zeros there, MLX's does not, and only
those rows differ (their logits are never used, their keys/values are always masked).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import mlx.core as mx
    import torch
    from torch.export import ExportedProgram

    from mlxir.runtime.program import CompileMode, Program
    from mlxir.tools.tokenizer import TextTokenizer
    from mlxir.transforms.quantize import Quantize

__all__ = [
    "CompiledLLM",
    "ExportedLLM",
    "compile_llm",
    "export_llm",
    "export_static_llm",
    "generate",
    "sample_next",
    "load",
    "stream_generate",
    "stream_tokens",
]


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------


STEP_SIGNATURE = "input_ids, attention_mask, position_offset, past_length, kv (fixed)"
"""The step program's inputs (part of the compiled-program cache key)."""

CacheKind = Literal["growing", "fixed"]
"""How a step program keeps the KV cache: grown by the program's concatenation at
every call, or a fixed capacity written in place (see the module docstring)."""


@dataclass(frozen=True)
class CacheLayout:
    """The shape of the explicit KV cache: per layer, keys and values of
    `[batch, heads, past, head_dim]` in `dtype`."""

    layers: int
    heads: tuple[int, ...]
    head_dims: tuple[int, ...]
    dtype: torch.dtype

    def empty(self, batch: int, past: int = 0) -> list[torch.Tensor]:
        import torch

        return [
            torch.zeros(batch, h, past, d, dtype=self.dtype)
            for h, d in zip(self.heads, self.head_dims)
            for _ in range(2)
        ]


@dataclass
class ExportedLLM:
    ep: ExportedProgram
    layout: CacheLayout
    with_mask: bool
    logits: Literal["all", "last"]
    export_s: float = 0.0
    limits: dict[str, tuple[int, int]] = field(default_factory=dict)
    cache: CacheKind = "growing"


def cache_layout(model: Any) -> CacheLayout:
    """Reads the cache layout off one eager token through the model (robust to every
    config's way of naming heads and head dims)."""
    import torch
    from transformers import DynamicCache

    cache = DynamicCache()
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 1, dtype=torch.long), cache=cache, use_cache=True)
    keys: list[torch.Tensor] = [layer.keys for layer in cache.layers]  # type: ignore[attr-defined]
    return CacheLayout(
        len(keys),
        tuple(int(k.shape[1]) for k in keys),
        tuple(int(k.shape[3]) for k in keys),
        keys[0].dtype,
    )


@cache
def _step_classes() -> tuple[type, type, type]:
    """The exported modules (with and without the mask, and with the fixed-capacity
    cache): classes of torch's `Module`, built on first use so that generating from a
    cached program never imports torch."""
    import torch
    from transformers.cache_utils import Cache, CacheLayerMixin

    class _FixedLayer(CacheLayerMixin):
        """One layer of the fixed-capacity cache: keys and values `[B, H, C, D]` with
        the first `past_length` slots written; `update` writes the new ones after them
        (out of place: the program returns the written cache) and attends over all C
        slots, the unwritten ones masked by causality (slot > query position)."""

        is_compileable = False
        is_sliding = False

        def __init__(self, keys: torch.Tensor, values: torch.Tensor, past_length: torch.Tensor):
            super().__init__()
            self.keys, self.values, self.past_length = keys, values, past_length
            self.is_initialized = True

        def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
            pass

        def update(
            self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
        ) -> tuple[torch.Tensor, torch.Tensor]:
            assert self.keys is not None and self.values is not None
            slots = self.past_length + torch.arange(key_states.shape[-2])
            self.keys = self.keys.index_copy(2, slots, key_states)
            self.values = self.values.index_copy(2, slots, value_states)
            return self.keys, self.values

        def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
            return self.get_max_length(), 0

        def get_seq_length(self) -> Any:
            return self.past_length

        def get_max_length(self) -> int:
            assert self.keys is not None
            return self.keys.shape[-2]

    class _Step(torch.nn.Module):
        """The exported function: one forward over new tokens with an explicit cache."""

        def __init__(self, model: Any, layers: int, with_mask: bool, last_only: bool):
            super().__init__()
            self.model = model
            self.layers = layers
            self.with_mask = with_mask
            self.logits_to_keep = 1 if last_only else 0

        def _run(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor | None,
            position_ids: torch.Tensor | None,
            kv: Sequence[torch.Tensor],
            past_length: torch.Tensor | None = None,
        ) -> tuple[torch.Tensor, ...]:
            from transformers import DynamicCache

            cache: Cache
            if past_length is not None:
                cache = Cache(
                    layers=[_FixedLayer(kv[2 * i], kv[2 * i + 1], past_length) for i in range(self.layers)]
                )
            else:
                # No config: every layer is a plain DynamicLayer (see the module docstring).
                cache = DynamicCache([(kv[2 * i], kv[2 * i + 1]) for i in range(self.layers)])
            out = self.model(
                input_ids=input_ids,
                attention_mask=attention_mask,
                position_ids=position_ids,
                cache=cache,
                use_cache=True,
                logits_to_keep=self.logits_to_keep,
            )
            new = out.cache if hasattr(out, "cache") else out.past_key_values
            return (out.logits, *[t for layer in new.layers for t in (layer.keys, layer.values)])

    def _positions(input_ids: torch.Tensor, position_offset: torch.Tensor) -> torch.Tensor:
        """Row b's new tokens sit at `position_offset[b], +1, ...` (module docstring)."""
        steps = torch.arange(input_ids.shape[1], dtype=position_offset.dtype)
        return position_offset[:, None] + steps

    class _StepWithMask(_Step):
        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            position_offset: torch.Tensor,
            kv: list[torch.Tensor],
        ) -> tuple[torch.Tensor, ...]:
            return self._run(input_ids, attention_mask, _positions(input_ids, position_offset), kv)

    class _StepNoMask(_Step):
        def forward(self, input_ids: torch.Tensor, kv: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
            return self._run(input_ids, None, None, kv)

    class _StepFixed(_Step):
        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            position_offset: torch.Tensor,
            past_length: torch.Tensor,
            kv: list[torch.Tensor],
        ) -> tuple[torch.Tensor, ...]:
            positions = _positions(input_ids, position_offset)
            return self._run(input_ids, attention_mask, positions, kv, past_length)

    return _StepWithMask, _StepNoMask, _StepFixed


def export_llm(
    model: Any,
    *,
    attention_mask: bool = True,
    logits: Literal["all", "last"] = "all",
    max_batch: int = 64,
    max_seq: int | None = None,
    max_past: int | None = None,
    cache: CacheKind | None = None,
) -> ExportedLLM:
    """Exports `model` (a transformers causal LM with `attn_implementation="sdpa"`) as
    one program for prefill and decode (see the module docstring). `max_seq` and
    `max_past` default to the config's `max_position_embeddings`. `cache`: the
    fixed-capacity cache (the default with the attention mask) or the growing one (the
    only one without it); the fixed cache's capacity is at most `max_seq + max_past`."""
    if cache is None:
        cache = "fixed" if attention_mask else "growing"
    if cache == "fixed" and not attention_mask:
        raise ValueError("the fixed-capacity cache takes the attention mask: attention_mask=True")
    config = model.config
    limit = int(getattr(config, "max_position_embeddings", 4096) or 4096)
    max_seq = max_seq or limit
    max_past = max_past or limit
    layout = cache_layout(model)
    import torch
    from torch.export import Dim, export

    with_mask, no_mask, fixed = _step_classes()
    step_class = fixed if cache == "fixed" else with_mask if attention_mask else no_mask
    step = step_class(model, layout.layers, attention_mask, logits == "last")

    batch, seq, past = 2, 3, 5  # example sizes: none 0 or 1, all different
    ids = torch.randint(0, int(config.get_text_config().vocab_size), (batch, seq))
    kv = layout.empty(batch, past)
    # torch.export keeps one symbol per input for a Dim of range [1, 2] (nothing then
    # says the inputs' batches are equal, and fuse-rope cannot prove it): export with
    # at least 3, then narrow the range to what was asked.
    b = Dim("batch", min=1, max=max(max_batch, 3))
    s = Dim("seq", min=1, max=max_seq)
    p = Dim("past", min=0, max=max_past)
    kv_shapes = [{0: b, 2: p} for _ in kv]
    args: tuple[Any, ...]
    shapes: dict[str, Any]
    if cache == "fixed":
        capacity = Dim("capacity", min=1, max=max_past + max_seq)
        kv = layout.empty(batch, past + seq + 2)  # two slots never written
        mask = torch.ones(batch, past + seq + 2, dtype=torch.long)
        offsets = torch.full((batch,), past, dtype=torch.long)
        args = (ids, mask, offsets, torch.tensor(past), kv)
        shapes = {
            "input_ids": {0: b, 1: s},
            "attention_mask": {0: b, 1: capacity},
            "position_offset": {0: b},
            "past_length": None,
            "kv": [{0: b, 2: capacity} for _ in kv],
        }
    elif attention_mask:
        mask = torch.ones(batch, past + seq, dtype=torch.long)
        offsets = torch.full((batch,), past, dtype=torch.long)
        args = (ids, mask, offsets, kv)
        shapes = {
            "input_ids": {0: b, 1: s},
            "attention_mask": {0: b, 1: Dim.AUTO},
            "position_offset": {0: b},
            "kv": kv_shapes,
        }
    else:
        args = (ids, kv)
        shapes = {"input_ids": {0: b, 1: s}, "kv": kv_shapes}

    start = time.perf_counter()
    with torch.no_grad(), _grouped_query_sdpa():
        ep = export(step, args, dynamic_shapes=shapes, prefer_deferred_runtime_asserts_over_guards=True)
    seconds = time.perf_counter() - start
    if attention_mask and cache != "fixed":
        _set_range(ep, "attention_mask", 1, 1, max_seq + max_past)
    _set_range(ep, "input_ids", 0, 1, max_batch)
    return ExportedLLM(
        ep, layout, attention_mask, logits, seconds,
        {"batch": (1, max_batch), "seq": (1, max_seq), "past": (0, max_past)},
        cache,
    )


@contextlib.contextmanager
def _grouped_query_sdpa() -> Iterator[None]:
    """While exporting: transformers' SDPA attention passes the key/value heads to
    `scaled_dot_product_attention(..., enable_gqa=True)` instead of repeating them with
    `repeat_kv` (its choice, `use_gqa_in_sdpa`, is made for CUDA kernels and says no
    whenever there is a mask). The repeat's `reshape` of the expanded `[B, kv, n, L, D]`
    cache computes the collapsed stride with `min` (torch `_prims._collapse_view_helper`),
    which non-strict export turns into `torch.sym_min`; with `L = P + S` the contiguity
    check after it cannot be decided and becomes a deferred runtime assert over a
    `torch.sym_min` node, which ExecuTorch's Edge verifier refuses (`to_edge` fails).
    The attention computed is the same."""
    try:
        from transformers.integrations import sdpa_attention
    except ImportError:  # no such module: nothing to patch
        yield
        return
    original = getattr(sdpa_attention, "use_gqa_in_sdpa", None)
    if original is None:
        yield
        return
    sdpa_attention.use_gqa_in_sdpa = lambda *args, **kwargs: True
    try:
        yield
    finally:
        sdpa_attention.use_gqa_in_sdpa = original


def _set_range(ep: ExportedProgram, placeholder: str, axis: int, lower: int, upper: int) -> None:
    """Sets the range of the symbol of `placeholder`'s `axis` to `[lower, upper]`."""
    import torch
    from torch.utils._sympy.value_ranges import ValueRanges

    node = next(n for n in ep.graph.nodes if n.op == "placeholder" and n.name == placeholder)
    dim = node.meta["val"].shape[axis]
    if isinstance(dim, torch.SymInt):
        symbol = dim.node.expr
        if symbol in ep.range_constraints:
            ep.range_constraints[symbol] = ValueRanges(lower, upper)


def export_static_llm(model: Any, *, max_cache_len: int = 128, batch: int = 1) -> ExportedProgram:
    """The static-cache variant: transformers' `TorchExportableModuleWithStaticCache`,
    one token per call at an explicit cache position, the cache as mutated buffers
    (program state), exported with `strict=True`. Signature:
    `(input_ids[batch, 1], cache_position[1]) -> logits[batch, 1, V]`."""
    import torch
    from torch.export import export
    from transformers import GenerationConfig

    from mlxir.quiet import quiet_output_capturing_side_effect, quiet_torchao_import

    with quiet_torchao_import():  # through transformers.quantizers
        from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    saved = model.generation_config
    model.generation_config = GenerationConfig(
        use_cache=True,
        cache_implementation="static",
        max_length=max_cache_len,
        cache_config={"batch_size": batch, "max_cache_len": max_cache_len},
    )
    try:
        wrapper = TorchExportableModuleWithStaticCache(model, batch_size=batch, max_cache_len=max_cache_len)
    finally:
        model.generation_config = saved
    ids = torch.zeros(batch, 1, dtype=torch.long)
    position = torch.tensor([0], dtype=torch.long)
    with torch.no_grad(), quiet_output_capturing_side_effect():
        return export(wrapper, (), {"input_ids": ids, "cache_position": position}, strict=True)


# ---------------------------------------------------------------------------
# Compile
# ---------------------------------------------------------------------------


@dataclass
class CompiledLLM:
    """A compiled step program and what `generate` needs to drive it. `from_program`
    rebuilds it from a loaded `.mlxfb` (everything is in the program's signature)."""

    program: Program
    with_mask: bool
    kv_shapes: tuple[tuple[int, int], ...]  # (heads, head_dim) per cache tensor
    kv_dtype: str
    timings: dict[str, float] = field(default_factory=dict)
    quantized: str | None = None
    """What `compile_llm(..., quantize=...)` quantized, in one line."""
    cache: CacheKind = "growing"

    @classmethod
    def from_program(cls, program: Program) -> CompiledLLM:
        names = [spec.name for spec in program.inputs]
        if not names or names[0] != "input_ids":
            raise ValueError(f"not an mlxir LLM step program: inputs are {names}")
        with_mask = len(names) > 1 and names[1] == "attention_mask"
        if with_mask and names[2:3] != ["position_offset"]:
            raise ValueError(
                f"this LLM step program takes {names[2:3]} where mlxir now passes "
                "position_offset: it was compiled by an older mlxir; compile it again"
            )
        fixed = with_mask and names[3:4] == ["past_length"]
        kv = program.inputs[(4 if fixed else 3) if with_mask else 1 :]
        if not kv or len(kv) % 2:
            raise ValueError(f"not an mlxir LLM step program: inputs are {names}")
        shapes = []
        for spec in kv:
            heads, head_dim = spec.shape[1], spec.shape[3]
            if len(spec.shape) != 4 or heads is None or head_dim is None:
                raise ValueError(f"cache input '{spec.name}' is not [batch, heads, past, head_dim]")
            shapes.append((heads, head_dim))
        return cls(program, with_mask, tuple(shapes), kv[0].dtype, cache="fixed" if fixed else "growing")

    @property
    def max_capacity(self) -> int | None:
        """The most slots the program's fixed cache may have (None: no bound)."""
        spec = self.program.inputs[1]
        symbol = spec.dims[1] if len(spec.dims) > 1 else ""
        _, upper = self.program.info.symbol_ranges.get(symbol, (0, -1))
        return upper if upper >= 0 else None

    def empty_cache(self, batch: int, capacity: int = 0) -> list[mx.array]:
        """The cache before the first token: no slots (growing), or `capacity` zeroed
        slots (fixed)."""
        import mlx.core as mx

        from mlxir.runtime.dtypes import mx_dtype

        dtype = mx_dtype(self.kv_dtype)
        return [mx.zeros((batch, h, capacity, d), dtype=dtype) for h, d in self.kv_shapes]

    def step(
        self,
        input_ids: mx.array,
        kv: Sequence[mx.array],
        attention_mask: mx.array | None = None,
        position_offset: mx.array | None = None,
        past_length: mx.array | None = None,
        *,
        evaluate: bool = True,
    ) -> tuple[mx.array, list[mx.array]]:
        """One call: logits and the grown (or written) cache, all `mx.array`s.
        `position_offset[b]` is the position of row b's first new token (see the module
        docstring); a fixed cache also takes `past_length`, the slots already written
        (0-d int64), and its `attention_mask` covers every slot. `evaluate=False`
        returns them lazy (`Program.call_flat`)."""
        if self.cache == "fixed":
            if attention_mask is None or position_offset is None or past_length is None:
                raise ValueError("this program takes attention_mask, position_offset and past_length")
            outputs = self.program.call_flat(
                input_ids, attention_mask, position_offset, past_length, *kv, evaluate=evaluate
            )
        elif self.with_mask:
            if attention_mask is None or position_offset is None:
                raise ValueError("this program takes attention_mask and position_offset")
            outputs = self.program.call_flat(
                input_ids, attention_mask, position_offset, *kv, evaluate=evaluate
            )
        else:
            outputs = self.program.call_flat(input_ids, *kv, evaluate=evaluate)
        return outputs[0], list(outputs[1:])


def compile_llm(
    model_or_exported: Any,
    *,
    pipeline: str | None = None,
    quantize: Quantize | None = None,
    compile: CompileMode = "auto",
    **export_options: Any,
) -> CompiledLLM:
    """Exports (unless given an `ExportedLLM`), imports, lowers, quantizes the matmul
    weights if asked (`quantize=mlxir.Quantize(bits=4, group_size=64)`), serializes and
    loads; `timings` holds the seconds of each stage."""
    from mlxir import compiled_parts
    from mlxir.progress import progress_shown, report
    from mlxir.runtime.program import Program

    seconds: dict[str, float] = {}
    with progress_shown():  # one line from the export to the last weight written
        if isinstance(model_or_exported, ExportedLLM):
            exported = model_or_exported
        else:
            report("torch.export")
            exported = export_llm(model_or_exported, **export_options)
        parts, quantized = compiled_parts(exported.ep, pipeline, quantize=quantize, seconds=seconds)
    start = time.perf_counter()
    program = Program(parts, verify=False, compile=compile)  # serialize verified it
    loaded = time.perf_counter() - start
    compiled = CompiledLLM.from_program(program)
    compiled.quantized = quantized
    compiled.timings = {"export": exported.export_s, **seconds, "load": loaded}
    return compiled


# ---------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------


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
    seed: int = 0,
    eos_token_id: int | Sequence[int] | None = None,
    pad_token_id: int = 0,
    prefill_chunk: int | None = None,
) -> Iterator[tuple[mx.array, mx.array]]:
    """Yields `(token, logits)` step by step: the next token of every row (`mx.array`
    int64 `[B]`) and the logits it was chosen from (`[B, V]`, the program's dtype). The
    first step is the prefill (in chunks of `prefill_chunk` tokens if given); the
    cache stays on the MLX side. Rows that produced an EOS continue with
    `pad_token_id`; the stream stops when every row has finished."""
    import mlx.core as mx

    from mlxir.runtime.dtypes import to_mx

    ids = to_mx(input_ids, mx.int64) if not isinstance(input_ids, mx.array) else input_ids
    ids = ids.astype(mx.int64)
    batch, length = ids.shape
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
    eos = (
        set()
        if eos_token_id is None
        else {int(eos_token_id)} if isinstance(eos_token_id, int) else {int(t) for t in eos_token_id}
    )
    key = mx.random.key(seed)
    fixed = llm.cache == "fixed"
    limit = llm.max_capacity if fixed else None
    kv = llm.empty_cache(batch)
    finished = mx.zeros((batch,), dtype=mx.bool_)
    # What earlier work left in MLX's buffer cache (an earlier stream's cache and
    # activations) would sit resident beside this stream's prefill.
    mx.clear_cache()

    def run(tokens: mx.array, start: int, stop: int, evaluate: bool = True) -> mx.array:
        nonlocal kv, mask
        if fixed:
            if stop > kv[0].shape[2]:  # whole chunks of slots; the mask covers them all
                slots = _capacity_for(max(stop, mask.shape[1]), limit)
                kv = [mx.pad(t, [(0, 0), (0, 0), (0, slots - t.shape[2]), (0, 0)]) for t in kv]
                # Slots past the prompt: ones, masked by causality until written.
                mask = mx.concatenate([mask, mx.ones((batch, slots - mask.shape[1]), dtype=mx.int64)], axis=1)
            logits, kv = llm.step(
                tokens, kv, mask, start - pads, mx.array(start, dtype=mx.int64), evaluate=evaluate
            )
        elif llm.with_mask:
            logits, kv = llm.step(tokens, kv, mask[:, :stop], start - pads, evaluate=evaluate)
        else:
            logits, kv = llm.step(tokens, kv, evaluate=evaluate)
        return logits[:, -1, :]

    def choose(logits: mx.array) -> tuple[mx.array, mx.array]:
        """The next tokens, and which rows have finished once they are out."""
        nonlocal key, finished
        sub = None
        if do_sample:
            key, sub = mx.random.split(key)
        token = sample_next(
            logits, do_sample=do_sample, temperature=temperature, top_k=top_k, top_p=top_p, key=sub
        )
        if eos:
            token = mx.where(finished, pad_token_id, token)
            is_eos = mx.zeros((batch,), dtype=mx.bool_)
            for t in eos:
                is_eos = is_eos | (token == t)
            finished = finished | is_eos
        return token, finished

    chunk = prefill_chunk or length
    for start in range(0, length, chunk):
        stop = min(start + chunk, length)
        # Lazy, then evaluated once `kv` names the new cache: the old cache is then an
        # input of the graph only, and MLX writes the prompt's keys and values into its
        # buffers (donated) instead of copies of them.
        last = run(ids[:, start:stop], start, stop, evaluate=False)
        mx.eval(last, *kv)
        # The prefill's activations and the cache buffers a chunk outgrew are freed into
        # MLX's buffer cache, sized as no decode step asks again: release them (mlx-lm
        # does too) instead of carrying them as resident memory.
        mx.clear_cache()
    # Pipelined as mlx-lm does: step n + 1's graph is built on step n's lazy token and
    # handed to MLX (`async_eval`) before step n's token is waited for, so building a
    # step overlaps computing the previous one.
    token, done = choose(last)
    mx.async_eval(token)
    # The cache's size when the buffer cache was last released, and when `token`'s step
    # ran: a step that outgrew the cache frees the smaller one, which no later step reuses.
    released = size = _capacity_for(length, limit)
    for index in range(max_new_tokens):
        more = index + 1 < max_new_tokens
        if more:
            total = length + index + 1
            if llm.with_mask and not fixed:
                mask = mx.concatenate([mask, mx.ones((batch, 1), dtype=mx.int64)], axis=1)
            following_logits = run(token[:, None], total - 1, total, evaluate=False)
            following, following_done = choose(following_logits)
            mx.async_eval(following, *kv)
        mx.eval(token)
        if size != released:
            mx.clear_cache()
            released = size
        yield token, last
        if not more or (eos and bool(mx.all(done))):
            return
        token, done, last = following, following_done, following_logits  # pyright: ignore[reportPossiblyUnboundVariable]
        size = _capacity_for(total, limit)  # pyright: ignore[reportPossiblyUnboundVariable]


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
    each step's logits appended. Options: see `stream_tokens`."""
    import mlx.core as mx

    from mlxir.runtime.dtypes import to_mx

    tokens = []
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

    array = np.array(out)
    if type(input_ids).__module__.startswith("torch"):
        import torch

        return torch.from_numpy(array)
    return array


# ---------------------------------------------------------------------------
# Text in, text out (mlx-lm style): a save_pretrained folder, a compile cache
# ---------------------------------------------------------------------------

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
"""Files of a `save_pretrained` folder whose bytes are weights (they key the cache)."""


def default_cache_dir() -> Path:
    """`$MLXIR_CACHE`, else `$XDG_CACHE_HOME/mlxir`, else `~/.cache/mlxir`."""
    if os.environ.get("MLXIR_CACHE"):
        return Path(os.environ["MLXIR_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mlxir"


def cache_key(folder: str | Path, **options: Any) -> str:
    """A hash of the folder's config and weights (their bytes), of mlxir's version and
    of the compile `options`: a program compiled with the same key is the same."""
    import hashlib  # here, not at the top: it maps OpenSSL (4 MB resident), which a run never needs
    from importlib.metadata import PackageNotFoundError, version

    from mlxir.codegen import SCHEMA_VERSION

    folder = Path(folder)
    try:
        mlxir_version = version("mlxir")
    except PackageNotFoundError:
        mlxir_version = "unknown"
    digest = hashlib.sha256()
    digest.update(
        f"mlxir {mlxir_version} schema {SCHEMA_VERSION} step {STEP_SIGNATURE} "
        f"{sorted(options.items())}".encode()
    )
    files = sorted(
        p for p in folder.iterdir()
        if p.is_file() and (p.name == "config.json" or p.suffix in WEIGHT_SUFFIXES or p.name.endswith(".index.json"))
    )
    if not any(p.name == "config.json" for p in files):
        raise FileNotFoundError(f"'{folder}' has no config.json: not a save_pretrained folder")
    for path in files:
        digest.update(path.name.encode() + b"\0")
        digest.update(_file_digest(path))
    return digest.hexdigest()[:32]


def _file_digest(path: Path) -> bytes:
    import hashlib

    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").digest()


def _notify(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load(
    model: str | Path,
    *,
    tokenizer: str | Path | None = None,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = _notify,
    quantize: Quantize | None = None,
) -> tuple[CompiledLLM, TextTokenizer]:
    """The compiled step program and the tokenizer of `model`: a folder written by
    `save_pretrained` (config, weights and tokenizer), or a compiled `.mlxfb` with
    `tokenizer` the folder of its tokenizer.

    A folder is compiled on first use (export, import, lower, serialize: tens of
    seconds for a real model, reported through `progress`) and the program cached under
    `cache_dir` (`default_cache_dir()`), keyed by `cache_key`, so the next load only
    reads the program; `use_cache=False` compiles every time and writes nothing. The
    program takes no attention mask (one unpadded prompt) and keeps the last
    position's logits. `quantize` quantizes its matmul weights (a folder only; part of
    the cache key)."""
    from mlxir.runtime.program import Program
    from mlxir.runtime.program import load as load_program
    from mlxir.tools.tokenizer import load_tokenizer

    path = Path(model)
    if path.is_file():
        if quantize is not None:
            raise ValueError(f"'{path}' is already compiled: quantization applies when compiling a folder")
        if tokenizer is None:
            raise ValueError(f"'{path}' is a compiled program: give the folder of its tokenizer")
        program = load_program(path)
        if not isinstance(program, Program):
            raise ValueError(f"'{path}' is an ExecuTorch program, not an mlxir LLM step program")
        return CompiledLLM.from_program(program), load_tokenizer(tokenizer)
    if not path.is_dir():
        raise FileNotFoundError(f"'{path}': no such folder or program")
    text_tokenizer = load_tokenizer(tokenizer or path)
    options = {"attention_mask": False, "logits": "last"}
    scheme = {"quantize": quantize.key()} if quantize is not None else {}
    key = cache_key(path, **options, **scheme)
    cached = Path(cache_dir or default_cache_dir()) / "llm" / f"{key}.mlxfb"
    if quantize is not None and quantize.skip is not None and use_cache:
        raise ValueError("a quantization with a skip predicate cannot be cached: pass use_cache=False")
    if use_cache and cached.exists():
        program = load_program(cached)
        assert isinstance(program, Program)
        return CompiledLLM.from_program(program), text_tokenizer

    say = progress or (lambda _: None)
    say(f"compiling {path} (the first run; the program is cached for the next ones)")
    start = time.perf_counter()
    hf_model = _load_hf_model(path)
    say(f"  loaded the model with transformers in {time.perf_counter() - start:.1f} s")
    exported = export_llm(hf_model, **options)  # type: ignore[arg-type]
    say(f"  torch.export: {exported.export_s:.1f} s")
    compiled = compile_llm(exported, quantize=quantize)
    timings = compiled.timings
    say(
        "  import {import:.1f} s, lower {lower:.1f} s, serialize {serialize:.1f} s, "
        "load {load:.2f} s".format(**timings)
    )
    if compiled.quantized:
        say(f"  {compiled.quantized}")
    if use_cache:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.partial")
        compiled.program.save(partial)
        partial.replace(cached)  # atomic: a concurrent run never reads half a program
        say(f"  cached as {cached}")
    return compiled, text_tokenizer


def _load_hf_model(folder: Path) -> Any:
    from transformers import AutoModelForCausalLM

    from mlxir.quiet import quiet_torchao_import, quiet_transformers_progress

    # from_pretrained imports the model class, which imports torchao
    with quiet_torchao_import(), quiet_transformers_progress():
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="auto", attn_implementation="sdpa")
    return model.eval()


@dataclass
class GenerationStats:
    """What `stream_generate` measured: tokens and seconds of the prompt (prefill) and
    of the generation, and MLX's peak memory in bytes."""

    prompt_tokens: int = 0
    prompt_s: float = 0.0
    generation_tokens: int = 0
    generation_s: float = 0.0
    peak_memory: int = 0

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
    seed: int = 0,
    ignore_eos: bool = False,
    system_prompt: str | None = None,
    chat_template: bool = True,
    stats: GenerationStats | None = None,
) -> Iterator[str]:
    """Yields the generated text piece by piece as tokens come (mlx-lm's
    `stream_generate`): the prompt goes through the tokenizer's chat template when it
    has one (unless `chat_template=False`; token ids are taken as they are), then up to
    `max_tokens` tokens are generated, greedily at `temp=0`, else sampled with
    temperature, top-k and top-p from `seed`, stopping at an end-of-sequence token
    unless `ignore_eos`. The pieces join to the decoded generation, special tokens
    skipped; a piece is held back while it ends inside a multi-byte character.
    `stats`, when given, is filled in as generation goes."""
    import mlx.core as mx

    if isinstance(prompt, str):
        ids = tokenizer.encode_prompt(prompt, system_prompt=system_prompt, chat_template=chat_template)
    else:
        ids = [int(t) for t in prompt]
    if not ids:
        raise ValueError("the prompt has no tokens")
    stats = stats if stats is not None else GenerationStats()
    stats.prompt_tokens = len(ids)
    eos = None if ignore_eos else sorted(tokenizer.eos_token_ids) or None
    if hasattr(mx, "reset_peak_memory"):
        mx.reset_peak_memory()
    tokens: list[int] = []
    shown = ""
    start = time.perf_counter()
    first = start
    steps = stream_tokens(
        compiled,
        mx.array([ids], dtype=mx.int64),
        max_new_tokens=max_tokens,
        do_sample=temp > 0,
        temperature=temp if temp > 0 else 1.0,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        eos_token_id=eos,
    )
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
            break
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
    stats.peak_memory = int(mx.get_peak_memory()) if hasattr(mx, "get_peak_memory") else 0
