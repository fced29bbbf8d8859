"""Indexing: take, gather, scatter, slice updates. Out-of-range indices are clamped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import mlx.core as mx

from mlxir.evaluator.registry import (
    Kernel,
    Props,
    ResultDtypes,
    in_bounds,
    int_of,
    ints_of,
    kernel,
    mixed_list,
    segments_of,
)


@kernel("mlx.take")
def _take(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    if "axis" not in props:  # over the flattened input
        return lambda operands: (mx.take(operands[0], in_bounds(operands[1], operands[0].size)),)
    axis = int_of(props, "axis")
    return lambda operands: (
        mx.take(operands[0], in_bounds(operands[1], operands[0].shape[axis]), axis=axis),
    )


@kernel("mlx.take_along_axis")
def _take_along_axis(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axis = int_of(props, "axis")
    return lambda operands: (
        mx.take_along_axis(
            operands[0], in_bounds(operands[1], operands[0].shape[axis]), axis=axis
        ),
    )


class _AxisPlan:
    """How the indexed `axes` of a rank-`rank` input move to the front and back."""

    def __init__(self, axes: Sequence[int], rank: int):
        self.rank = rank
        self.axes = [a + rank if a < 0 else a for a in axes]
        self.rest = [d for d in range(rank) if d not in self.axes]
        self.perm = self.axes + self.rest
        self.identity = self.perm == list(range(rank))
        self.inverse = [self.perm.index(d) for d in range(rank)]


def _offset_grids(
    plan: _AxisPlan, indices: Sequence[mx.array], sizes: Sequence[int]
) -> tuple[mx.array, ...]:
    """One index array per input axis, broadcasting to `batch ++ sizes`: the slice of
    `sizes[d]` elements of axis `d` starts at `indices[k]` for the k-th indexed axis
    and at 0 elsewhere. The general form of MLX's gather/scatter addressing."""
    batch_rank = max((i.ndim for i in indices), default=0)
    rank = plan.rank
    grids: list[mx.array] = []
    for d in range(rank):
        shape = [1] * (batch_rank + rank)
        shape[batch_rank + d] = sizes[d]
        offsets = mx.arange(sizes[d]).reshape(shape)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
        if d in plan.axes:
            start = indices[plan.axes.index(d)]
            start = start.reshape([1] * (batch_rank - start.ndim) + list(start.shape) + [1] * rank)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
            grids.append(start + offsets.astype(start.dtype))
        else:
            grids.append(offsets)
    return tuple(grids)


def _grids_in_bounds(grids: Sequence[mx.array], shape: Sequence[int]) -> tuple[mx.array, ...]:
    return tuple(in_bounds(g, size) for g, size in zip(grids, shape))


