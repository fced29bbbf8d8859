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

State-space and hybrid decoders (Mamba, Bamba, Jamba) keep, per state-space layer, a
convolution window and a scan state instead of keys and values. Their program is the
recurrent one (`cache="recurrent"`, chosen by `export_llm` from the model's cache):

    step(input_ids[B, 1], attention_mask[B, C], position_offset[B], past_length[],
         kv_0 ... kv_2L-1, state_0 ... state_2R-1)
        -> (logits[B, 1, V], written_kv_0 ... , new_state_0 ... new_state_2R-1)

with the attention layers' keys/values kept as in the fixed cache (none for Mamba) and
the R state-space layers' states beside them, in layer order. It takes one token per
call, prefill included: transformers' state-space layers scan a longer input from a
zero state, ignoring the cached one, so only single-token steps continue a cache.
`generate` keeps the old states of a left-padded row while it reads its pads, so every
row's scan starts at its first real token, as it would unpadded.

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
  ExecuTorch's Edge verifier refuses that node (see `export._grouped_query_sdpa`).
- `logits="last"` keeps only the last position's logits (`logits_to_keep=1`): what
  generation needs, and it spares the LM head on the whole prompt.

`generate` keeps the cache as `mx.array`s between steps (the program returns MLX
arrays when given MLX arrays); greedy or sampling with temperature, top-k, top-p and min-p (or an mlx-lm-shaped `make_sampler` and `make_logits_processors`)
from a seed (`mx.random`). With a left-padded batch, the padded query rows of the
prefill attend to nothing: PyTorch's SDPA gives zeros there, MLX's does not, and only
those rows differ (their logits are never used, their keys/values are always masked).

The modules, one job each: `export` (`export_llm`, the step program of a transformers
model or of a `save_pretrained` folder's; `export_static_llm`), `compile`
(`compile_llm`, `CompiledLLM`, and `load` with its on-disk program cache), `sampling`
(`sample_next`), `cache` (one class per cache policy: fixed, growing, rotating,
quantized, recurrent), `generation` (`GenerationConfig` and the decode loop:
`stream_tokens`, `generate`, `stream_generate`), `prompt_cache` (a cache's saved
state) and `speculative` (a draft model's proposals, kept or rejected).
"""

from __future__ import annotations

# The aliased names were public before the split without being in `__all__`; callers
# reach them as `llm.<name>` (`llm.CACHE_CHUNK`, `llm.cache_key`, `llm.GenerationStats`).
from mlxir.tools.llm.compile import WEIGHT_SUFFIXES as WEIGHT_SUFFIXES
from mlxir.tools.llm.compile import CompiledLLM, compile_llm, compile_split, load
from mlxir.tools.llm.compile import cache_key as cache_key
from mlxir.tools.llm.compile import default_cache_dir as default_cache_dir
from mlxir.tools.llm.config import GenerationConfig, GenerationConfigError
from mlxir.tools.llm.export import STEP_SIGNATURE as STEP_SIGNATURE
from mlxir.tools.llm.export import CacheKind as CacheKind
from mlxir.tools.llm.export import CacheLayout as CacheLayout
from mlxir.tools.llm.export import ExportedLLM, export_llm, export_static_llm
from mlxir.tools.llm.export import cache_layout as cache_layout
from mlxir.tools.llm.generation import CACHE_CHUNK as CACHE_CHUNK
from mlxir.tools.llm.generation import GenerationStats as GenerationStats
from mlxir.tools.llm.generation import (
    generate,
    peak_memory,
    stream_generate,
    stream_tokens,
)
from mlxir.tools.llm.sampling import make_logits_processors, make_sampler, sample_next

__all__ = [
    "CompiledLLM",
    "ExportedLLM",
    "GenerationConfig",
    "GenerationConfigError",
    "compile_llm",
    "compile_split",
    "export_llm",
    "export_static_llm",
    "generate",
    "make_logits_processors",
    "make_sampler",
    "peak_memory",
    "sample_next",
    "load",
    "stream_generate",
    "stream_tokens",
]
