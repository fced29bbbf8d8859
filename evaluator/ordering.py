"""Arg reductions, sorts, scans, softmax, and the ops whose result depends on values
(`SYNC_OPS`: nonzero, unique, repeat_interleave, item)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import mlx.core as mx

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
    kernel,
)


def _arg_reduction_of(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axis = int_of(props, "axis") if "axis" in props else None  # None: flattened
        keepdims = flag_of(props, "keepdims")
        cast_result = cast_to(result_dtypes[0])  # MLX gives uint32
        return lambda operands: (cast_result(fn(operands[0], axis=axis, keepdims=keepdims)),)

    return factory


KERNELS.update({"mlx.argmax": _arg_reduction_of(mx.argmax), "mlx.argmin": _arg_reduction_of(mx.argmin)})


def _sort_of(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axis = int_of(props, "axis")
        cast_result = cast_to(result_dtypes[0])  # argsort gives uint32
        return lambda operands: (cast_result(fn(operands[0], axis=axis)),)

    return factory


KERNELS.update({"mlx.sort": _sort_of(mx.sort), "mlx.argsort": _sort_of(mx.argsort)})


SYNC_OPS: dict[str, str] = {
    "mlx.nonzero": "shape",
    "mlx.unique": "shape",
    "mlx.repeat_interleave": "shape",
    "mlx.item": "host integer",
}
"""Ops whose result (its shape, or an integer read on the host) depends on values: a
run evaluates what comes before them there, and a trace (`mx.compile`, MLX's exporter)
cannot hold them."""


@kernel("mlx.nonzero")
def _nonzero(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """The indices of the nonzero elements (NaN included), row-major. Counting them
    evaluates the input: the program's sync point. Each element's flat position is then
    placed at its running count (the others at a discarded last slot) and unravelled."""

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        flat = (x != 0).reshape(-1)
        count = int(mx.sum(flat).item())  # pyright: ignore[reportArgumentType] (an integer sum)
        positions = _first_slots(flat, count)
        coordinates: list[mx.array] = []
        stride = 1
        for size in reversed(x.shape):
            coordinates.append((positions // stride) % size)
            stride *= size
        if not coordinates:  # a 0-d input: [count, 0]
            return (mx.zeros((count, 0), dtype=mx.int64),)
        return (mx.stack(coordinates[::-1], axis=1),)

    return run


def _host_int(value: mx.array) -> int:
    """A one-element integer or bool array's value, read on the host (evaluating it)."""
    return int(cast(Any, value.item()))


def _first_slots(marks: mx.array, count: int) -> mx.array:
    """The flat positions of the true entries of the rank-1 `marks`, `count` of them:
    each placed at its running count, the others at a discarded last slot."""
    running = mx.cumsum(marks.astype(mx.int64)) - 1
    slots = mx.where(marks, running, count)
    positions = mx.zeros((count + 1,), dtype=mx.int64).at[slots].add(mx.arange(marks.size, dtype=mx.int64))  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
    return positions[:count]


@kernel("mlx.unique")
def _unique(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """Sorted (stably; MLX sorts NaN last), or left in input order with `consecutive`;
    a value starts a group where it differs from its predecessor (`!=`, so each NaN is
    its own group). Counting the groups evaluates the input: the sync point. Each
    element's group is its running count of starts; `inverse` puts each sorted
    element's group back at its input position, `counts` adds one per element."""
    consecutive = flag_of(props, "consecutive")
    want_inverse, want_counts = flag_of(props, "return_inverse"), flag_of(props, "return_counts")

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        flat = x.reshape(-1)
        nothing = mx.zeros((0,), dtype=mx.int64)  # built per call, on this thread's stream
        if flat.size == 0:
            return (flat, mx.zeros(x.shape, mx.int64) if want_inverse else nothing, nothing)
        order = None if consecutive else mx.argsort(flat.astype(mx.uint8) if flat.dtype == mx.bool_ else flat)
        ordered = flat if order is None else flat[order]
        starts = mx.concatenate([mx.array([True]), ordered[1:] != ordered[:-1]])
        group = mx.cumsum(starts.astype(mx.int64)) - 1
        count = _host_int(group[-1]) + 1
        output = ordered[_first_slots(starts, count)]
        inverse = nothing
        if want_inverse:
            inverse = group if order is None else mx.zeros_like(group).at[order].add(group)  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
            inverse = inverse.reshape(x.shape)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
        counts = mx.zeros((count,), dtype=mx.int64).at[group].add(1) if want_counts else nothing  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
        return (output, inverse, counts)

    return run


@kernel("mlx.repeat_interleave")
def _repeat_interleave(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """Summing `repeats` (and checking that none is negative, as ATen does) evaluates
    it: the sync point. Position `j` of the result is the number of runs that end at
    or before `j`: a mark is added where each run ends, and the marks are summed."""
    dtype = result_dtypes[0] or mx.int64

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        repeats = operands[0].astype(mx.int64)
        if repeats.size == 0:
            return (mx.zeros((0,), dtype=dtype),)
        total, least = mx.sum(repeats), mx.min(repeats)
        mx.eval(total, least)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        if _host_int(least) < 0:
            raise ValueError(f"repeats must not be negative, got {_host_int(least)}")
        size = _host_int(total)
        ends = mx.minimum(mx.cumsum(repeats), size)
        marks = mx.zeros((size + 1,), dtype=mx.int64).at[ends].add(1)  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
        return (mx.cumsum(marks[:size]).astype(dtype),)

    return run


@kernel("mlx.item")
def _item(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """The one element as a Python int (a bool as 0 or 1): the sync point."""
    return lambda operands: (_host_int(operands[0].reshape(-1)[0]),)


def _scan_of(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axis = int_of(props, "axis")
        reverse = flag_of(props, "reverse")
        inclusive = not flag_of(props, "exclusive")
        cast_result = cast_to(result_dtypes[0])  # cumsum of bool/int8 widens in MLX
        return lambda operands: (
            cast_result(fn(operands[0], axis=axis, reverse=reverse, inclusive=inclusive)),
        )

    return factory


KERNELS.update(
    {
        "mlx.cumsum": _scan_of(mx.cumsum),
        "mlx.cumprod": _scan_of(mx.cumprod),
        "mlx.cummax": _scan_of(mx.cummax),
        "mlx.cummin": _scan_of(mx.cummin),
        "mlx.logcumsumexp": _scan_of(mx.logcumsumexp),
    }
)


@kernel("mlx.softmax")
def _softmax(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(ints_of(props, "axes"))
    precise = flag_of(props, "precise")
    return lambda operands: (mx.softmax(operands[0], axis=axes, precise=precise),)