@kernel("mlx.gather")
def _gather(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`result[b..., s...] = x[idx_0[b] + s_a0, ..., s_d, ...]`, shape `B ++ slice_sizes`.

    Python MLX has no general gather. The usual case (slice size 1 on every indexed
    axis) moves the indexed axes to the front and indexes them with the index arrays
    (numpy advanced indexing: the broadcast index dims come first), slices the other
    axes to their slice sizes, then re-inserts the indexed axes as size-1 dims. Any
    other slice size on an indexed axis takes index grids (`_offset_grids`)."""
    static_sizes = ints_of(props, "static_slice_sizes")
    rank = len(static_sizes)
    plan = _AxisPlan(ints_of(props, "axes"), rank)
    _, n_indices, _ = segments_of(props)
    sizes_of = mixed_list(static_sizes)
    unit_slices = all(static_sizes[a] == 1 for a in plan.axes)
    expand_offsets = plan.axes

    def general(operands: Sequence[Any]) -> Sequence[Any]:
        x, indices = operands[0], operands[1 : 1 + n_indices]
        sizes = sizes_of(operands[1 + n_indices :])
        return (x[_grids_in_bounds(_offset_grids(plan, indices, sizes), x.shape)],)

    if not unit_slices:
        return general

    def fast(operands: Sequence[Any]) -> Sequence[Any]:
        x, indices = operands[0], operands[1 : 1 + n_indices]
        sizes = sizes_of(operands[1 + n_indices :])
        shape = x.shape
        indices = [in_bounds(i, shape[a]) for i, a in zip(indices, plan.axes)]
        xt = x if plan.identity else mx.transpose(x, plan.perm)
        key: list[Any] = list(indices)
        trailing_full = 0
        for d in plan.rest:
            if sizes[d] == shape[d]:
                key.append(slice(None))
                trailing_full += 1
            else:
                key.append(slice(0, sizes[d]))
                trailing_full = 0
        if trailing_full:
            key = key[: len(key) - trailing_full]
        if len(key) == 1 and len(indices) == 1:
            y = mx.take(xt, indices[0], axis=0)
        else:
            y = xt[tuple(key)] if key else xt
        batch_rank = y.ndim - len(plan.rest)
        if not expand_offsets:
            return (y,)
        return (mx.expand_dims(y, [batch_rank + a for a in expand_offsets]),)

    return fast


_SCATTER_METHODS: dict[str, Callable[[Any, mx.array], mx.array]] = {
    "add": mx.ArrayAt.add,  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
    "prod": mx.ArrayAt.multiply,  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
    "max": mx.ArrayAt.maximum,  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
    "min": mx.ArrayAt.minimum,  # pyright: ignore[reportUnknownMemberType] (mlx's stub types ArrayAt's value with a bare NDArray)
}


def _scatter_set(x: mx.array, key: Any, updates: mx.array) -> mx.array:
    # `x[key] = u` rebinds the array object it is called on: write into a fresh
    # (lazy, no-copy) handle so that the operand, which others may read, stays intact.
    y = mx.stop_gradient(x)
    y[key] = updates
    return y


def _scatter_reduce(
    method: Callable[[Any, mx.array], mx.array],
) -> Callable[[mx.array, Any, mx.array], mx.array]:
    return lambda x, key, updates: method(x.at[key], updates)


@kernel("mlx.scatter")
def _scatter(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`updates` (`B ++ slice shape`) written into `x` with MLX's scatter addressing:
    slice element `s` of batch entry `b` goes to `x[idx_0[b] + s_a0, ..., s_d, ...]`.

    Usual case (every indexed axis' slice has size 1, the others start at 0): the
    indexed axes move to the front, the size-1 dims leave the updates, and
    `x.at[idx...]` (or `x[idx...] = u`) does the rest. Otherwise index grids."""
    axes = ints_of(props, "axes")
    reduce = cast(str, props.get("reduce", "none"))
    apply = _scatter_set if reduce == "none" else _scatter_reduce(_SCATTER_METHODS[reduce])

    n_indices = len(axes)
    plans: dict[int, _AxisPlan] = {}

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, indices, updates = operands[0], operands[1 : 1 + n_indices], operands[-1]
        shape = x.shape
        plan = plans.get(len(shape))
        if plan is None:
            plan = plans[len(shape)] = _AxisPlan(axes, len(shape))
        batch_rank = updates.ndim - len(shape)
        slice_shape = updates.shape[batch_rank:]
        if any(slice_shape[a] != 1 for a in plan.axes) or any(
            slice_shape[d] > shape[d] for d in plan.rest
        ):
            grids = _grids_in_bounds(_offset_grids(plan, indices, slice_shape), shape)
            return (apply(x, grids, updates),)
        indices = [in_bounds(i, shape[a]) for i, a in zip(indices, plan.axes)]
        key: list[Any] = list(indices)
        for d in plan.rest:
            key.append(slice(None) if slice_shape[d] == shape[d] else slice(0, slice_shape[d]))
        if plan.axes:
            updates = mx.squeeze(updates, [batch_rank + a for a in plan.axes])
        if plan.identity:
            return (apply(x, tuple(key), updates),)
        y = apply(mx.transpose(x, plan.perm), tuple(key), updates)
        return (mx.transpose(y, plan.inverse),)

    return run


@kernel("mlx.slice_update")
def _slice_update(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(ints_of(props, "axes"))
    starts_of = mixed_list(ints_of(props, "static_start"))

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, update = operands[0], operands[1]
        starts = starts_of(operands[2:])
        x_shape, u_shape = x.shape, update.shape
        clamped: list[int] = []
        for start, axis in zip(starts, axes):
            dim = x_shape[axis]
            if start < 0:
                start += dim
            clamped.append(max(0, min(start, dim - u_shape[axis])))
        return (mx.slice_update(x, update, mx.array(clamped), axes),)

    return run


@kernel("mlx.dynamic_slice_update")
def _dynamic_slice_update(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mlx.slice_update`'s start rule, with the start kept an array (a trace does not
    fix it) and clamped on the device: MLX's `DynamicSliceUpdate` writes past the
    input's memory from an out-of-range start."""
    axes = list(ints_of(props, "axes"))

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, update, start = operands
        x_shape, u_shape = x.shape, update.shape
        axes_here = [a % x.ndim for a in axes]
        if len(u_shape) != len(x_shape) or any(
            u > d if a in axes_here else u != d
            for a, (u, d) in enumerate(zip(u_shape, x_shape))
        ):
            raise ValueError(
                f"update of shape {tuple(u_shape)} does not fit input {tuple(x_shape)} "
                f"along axes {axes}"
            )
        dims: Any = [x_shape[a] for a in axes_here]
        highest: Any = [x_shape[a] - u_shape[a] for a in axes_here]
        if start.ndim == 0:
            dims, highest = dims[0], highest[0]
        else:
            dims, highest = mx.array(dims, dtype=start.dtype), mx.array(highest, dtype=start.dtype)
        # mlx.slice_update's rule: a negative start counts from the end, then clamps.
        start = mx.clip(mx.where(start < 0, start + dims, start), 0, highest)
        return (mx.slice_update(x, update, start, axes_here),)

    return run


