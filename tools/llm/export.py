"""Export: a transformers causal LM as the one step program for prefill and decode,
its KV cache explicit (growing, or fixed-capacity; see `mlxir.tools.llm`), and what
that takes: the cache layout read off the model, the exported modules, the widened
symbol ranges. Also a `save_pretrained` folder loaded with transformers
(`load_hf_model`) and the static-cache variant transformers makes for ExecuTorch
(`export_static_llm`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    import torch
    from torch.export import ExportedProgram


STEP_SIGNATURE = "input_ids, attention_mask, position_offset, past_length, kv (fixed)"
"""The step program's inputs (part of the compiled-program cache key)."""

CacheKind = Literal["growing", "fixed"]
"""How a step program keeps the KV cache: grown by the program's concatenation at
every call, or a fixed capacity written in place (see the package docstring)."""


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
    limits: dict[str, tuple[int, int]] = field(default_factory=dict[str, tuple[int, int]])
    cache: CacheKind = "growing"


def cache_layout(model: Any) -> CacheLayout:
    """Reads the cache layout off one eager token through the model (robust to every
    config's way of naming heads and head dims)."""
    import torch
    from transformers import DynamicCache

    _refuse_recurrent_states(model)
    cache = DynamicCache()
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 1, dtype=torch.long), cache=cache, use_cache=True)
    # A dense model's layers are DynamicLayers (transformers types the list by the mixin).
    layers = cast(list[Any], cache.layers)
    keys: list[torch.Tensor] = [layer.keys for layer in layers]
    return CacheLayout(
        len(keys),
        tuple(int(k.shape[1]) for k in keys),
        tuple(int(k.shape[3]) for k in keys),
        keys[0].dtype,
    )


def _refuse_recurrent_states(model: Any) -> None:
    """The step program's cache holds attention keys and values; a state-space or
    hybrid model (Mamba, Bamba, Jamba) also keeps recurrent convolution and SSM states,
    which transformers' cache holds in `LinearAttentionLayer`s, and which the program
    cannot hold yet: said, by layer, instead of failing inside transformers."""
    from transformers import DynamicCache
    from transformers.cache_utils import LinearAttentionCacheLayerMixin

    layers = cast(list[Any], DynamicCache(config=model.config).layers)
    recurrent = [i for i, layer in enumerate(layers) if isinstance(layer, LinearAttentionCacheLayerMixin)]
    if recurrent:
        raise ValueError(
            f"{type(model).__name__} keeps recurrent (convolution and state-space) states in "
            f"{len(recurrent)} of its {len(layers)} layers (layer {recurrent[0]} first); compile_llm's step "
            "program holds an attention KV cache only: compile one forward instead "
            "(mlxir.compile of torch.export.export(model, (input_ids,)))"
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
            super().__init__()  # pyright: ignore[reportUnknownMemberType] (transformers leaves CacheLayerMixin.__init__'s **kwargs unannotated)
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
                # No config: every layer is a plain DynamicLayer (see the package docstring).
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
        """Row b's new tokens sit at `position_offset[b], +1, ...` (package docstring)."""
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
    one program for prefill and decode (see the package docstring). `max_seq` and
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
def _grouped_query_sdpa() -> Generator[None, None, None]:
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

    def use_gqa(*args: object, **kwargs: object) -> bool:
        return True

    sdpa_attention.use_gqa_in_sdpa = use_gqa
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
        symbol = cast(Any, dim.node.expr)  # pyright: ignore[reportUnknownMemberType] (torch leaves SymInt.node unannotated)
        ranges = cast(dict[Any, Any], ep.range_constraints)  # pyright: ignore[reportUnknownMemberType] (torch annotates it with a bare ValueRanges)
        if symbol in ranges:
            ranges[symbol] = ValueRanges(lower, upper)


def export_static_llm(model: Any, *, max_cache_len: int = 128, batch: int = 1) -> ExportedProgram:
    """The static-cache variant: transformers' `TorchExportableModuleWithStaticCache`,
    one token per call at an explicit cache position, the cache as mutated buffers
    (program state), exported with `strict=True`. Signature:
    `(input_ids[batch, 1], cache_position[1]) -> logits[batch, 1, V]`."""
    import torch
    from torch.export import export
    from transformers import GenerationConfig

    from mlxir.support.quiet import quiet_output_capturing_side_effect, quiet_torchao_import

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


def load_hf_model(folder: Path) -> Any:
    from transformers import AutoModelForCausalLM

    from mlxir.support.quiet import quiet_torchao_import, quiet_transformers_progress

    # from_pretrained imports the model class, which imports torchao
    with quiet_torchao_import(), quiet_transformers_progress():
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="auto", attn_implementation="sdpa")  # pyright: ignore[reportUnknownMemberType] (transformers leaves some of from_pretrained's parameters unannotated)
    return model.eval()
