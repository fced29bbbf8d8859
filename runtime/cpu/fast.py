"""Attention as the CPU computes it best. MLX's CPU has no attention kernel:
`mx.fast.scaled_dot_product_attention` composes 14 graph nodes a call there, and on
the CPU a compiled step pays for every node (each is handed to the stream's thread).
Float32 attention runs the native `attention` kernel where it runs (`native/kernels/
attention.cpp`, `native.kernels()`): one pass over K and V with an online softmax, no
score matrix, at every mask MLX's op takes. Elsewhere (the kernels not built, turned
off, suspended for an export, or only their portable path on this CPU) a composition
of the same arithmetic in fewer nodes, with the same bits as MLX's CPU composition
(`tests/test_kernels_cpu.py`). What the op means (operands, masks) is in
`evaluator/fast.py`. Rope, which MLX's CPU also composes, is rewritten at compile time
by the CPU target (`transforms/cpu/rope_pairs.py`), and float16/bfloat16 attention put
in float32 there (`transforms/cpu/float32_attention.py`).

Measured on this machine (2-vCPU Xeon with AVX-512, shared with other work; float32,
queries [1, H, L, D], K/V slices of a 4096-slot cache, causal; medians of 21 calls,
alternating with the composition; native on 1 / 2 threads, the composition with
OpenBLAS on 1 / 2 threads):

| query/K-V heads x dim | L | S | native ms | composition ms |
|---|---|---|---|---|
| 8/8 x 64 | 1 | 512 | 0.097 / 0.092 | 0.16 / 0.21 |
| 8/8 x 64 | 1 | 2048 | 0.48 / 0.44 | 0.89 / 0.92 |
| 8/8 x 64 | 128 | 128 | 0.49 / 0.46 | 2.1 / 2.3 |
| 8/8 x 64 | 512 | 512 | 4.3 / 4.0 | 36 / 36 |
| 16/8 x 128 | 1 | 512 | 0.29 / 0.23 | 0.46 / 0.46 |
| 16/8 x 128 | 1 | 2048 | 0.99 / 0.95 | 2.8 / 2.8 |
| 16/8 x 128 | 128 | 128 | 1.5 / 1.4 | 5.2 / 5.4 |
| 16/8 x 128 | 512 | 512 | 13 / 13 | 83 / 79 |

The second thread gained little here because other processes held the second core;
with it free, it halved a 512-token prefill (4.6 -> 2.5 ms at 8 x 64). Decode reads K
and V once, at 17 GB/s at 8 x 64 and S 2048, where numpy's sum of 8 MB read 20 GB/s
at the same time. The portable path (no AVX2) was 1.1-2x slower than the composition
at prefill (its C++ is vectorized for the architecture's baseline by the compiler
alone), so it is not used. `python tests/test_native_attention.py [repeats [isa]]`
measures them again (with OPENBLAS_NUM_THREADS=1, then 2).
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

from mlxir.evaluator.fast import attention_kernel
from mlxir.evaluator.registry import KernelFactory
from mlxir.runtime.cpu import native

_MASK_DTYPES = (mx.bool_, mx.float32, mx.float16, mx.bfloat16)


def cpu_attention(
    queries: mx.array, keys: mx.array, values: mx.array, *, scale: float, mask: Any
) -> mx.array:
    """Attention on the CPU: the native kernel where it covers the call
    (`_native_attention`), else MLX's own for a causal mask (it builds no mask array)
    and `cpu_sdpa` for any other. Not native: in the operands' dtype, as MLX's CPU
    composes it; the CPU target computes float16/bfloat16 attention in float32 by a
    pass (`transforms/cpu/float32_attention.py`), visible in the program."""
    result = _native_attention(queries, keys, values, scale=scale, mask=mask)
    if result is not None:
        return result
    composed = mx.fast.scaled_dot_product_attention if isinstance(mask, str) else cpu_sdpa
    return composed(queries, keys, values, scale=scale, mask=mask)


def _native_attention(q: mx.array, k: mx.array, v: mx.array, *, scale: float, mask: Any) -> mx.array | None:
    """The native kernel's attention where this call may use the native kernels and
    they cover it, else None: float32 q, k and v (what the CPU target leaves: half
    attention is put in float32 before, and the native kernel would not round scores
    and weights to 16 bits as MLX's composition of half attention does); no mask,
    "causal", or a bool/float mask that broadcasts to the scores; a CPU with a vector
    path (its portable C++ loses prefill to OpenBLAS's products). Its values are
    within float32 rounding of the composition's (an online softmax sums in another
    order), and a row whose mask keeps nothing is what MLX's composition gives: the
    mean of V for a bool mask, NaN for an additive mask of -inf."""
    module = native.kernels()
    if (
        module is None
        # A library built from sources older than this family (a stale in-place build).
        or not hasattr(module, "attention")
        or module.isa() == "portable"
        or not (q.dtype == k.dtype == v.dtype == mx.float32)
        or not (q.ndim == k.ndim == v.ndim == 4)
        # Shapes MLX's op refuses go to it, for its message.
        or not (q.shape[0] == k.shape[0] == v.shape[0] and k.shape[1:3] == v.shape[1:3])
        or q.shape[3] != k.shape[3]
        or k.shape[1] == 0
        or q.shape[1] % k.shape[1] != 0
    ):
        return None
    if isinstance(mask, mx.array):
        scores = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
        if (
            mask.dtype not in _MASK_DTYPES
            or mask.ndim > 4
            or any(size not in (1, full) for size, full in zip(reversed(mask.shape), reversed(scores), strict=False))
        ):
            return None
    elif mask is not None and mask != "causal":
        return None
    return module.attention(q, k, v, scale=scale, mask=mask)


def cpu_sdpa(q: mx.array, k: mx.array, v: mx.array, *, scale: float, mask: Any) -> mx.array:
    """Attention as MLX's CPU composes `mx.fast.scaled_dot_product_attention` (MLX has
    no CPU kernel): scaled queries, scores, the mask (a bool mask keeps True, else
    MLX's lowest float; an additive one adds), a precise softmax, the weighted values.
    With fewer K/V heads, each K/V head's queries are one matrix of `rep * L` rows (a
    reshape of the queries, which MLX's composition instead broadcasts against K and
    V: four more graph nodes a call), and the mask is tiled once for them (the same
    mask in every layer of a compiled step, so computed once)."""
    batch, heads, length, _ = q.shape
    kv_heads, slots = k.shape[1], k.shape[2]
    rep = heads // kv_heads
    q = mx.array(scale, dtype=q.dtype) * q
    if rep > 1:
        q = q.reshape(batch, kv_heads, rep * length, q.shape[-1])  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
    scores = q @ k.swapaxes(-1, -2)
    if mask is not None:
        mask = mx.broadcast_to(mask, (batch, heads, length, slots))
        if rep > 1:
            mask = mask.reshape(batch, kv_heads, rep * length, slots)
        if mask.dtype == mx.bool_:
            scores = mx.where(mask, scores, mx.array(mx.finfo(scores.dtype).min, scores.dtype))
        else:
            scores = scores + mask.astype(scores.dtype)
    out = mx.softmax(scores, axis=-1, precise=True) @ v
    return out.reshape(batch, heads, length, v.shape[-1]) if rep > 1 else out  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)



KERNELS: dict[str, KernelFactory] = {
    "mlx.scaled_dot_product_attention": attention_kernel(cpu_attention),
}
"""The CPU's compositions of MLX's fast ops, in place of the generic kernels."""
