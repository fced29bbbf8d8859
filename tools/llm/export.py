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


STEP_SIGNATURE = "input_ids, attention_mask, position_offset, past_length, kv (fixed), states (recurrent)"
"""The step program's inputs (part of the compiled-program cache key)."""

CacheKind = Literal["growing", "fixed", "recurrent"]
"""How a step program keeps the KV cache: grown by the program's concatenation at
every call, a fixed capacity written in place, or a fixed capacity beside the
recurrent states of state-space layers, one token per call (see the package
docstring)."""


@dataclass(frozen=True)
class RecurrentState:
    """One recurrent state tensor of a state-space layer, per batch row: a convolution
    window or a scan state."""

    shape: tuple[int, ...]
    dtype: torch.dtype


@dataclass(frozen=True)
class CacheLayout:
    """The shape of the explicit cache: per attention layer, keys and values of
    `[batch, heads, past, head_dim]` in `dtype`; per state-space layer (the
    `recurrent_layers`, by index among all layers), its convolution and scan states
    (`states`, two per such layer, in layer order)."""

    layers: int
    heads: tuple[int, ...]
    head_dims: tuple[int, ...]
    dtype: torch.dtype
    recurrent_layers: tuple[int, ...] = ()
    states: tuple[RecurrentState, ...] = ()

    def empty(self, batch: int, past: int = 0) -> list[torch.Tensor]:
        import torch

        return [
            torch.zeros(batch, h, past, d, dtype=self.dtype)
            for h, d in zip(self.heads, self.head_dims)
            for _ in range(2)
        ]

    def empty_states(self, batch: int) -> list[torch.Tensor]:
        """The states before the first token: zeros, as transformers starts them."""
        import torch

        return [torch.zeros(batch, *state.shape, dtype=state.dtype) for state in self.states]


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
    config's way of naming heads, head dims and state sizes)."""
    import torch
    from transformers import DynamicCache
    from transformers.cache_utils import (
        DynamicLayer,
        DynamicSlidingWindowLayer,
        LinearAttentionLayer,
    )

    cache = DynamicCache(config=model.config)
    layers = cast(list[Any], cache.layers)
    kinds: set[type] = {type(layer) for layer in layers}
    # A sliding window is the model's mask over a cache that keeps every position.
    attention_kinds: set[type] = {DynamicLayer, DynamicSlidingWindowLayer}
    if not kinds <= attention_kinds | {LinearAttentionLayer} or not layers:
        raise ValueError(
            f"{type(model).__name__}'s cache layers are {sorted(k.__name__ for k in kinds)}: compile_llm's "
            "step program holds attention (DynamicLayer, DynamicSlidingWindowLayer) and state-space "
            "(LinearAttentionLayer) layers; compile one forward instead "
            "(mlxir.compile of torch.export.export(model, (input_ids,)))"
        )
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 1, dtype=torch.long), cache=cache, use_cache=True)
    keys = [cast("torch.Tensor", layer.keys) for layer in layers if type(layer) in attention_kinds]
    recurrent = tuple(i for i, layer in enumerate(layers) if type(layer) is LinearAttentionLayer)
    states: list[RecurrentState] = []
    for i in recurrent:
        layer = layers[i]
        if layer.number_of_states != 1 or layer.conv_states[0] is None or layer.recurrent_states[0] is None:
            raise ValueError(
                f"layer {i} of {type(model).__name__} keeps {layer.number_of_states} convolution/scan state "
                "pair(s), not one of each: compile_llm's step program holds one of each per layer"
            )
        for state in (layer.conv_states[0], layer.recurrent_states[0]):
            states.append(RecurrentState(tuple(int(n) for n in state.shape[1:]), state.dtype))
    dtype = keys[0].dtype if keys else states[0].dtype
    return CacheLayout(
        len(keys),
        tuple(int(k.shape[1]) for k in keys),
        tuple(int(k.shape[3]) for k in keys),
        dtype,
        recurrent,
        tuple(states),
    )


