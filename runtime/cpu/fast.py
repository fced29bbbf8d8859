"""MLX's fast ops as the CPU computes them best. MLX's CPU has no rope or attention
kernel: `mx.fast.rope` and `mx.fast.scaled_dot_product_attention` compose 12 and 14
graph nodes a call, and on the CPU a compiled step pays for every node (each is handed
to the stream's thread). These compose the same arithmetic in fewer nodes, with the
same bits as MLX's CPU composition (`tests/test_kernels_cpu.py`), and keep attention's
scores in float32 as torch's CPU kernel and MLX's GPU kernels do. What the ops mean
(operands, masks, offsets) is in `evaluator/fast.py`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mlx.core as mx

from mlxir.evaluator.fast import attention_kernel, rope_kernel
from mlxir.evaluator.registry import KernelFactory

_LOW_PRECISION = (mx.float16, mx.bfloat16)


def cpu_attention(
    queries: mx.array, keys: mx.array, values: mx.array, *, scale: float, mask: Any
) -> mx.array:
    """Attention on the CPU: MLX's CPU backend composes it in the operands' dtype,
    rounding scores and probabilities to float16/bfloat16, where torch's CPU kernel,
    like MLX's GPU kernels, keeps them in float32; so does this. A causal mask is
    MLX's own (it builds no mask array); any other runs `cpu_sdpa`."""
    composed = mx.fast.scaled_dot_product_attention if isinstance(mask, str) else cpu_sdpa
    if queries.dtype in _LOW_PRECISION:
        out = composed(
            queries.astype(mx.float32), keys.astype(mx.float32), values.astype(mx.float32),
            scale=scale, mask=mask,
        )
        return out.astype(queries.dtype)
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



_ROPE_CONSTANTS: dict[tuple[Any, ...], mx.array] = {}
"""The CPU rope's constants (positions `arange(T)` per length, rotation signs per
layout and dtype), evaluated once: the same array in every rope of a call, so that
`mx.compile` merges their angle tables into one, and no graph for another thread's
stream to evaluate."""


def _rope_constant(key: tuple[Any, ...], make: Callable[[], mx.array]) -> mx.array:
    value = _ROPE_CONSTANTS.get(key)
    if value is None:
        value = make()
        mx.eval(value)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        if len(_ROPE_CONSTANTS) < 4096:
            _ROPE_CONSTANTS[key] = value
    return value


def cpu_rope(
    x: mx.array,
    dims: int,
    *,
    traditional: bool,
    base: float | None,
    scale: float,
    offset: Any,
    freqs: mx.array | None,
) -> mx.array:
    """`mx.fast.rope` on MLX's CPU, which has no rope kernel and composes one op by op
    (12 graph nodes a call: angle table, two slices, two products, a concatenation).
    The same arithmetic (MLX's angles `(arange(T) + offset) * scale / freqs`, then
    `x1 cos - x2 sin`, `x1 sin + x2 cos`) as 4 nodes: each rotated pair is a size-2
    axis of a reshape of `x`, its partner that axis reversed (a view), and the signs
    go into the sine. The angle table depends on the positions alone, so the ropes of
    a compiled step share one (MLX's compiler merges equal subgraphs), where MLX's
    own composition builds one per call from a fresh `arange`."""
    if dims < x.shape[-1]:
        rotated = cpu_rope(
            x[..., :dims], dims, traditional=traditional, base=base, scale=scale,
            offset=offset, freqs=freqs,
        )
        return mx.concatenate([rotated, x[..., dims:]], axis=-1)
    half = dims // 2
    offset = offset if isinstance(offset, mx.array) else mx.array(offset, dtype=mx.int32)
    if offset.dtype.size != 4:
        offset = offset.astype(mx.int32)
    if offset.ndim == 1 and offset.size > 1:  # one start per row (axis 0)
        offset = offset.reshape(-1, *[1] * (x.ndim - 2))
    length = x.shape[-2]
    positions = _rope_constant(("positions", length), lambda: mx.arange(length, dtype=mx.float32))
    positions = (positions + offset) * scale
    if freqs is None:
        assert base is not None
        inverse = mx.exp(mx.arange(0, -half, -1, dtype=mx.float32) * (math.log(base) / half))
    else:
        inverse = mx.reciprocal(freqs.astype(mx.float32))
    theta = positions[..., None] * inverse
    cos, sin = mx.cos(theta).astype(x.dtype), mx.sin(theta).astype(x.dtype)
    # Pairs: (x[i], x[i + half]), or (x[2i], x[2i + 1]) when traditional.
    pair_axis = -1 if traditional else -2
    signs = _rope_constant(
        ("signs", traditional, x.dtype),
        lambda: mx.array([-1, 1], dtype=x.dtype).reshape((2,) if traditional else (2, 1)),  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
    )
    pairs = x.reshape(*x.shape[:-1], *((half, 2) if traditional else (2, half)))  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
    partners = pairs[..., ::-1] if traditional else pairs[..., ::-1, :]
    cos, sin = mx.expand_dims(cos, pair_axis), mx.expand_dims(sin, pair_axis)
    return (pairs * cos + partners * (sin * signs)).reshape(x.shape)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)


KERNELS: dict[str, KernelFactory] = {
    "mlx.scaled_dot_product_attention": attention_kernel(cpu_attention),
    "mlx.rope": rope_kernel(cpu_rope),
}
"""The CPU's compositions of MLX's fast ops, in place of the generic kernels."""
