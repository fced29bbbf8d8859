"""Elementwise ops and reductions (generated from the dialect's tables), casts, views, `where`."""

from __future__ import annotations

from collections.abc import Callable

import mlx.core as mx

from mlxir.dialects.elementwise import (
    MLX_BINARY_OPS,
    MLX_REDUCTION_OPS,
    MLX_UNARY_OPS,
)
from mlxir.evaluator.registry import (
    KERNELS,
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    cast_to,
    flag_of,
    int_of,
    ints_of,
    is_float,
    kernel,
    result_dtype,
)


def _elementwise(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        if is_float(result_dtypes[0]):  # MLX keeps a floating operand type
            return lambda operands: (fn(*operands),)
        cast_result = cast_to(result_dtypes[0])
        return lambda operands: (cast_result(fn(*operands)),)

    return factory


def _reduction(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axes = list(ints_of(props, "axes")) if "axes" in props else None
        keepdims = flag_of(props, "keepdims")
        cast_result = cast_to(result_dtypes[0])
        extra = {"ddof": int_of(props, "ddof")} if "ddof" in props else {}
        return lambda operands: (
            cast_result(fn(operands[0], axis=axes, keepdims=keepdims, **extra)),
        )

    return factory


KERNELS.update({f"mlx.{n}": _elementwise(getattr(mx, n)) for n in MLX_UNARY_OPS})
KERNELS.update({f"mlx.{n}": _elementwise(getattr(mx, n)) for n in MLX_BINARY_OPS})
KERNELS.update({f"mlx.{n}": _reduction(getattr(mx, n)) for n in MLX_REDUCTION_OPS})
KERNELS.update({"mlx.var": _reduction(mx.var), "mlx.std": _reduction(mx.std)})


def _torch_floor_divide(a: mx.array, b: mx.array) -> mx.array:
    """PyTorch's `div_floor_floating` (CPython's float floor division), on MLX.

    `q = (a - mod) / b` is an integer up to rounding, then rounded to it (ties down);
    a zero quotient takes the sign of `a / b`; `b == 0` gives `a / b`; an infinite `b`
    gives -1 or +-0 for finite `a`. Half types compute in float32, as PyTorch does."""
    dtype = a.dtype
    if dtype in (mx.float16, mx.bfloat16):
        a, b = a.astype(mx.float32), b.astype(mx.float32)
    mod = mx.remainder(a, b)  # Python's modulo: exact, with the divisor's sign
    quotient = a / b
    div = (a - mod) / b
    floor = mx.floor(div)
    q = mx.where(div - floor > 0.5, floor + 1, floor)
    q = mx.where(q == 0, quotient * 0, q)  # copysign(0, a / b)
    opposite = (a != 0) & ((a < 0) != (b < 0))
    infinite_b = mx.where(opposite, mx.array(-1, a.dtype), quotient * 0)
    q = mx.where(mx.isinf(b) & mx.isfinite(a), infinite_b, q)
    q = mx.where(b == 0, quotient, q)
    return q.astype(dtype) if q.dtype != dtype else q


@kernel("mlx.floor_divide")
def _floor_divide(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    if is_float(result_dtypes[0]):
        return lambda operands: (_torch_floor_divide(operands[0], operands[1]),)
    return _elementwise(mx.floor_divide)(props, result_dtypes)


@kernel("mlx.astype")
def _astype(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = result_dtype(result_dtypes)
    return lambda operands: (operands[0].astype(dtype),)


@kernel("mlx.view")
def _view(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = result_dtype(result_dtypes)
    return lambda operands: (operands[0].view(dtype),)


@kernel("mlx.where")
def _where(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (mx.where(operands[0], operands[1], operands[2]),)