@cache
def _step_classes() -> tuple[type, type, type, type]:
    """The exported modules (with and without the mask, with the fixed-capacity cache,
    and with recurrent states beside it): classes of torch's `Module`, built on first
    use so that generating from a cached program never imports torch."""
    import torch
    from transformers.cache_utils import Cache, CacheLayerMixin, LinearAttentionCacheLayerMixin

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

    class _StateLayer(LinearAttentionCacheLayerMixin):
        """One state-space layer's states, given (never lazily made): every call takes
        transformers' single-token path, which a zero state makes exactly its prefill
        of one token. The model writes the convolution window in place
        (`causal_conv1d_update`): it writes a copy, so the program's inputs stay
        unwritten and the written copy is what it returns."""

        def __init__(self, conv: torch.Tensor, recurrent: torch.Tensor, past_length: torch.Tensor):
            super().__init__(number_of_states=1)  # pyright: ignore[reportUnknownMemberType] (transformers leaves the mixin's **kwargs unannotated)
            self.conv_states[0], self.recurrent_states[0] = conv.clone(), recurrent
            self.conv_kernel_size[0] = conv.shape[-1]
            self.is_conv_states_initialized[0] = self.is_recurrent_states_initialized[0] = True
            self.has_previous_state[0] = True
            self.cumulative_length_linear = past_length

        def lazy_initialization(self, *args: Any, **kwargs: Any) -> None:
            pass

        def update_conv_state(self, conv_states: torch.Tensor, state_idx: int = 0, **kwargs: Any) -> torch.Tensor:
            window = self.conv_states[state_idx]
            assert window is not None
            full = torch.cat([window, conv_states], dim=-1)
            self.conv_states[state_idx] = full[..., -window.shape[-1] :]
            return full

        def update_recurrent_state(self, recurrent_states: Any, state_idx: int = 0, **kwargs: Any) -> torch.Tensor:
            self.recurrent_states[state_idx] = recurrent_states
            return recurrent_states

        def increase_count(self, state_idx: int) -> None:
            pass  # the count is `past_length`, the program's input

        def get_seq_length(self) -> Any:
            return self.cumulative_length_linear

    class _Step(torch.nn.Module):
        """The exported function: one forward over new tokens with an explicit cache."""

        def __init__(self, model: Any, layout: CacheLayout, with_mask: bool, last_only: bool):
            super().__init__()
            self.model = model
            self.layers = layout.layers
            self.recurrent_layers = layout.recurrent_layers
            self.with_mask = with_mask
            self.logits_to_keep = 1 if last_only else 0

        def _run(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor | None,
            position_ids: torch.Tensor | None,
            kv: Sequence[torch.Tensor],
            past_length: torch.Tensor | None = None,
            states: Sequence[torch.Tensor] = (),
        ) -> tuple[torch.Tensor, ...]:
            from transformers import DynamicCache

            cache: Cache
            if self.recurrent_layers:
                assert past_length is not None
                layers: list[Any] = []
                attention, recurrent = iter(range(self.layers)), iter(range(len(self.recurrent_layers)))
                for index in range(self.layers + len(self.recurrent_layers)):
                    if index in self.recurrent_layers:
                        r = next(recurrent)
                        layers.append(_StateLayer(states[2 * r], states[2 * r + 1], past_length))
                    else:
                        a = next(attention)
                        layers.append(_FixedLayer(kv[2 * a], kv[2 * a + 1], past_length))
                cache = Cache(layers=layers)
                if not self.layers:  # state-space layers only: no attention, no positions
                    attention_mask = position_ids = None
            elif past_length is not None:
                cache = Cache(
                    layers=[_FixedLayer(kv[2 * i], kv[2 * i + 1], past_length) for i in range(self.layers)]
                )
            else:
                # No config: every layer is a plain DynamicLayer (see the package docstring).
                cache = DynamicCache([(kv[2 * i], kv[2 * i + 1]) for i in range(self.layers)])
            inputs: dict[str, Any] = {"attention_mask": attention_mask, "position_ids": position_ids}
            out = self.model(
                input_ids=input_ids,
                **{name: value for name, value in inputs.items() if value is not None},
                cache=cache,
                use_cache=True,
                logits_to_keep=self.logits_to_keep,
            )
            new = out.cache if hasattr(out, "cache") else out.past_key_values
            written: list[torch.Tensor] = []
            for layer in new.layers:
                if isinstance(layer, LinearAttentionCacheLayerMixin):
                    written += [cast(torch.Tensor, state[0]) for state in (layer.conv_states, layer.recurrent_states)]
            return (
                out.logits,
                *[t for layer in new.layers if not isinstance(layer, LinearAttentionCacheLayerMixin) for t in (layer.keys, layer.values)],
                *written,
            )

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

    class _StepRecurrent(_Step):
        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            position_offset: torch.Tensor,
            past_length: torch.Tensor,
            kv: list[torch.Tensor],
            states: list[torch.Tensor],
        ) -> tuple[torch.Tensor, ...]:
            positions = _positions(input_ids, position_offset)
            return self._run(input_ids, attention_mask, positions, kv, past_length, states)

    return _StepWithMask, _StepNoMask, _StepFixed, _StepRecurrent


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
    layout = cache_layout(model)
    if layout.recurrent_layers:
        if cache not in (None, "recurrent") or not attention_mask:
            raise ValueError(
                f"{type(model).__name__} keeps recurrent states in {len(layout.recurrent_layers)} of its "
                f"{layout.layers + len(layout.recurrent_layers)} layers: its step program is the "
                "recurrent one (cache='recurrent', with the attention mask)"
            )
        cache = "recurrent"
    elif cache is None:
        cache = "fixed" if attention_mask else "growing"
    elif cache == "recurrent":
        raise ValueError(f"{type(model).__name__} keeps no recurrent states: cache='fixed' or 'growing'")
    if cache == "fixed" and not attention_mask:
        raise ValueError("the fixed-capacity cache takes the attention mask: attention_mask=True")
    config = model.config
    limit = int(getattr(config, "max_position_embeddings", 4096) or 4096)
    max_seq = max_seq or limit
    max_past = max_past or limit
    import torch
    from torch.export import Dim, export

    with_mask, no_mask, fixed, recurrent = _step_classes()
    step_class = {"fixed": fixed, "recurrent": recurrent}.get(cache, with_mask if attention_mask else no_mask)
    step = step_class(model, layout, attention_mask, logits == "last")

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
    if cache == "recurrent":
        # One token per call: transformers' state-space layers scan a longer input from
        # a zero state (ignoring the cached one) in a Python loop over its length.
        capacity = Dim("capacity", min=1, max=max_past + max_seq)
        kv = layout.empty(batch, past + 1 + 2)
        mask = torch.ones(batch, past + 1 + 2, dtype=torch.long)
        offsets = torch.full((batch,), past, dtype=torch.long)
        states = layout.empty_states(batch)
        args = (ids[:, :1], mask, offsets, torch.tensor(past), kv, states)
        shapes = {
            "input_ids": {0: b},
            "attention_mask": {0: b, 1: capacity},
            "position_offset": {0: b},
            "past_length": None,
            "kv": [{0: b, 2: capacity} for _ in kv],
            "states": [{0: b} for _ in states],
        }
    elif cache == "fixed":
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
        {"batch": (1, max_batch), "seq": (1, 1 if cache == "recurrent" else max_seq), "past": (0, max_past)},
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
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    from mlxir.support.quiet import quiet_torchao_import, quiet_transformers_progress

    # from_pretrained imports the model class, which imports torchao
    with quiet_torchao_import(), quiet_transformers_progress():
        config = cast(Any, AutoConfig.from_pretrained(str(folder)))  # pyright: ignore[reportUnknownMemberType] (transformers leaves some of from_pretrained's parameters unannotated)
        model_class = cast(object, MODEL_FOR_CAUSAL_LM_MAPPING.get(type(config), None))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType] (an untyped lazy mapping)
        # SDPA where the class has it (one fused attention op); a class without (Mamba:
        # no attention at all) refuses the request, and its eager path is the model's own.
        attention = "sdpa" if getattr(model_class, "_supports_sdpa", True) else "eager"
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="auto", attn_implementation=attention)  # pyright: ignore[reportUnknownMemberType] (transformers leaves some of from_pretrained's parameters unannotated)
    return model.eval()
