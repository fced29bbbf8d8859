"""The kernel registry (`KERNELS`: op name -> factory) and what every kernel family
shares: the factory's types and the readers of an op's properties, run at load."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import mlx.core as mx

Value = mx.array | int
"""A runtime value: a tensor, or a Python int for an `index` (bool for an `i1`)."""

Props = Mapping[str, object]
ResultDtypes = Sequence[mx.Dtype | None]
Kernel = Callable[[Sequence[Any]], Sequence[Any]]
KernelFactory = Callable[[Props, ResultDtypes], Kernel]

KERNELS: dict[str, KernelFactory] = {}

DYNAMIC = -(2**63)
"""A static list's entry that takes the next `index` operand: xDSL's `DYNAMIC_INDEX`
(`dialects.common.DYNAMIC`, which a test checks this equals), spelled out so that the
runtime does not import xDSL."""

NOT_KERNELS = ("mlx.global", "mlx.weight", "mlx.load_state", "mlx.store_state")
"""Symbol ops: the program loader binds them (weights, state), no kernel runs them."""


def kernel(*names: str) -> Callable[[KernelFactory], KernelFactory]:
    def register(factory: KernelFactory) -> KernelFactory:
        for name in names:
            KERNELS[name] = factory
        return factory

    return register


# ---------------------------------------------------------------------------
# Property helpers (load time)
# ---------------------------------------------------------------------------


def ints_of(props: Props, key: str) -> tuple[int, ...]:
    return tuple(int(v) for v in cast(Sequence[int], props[key]))


def int_of(props: Props, key: str) -> int:
    return int(cast(int, props[key]))


def float_of(props: Props, key: str, default: float | None = None) -> float:
    if key not in props:
        if default is None:
            raise KeyError(key)
        return default
    return float(cast(float, props[key]))


def flag_of(props: Props, key: str) -> bool:
    return bool(props.get(key, False))


def segments_of(props: Props) -> tuple[int, ...]:
    return ints_of(props, "operandSegmentSizes")


def mixed_list(static: Sequence[int]) -> Callable[[Sequence[Any]], list[int]]:
    """A filler for a mixed static/dynamic list: `DYNAMIC` entries take the next
    `index` operand. With no dynamic entry the (shared, never mutated) list is returned."""
    base = [int(s) for s in static]
    positions = [i for i, s in enumerate(base) if s == DYNAMIC]
    if not positions:
        return lambda dynamic: base

    def fill(dynamic: Sequence[Any]) -> list[int]:
        out = list(base)
        for position, value in zip(positions, dynamic):
            out[position] = int(value)
        return out

    return fill


def cast_to(dtype: mx.Dtype | None) -> Callable[[mx.array], mx.array]:
    """Casts a kernel's result to the IR result type when MLX picked another one."""
    if dtype is None:
        return lambda y: y

    def cast_result(y: mx.array) -> mx.array:
        return y if y.dtype == dtype else y.astype(dtype)

    return cast_result


def is_float(dtype: mx.Dtype | None) -> bool:
    return dtype is not None and mx.issubdtype(dtype, mx.floating)


def result_dtype(dtypes: ResultDtypes) -> mx.Dtype:
    dtype = dtypes[0]
    if dtype is None:
        raise ValueError("the result must be a tensor")
    return dtype

def in_bounds(indices: mx.array, size: int) -> mx.array:
    """Indices clamped to `[-size, size)`. MLX does not check index values (an index past
    the end reads or writes outside the array's memory, and can crash the process);
    checking would force evaluation, so mlxir clamps instead: an out-of-range index
    addresses the nearest end, never foreign memory. Negative indices still wrap."""
    unsigned = indices.dtype in (mx.uint8, mx.uint16, mx.uint32, mx.uint64)
    return mx.clip(indices, 0 if unsigned else -size, max(size - 1, 0))


def scalar_of(value: float, dtype: mx.Dtype) -> mx.array:
    """`value` (an f64 property) as a 0-d array of `dtype`: bool is `value != 0`,
    integers truncate toward zero (as PyTorch casts a Scalar)."""
    if dtype == mx.bool_:
        return mx.array(value != 0)
    if not mx.issubdtype(dtype, mx.inexact):
        return mx.array(int(value), dtype=dtype)
    return mx.array(value, dtype=dtype)
