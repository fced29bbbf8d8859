"""MLX's fast ops: attention, RMS and layer norm, rope. Their factories take the
composition to run (`attention_kernel`, `rope_kernel`), so that a backend that computes
them another way (`runtime/cpu/fast.py`) shares the meaning: operands, properties, masks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import mlx.core as mx

from mlxir.evaluator.registry import (
    KERNELS,
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    flag_of,
    float_of,
    int_of,
    ints_of,
    kernel,
    mixed_list,
    segments_of,
)


class Attention(Protocol):
    """`mx.fast.scaled_dot_product_attention`'s signature: what a backend may replace."""

    def __call__(
        self, queries: mx.array, keys: mx.array, values: mx.array, /, *, scale: float, mask: Any
    ) -> mx.array: ...


class Rope(Protocol):
    """`mx.fast.rope`'s signature: what a backend may replace."""

    def __call__(
        self,
        x: mx.array,
        dims: int,
        /,
        *,
        traditional: bool,
        base: float | None,
        scale: float,
        offset: Any,
        freqs: mx.array | None,
    ) -> mx.array: ...


def attention_kernel(attention: Attention) -> KernelFactory:
    """The kernel factory of `mlx.scaled_dot_product_attention` computed by `attention`:
    a bool mask keeps True, an additive mask adds; "causal" is lower-right aligned; K/V
    may have fewer heads (GQA); with `zero_masked_rows`, a query row whose mask allows
    no key gives zeros."""

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        scale = float_of(props, "scale")
        if props.get("mask_mode") == "causal":
            return lambda operands: (
                attention(operands[0], operands[1], operands[2], scale=scale, mask="causal"),
            )

        def run(operands: Sequence[Any]) -> Sequence[Any]:
            # The mask is an optional operand without segment sizes: present iff 4 operands.
            mask = operands[3] if len(operands) > 3 else None
            return (attention(operands[0], operands[1], operands[2], scale=scale, mask=mask),)

        if not flag_of(props, "zero_masked_rows"):
            return run

        def zeroing_masked_rows(operands: Sequence[Any]) -> Sequence[Any]:
            (out,) = run(operands)
            mask = operands[3]
            attendable = mask if mask.dtype == mx.bool_ else mask > -math.inf
            keeps = mx.any(attendable, axis=-1, keepdims=True)
            return (mx.where(keeps, out, mx.zeros((), dtype=out.dtype)),)

        return zeroing_masked_rows

    return factory


def rope_kernel(rope: Rope) -> KernelFactory:
    """The kernel factory of `mlx.rope` computed by `rope`: the offset is static,
    dynamic (an `index` operand), per row (a tensor operand added to it), and a rank-2
    input is taken as one batch (`mx.fast.rope` wants rank >= 3)."""

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        options: dict[str, Any] = {
            "traditional": flag_of(props, "traditional"),
            "base": float_of(props, "base") if "base" in props else None,
            "scale": float_of(props, "scale"),
        }
        dims = int_of(props, "dims")
        _, dynamic_offset, has_freqs, has_rows = segments_of(props)
        offset_of = mixed_list(ints_of(props, "static_offset"))
        freqs_at = 1 + dynamic_offset
        rows_at = freqs_at + has_freqs

        def run(operands: Sequence[Any]) -> Sequence[Any]:
            x = operands[0]
            offset: Any = offset_of(operands[1:freqs_at])[0]
            if has_rows:
                offset = operands[rows_at] + offset if offset else operands[rows_at]
            freqs = operands[freqs_at] if has_freqs else None
            if x.ndim == 2:
                return (rope(x[None], dims, offset=offset, freqs=freqs, **options)[0],)
            return (rope(x, dims, offset=offset, freqs=freqs, **options),)

        return run

    return factory


KERNELS["mlx.scaled_dot_product_attention"] = attention_kernel(
    mx.fast.scaled_dot_product_attention
)
KERNELS["mlx.rope"] = rope_kernel(mx.fast.rope)


@kernel("mlx.rms_norm")
def _rms_norm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    eps = float_of(props, "eps")
    rms_norm = mx.fast.rms_norm
    return lambda operands: (
        rms_norm(operands[0], operands[1] if len(operands) > 1 else None, eps),
    )


@kernel("mlx.layer_norm")
def _layer_norm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    eps = float_of(props, "eps")
    _, has_weight, has_bias = segments_of(props)
    layer_norm = mx.fast.layer_norm
    bias_at = 1 + has_weight

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        weight = operands[1] if has_weight else None
        bias = operands[bias_at] if has_bias else None
        return (layer_norm(operands[0], weight, bias, eps),)

    return run
