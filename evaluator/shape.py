"""Shape ops: reshape, transpose, broadcast, concatenate, split, slice, pad, tile."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import mlx.core as mx

from mlxir.evaluator.registry import (
    Kernel,
    Props,
    ResultDtypes,
    float_of,
    int_of,
    ints_of,
    kernel,
    mixed_list,
    result_dtype,
    scalar_of,
    segments_of,
)


@kernel("mlx.reshape")
def _reshape(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    shape_of = mixed_list(ints_of(props, "static_shape"))
    return lambda operands: (mx.reshape(operands[0], shape_of(operands[1:])),)


@kernel("mlx.broadcast_to")
def _broadcast_to(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    shape_of = mixed_list(ints_of(props, "static_shape"))
    return lambda operands: (mx.broadcast_to(operands[0], shape_of(operands[1:])),)


@kernel("mlx.transpose")
def _transpose(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(ints_of(props, "axes"))
    return lambda operands: (mx.transpose(operands[0], axes),)


@kernel("mlx.expand_dims")
def _expand_dims(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(ints_of(props, "axes"))
    return lambda operands: (mx.expand_dims(operands[0], axes),)


@kernel("mlx.squeeze")
def _squeeze(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(ints_of(props, "axes"))
    return lambda operands: (mx.squeeze(operands[0], axes),)


@kernel("mlx.concatenate")
def _concatenate(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axis = int_of(props, "axis")
    return lambda operands: (mx.concatenate(list(operands), axis=axis),)


@kernel("mlx.split")
def _split(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    points = list(ints_of(props, "indices"))
    axis = int_of(props, "axis")
    if not points:
        return lambda operands: (operands[0],)
    return lambda operands: cast(Sequence[Any], mx.split(operands[0], points, axis=axis))


def _python_slice(start: int, stop: int, step: int, dim: int) -> slice:
    """Python's slice semantics, normalised (MLX takes only 32-bit bounds)."""
    start, stop, step = slice(start, stop, step).indices(dim)
    if step > 0:
        if start == 0 and stop >= dim and step == 1:
            return slice(None)
        return slice(start, max(stop, start), step)
    return slice(start, None if stop < 0 else stop, step)


@kernel("mlx.slice")
def _slice(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`x[start_0:stop_0:step_0, ...]` with Python's semantics (negative bounds count
    from the end, out-of-range bounds clamp, negative steps walk backwards)."""
    starts_of = mixed_list(ints_of(props, "static_start"))
    stops_of = mixed_list(ints_of(props, "static_stop"))
    strides = ints_of(props, "strides")
    _, n_start, _ = segments_of(props)

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        starts = starts_of(operands[1 : 1 + n_start])
        stops = stops_of(operands[1 + n_start :])
        key = tuple(
            _python_slice(a, b, s, d) for a, b, s, d in zip(starts, stops, strides, x.shape)
        )
        return (x[key],)

    return run



@kernel("mlx.pad")
def _pad(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    widths = list(zip(ints_of(props, "low"), ints_of(props, "high"), strict=True))
    value = scalar_of(float_of(props, "value"), result_dtype(result_dtypes))
    return lambda operands: (mx.pad(operands[0], widths, constant_values=value),)


@kernel("mlx.tile")
def _tile(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    reps = list(ints_of(props, "reps"))
    return lambda operands: (mx.tile(operands[0], reps),)


