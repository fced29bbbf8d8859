"""Attention as the CPU computes it best. MLX's CPU has no attention kernel:
`mx.fast.scaled_dot_product_attention` composes 14 graph nodes a call there, and on
the CPU a compiled step pays for every node (each is handed to the stream's thread).
This composes the same arithmetic in fewer nodes, with the same bits as MLX's CPU
composition (`tests/test_kernels_cpu.py`). What the op means (operands, masks) is in
`evaluator/fast.py`. Rope, which MLX's CPU also composes, is rewritten at compile time
by the CPU target (`transforms/cpu/rope_pairs.py`), and float16/bfloat16 attention put
in float32 there (`transforms/cpu/float32_attention.py`)."""

from __future__ import annotations

from typing import Any

import mlx.core as mx

from mlxir.evaluator.fast import attention_kernel
from mlxir.evaluator.registry import KernelFactory


def cpu_attention(
    queries: mx.array, keys: mx.array, values: mx.array, *, scale: float, mask: Any
) -> mx.array:
    """Attention on the CPU: a causal mask is MLX's own (it builds no mask array); any
    other runs `cpu_sdpa`. In the operands' dtype, as MLX's CPU composes it: the CPU
    target computes float16/bfloat16 attention in float32 by a pass
    (`transforms/cpu/float32_attention.py`), visible in the program."""
    composed = mx.fast.scaled_dot_product_attention if isinstance(mask, str) else cpu_sdpa
    return composed(queries, keys, values, scale=scale, mask=mask)


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
