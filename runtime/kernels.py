"""The runtime's op kernels: one implementation over `mlx.core` per op of the `mlx`
dialect and per `arith` op on integer / `index` values.

`KERNELS[op_name]` is a factory, called once when a program is loaded:

    run = KERNELS["mlx.slice"](props, result_dtypes)
    results = run(operands)

`props` are the op's properties as plain Python values (`runtime.props.python_props`),
`result_dtypes` the MLX dtype of each result (None for an `index` or scalar result).
`run` takes the operands in the op's IR order (tensors as `mx.array`, `index` values as
Python ints) and returns the results in IR order. Everything that depends only on the
op (parsing properties, picking the MLX function, splitting mixed static/dynamic lists)
happens in the factory; a call only computes. No kernel evaluates an array: the
program evaluates its outputs once per call.

Semantics that differ from the bare `mx.*` call, on purpose (they are PyTorch's):
- `mlx.floor_divide` on floats is PyTorch's (and Python's) floor division, which
  `mx.floor_divide` (`floor(a / b)`) misses when `a / b` rounds up to an integer
  (`1.0 // 0.1` is 9.0, not 10.0). On integers MLX already floors (and
  `mx.remainder` already takes the divisor's sign), as PyTorch does.
- `mlx.matmul` / `mlx.addmm` on integers are computed exactly (MLX's BLAS path only
  takes floating point).
- `mlx.slice_update` and `mlx.dynamic_slice_update` clamp their start so the whole
  update lands inside the input (like XLA's dynamic_update_slice); a negative start
  counts from the end. MLX itself writes out of bounds (and can crash) on a negative
  or too large start.
- `mlx.rope` on a rank-2 input (the dialect allows it, `mx.fast.rope` needs rank 3).
- A result whose MLX dtype differs from the IR's (`argmax` gives uint32, `mean` of
  integers float32, `sum` of int8 int32, ...) is cast to the IR's result type.

Out-of-range indices of gather/take/scatter are clamped into bounds (`_in_bounds`):
checking them would force an evaluation, and MLX reads or writes out of bounds. The
lowering wraps negative indices first.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import mlx.core as mx

from mlxir.dialects.elementwise import MLX_BINARY_OPS, MLX_REDUCTION_OPS, MLX_UNARY_OPS
from mlxir.runtime.dtypes import to_mx
from mlxir.runtime.streams import cpu_streams

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


def _kernel(*names: str) -> Callable[[KernelFactory], KernelFactory]:
    def register(factory: KernelFactory) -> KernelFactory:
        for name in names:
            KERNELS[name] = factory
        return factory

    return register


# ---------------------------------------------------------------------------
# Property helpers (load time)
# ---------------------------------------------------------------------------


def _ints(props: Props, key: str) -> tuple[int, ...]:
    return tuple(int(v) for v in cast(Sequence[int], props[key]))


def _int(props: Props, key: str) -> int:
    return int(cast(int, props[key]))


def _float(props: Props, key: str, default: float | None = None) -> float:
    if key not in props:
        if default is None:
            raise KeyError(key)
        return default
    return float(cast(float, props[key]))


def _flag(props: Props, key: str) -> bool:
    return bool(props.get(key, False))


def _segments(props: Props) -> tuple[int, ...]:
    return _ints(props, "operandSegmentSizes")


def _mixed(static: Sequence[int]) -> Callable[[Sequence[Any]], list[int]]:
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


def _cast_to(dtype: mx.Dtype | None) -> Callable[[mx.array], mx.array]:
    """Casts a kernel's result to the IR result type when MLX picked another one."""
    if dtype is None:
        return lambda y: y

    def cast_result(y: mx.array) -> mx.array:
        return y if y.dtype == dtype else y.astype(dtype)

    return cast_result


def _is_float(dtype: mx.Dtype | None) -> bool:
    return dtype is not None and mx.issubdtype(dtype, mx.floating)


def _result(dtypes: ResultDtypes) -> mx.Dtype:
    dtype = dtypes[0]
    if dtype is None:
        raise ValueError("the result must be a tensor")
    return dtype


# ---------------------------------------------------------------------------
# Elementwise, reductions: generated from the dialect's tables
# ---------------------------------------------------------------------------


def _elementwise(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        if _is_float(result_dtypes[0]):  # MLX keeps a floating operand type
            return lambda operands: (fn(*operands),)
        cast_result = _cast_to(result_dtypes[0])
        return lambda operands: (cast_result(fn(*operands)),)

    return factory


def _reduction(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axes = list(_ints(props, "axes")) if "axes" in props else None
        keepdims = _flag(props, "keepdims")
        cast_result = _cast_to(result_dtypes[0])
        extra = {"ddof": _int(props, "ddof")} if "ddof" in props else {}
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


@_kernel("mlx.floor_divide")
def _floor_divide(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    if _is_float(result_dtypes[0]):
        return lambda operands: (_torch_floor_divide(operands[0], operands[1]),)
    return _elementwise(mx.floor_divide)(props, result_dtypes)


@_kernel("mlx.astype")
def _astype(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = _result(result_dtypes)
    return lambda operands: (operands[0].astype(dtype),)


@_kernel("mlx.view")
def _view(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = _result(result_dtypes)
    return lambda operands: (operands[0].view(dtype),)


@_kernel("mlx.where")
def _where(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (mx.where(operands[0], operands[1], operands[2]),)


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------


def _in_bounds(indices: mx.array, size: int) -> mx.array:
    """Indices clamped to `[-size, size)`. MLX does not check index values (an index past
    the end reads or writes outside the array's memory, and can crash the process);
    checking would force evaluation, so mlxir clamps instead: an out-of-range index
    addresses the nearest end, never foreign memory. Negative indices still wrap."""
    unsigned = indices.dtype in (mx.uint8, mx.uint16, mx.uint32, mx.uint64)
    return mx.clip(indices, 0 if unsigned else -size, max(size - 1, 0))


@_kernel("mlx.take")
def _take(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    if "axis" not in props:  # over the flattened input
        return lambda operands: (mx.take(operands[0], _in_bounds(operands[1], operands[0].size)),)
    axis = _int(props, "axis")
    return lambda operands: (
        mx.take(operands[0], _in_bounds(operands[1], operands[0].shape[axis]), axis=axis),
    )


@_kernel("mlx.take_along_axis")
def _take_along_axis(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axis = _int(props, "axis")
    return lambda operands: (
        mx.take_along_axis(
            operands[0], _in_bounds(operands[1], operands[0].shape[axis]), axis=axis
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
    grids = []
    for d in range(rank):
        shape = [1] * (batch_rank + rank)
        shape[batch_rank + d] = sizes[d]
        offsets = mx.arange(sizes[d]).reshape(shape)
        if d in plan.axes:
            start = indices[plan.axes.index(d)]
            start = start.reshape([1] * (batch_rank - start.ndim) + list(start.shape) + [1] * rank)
            grids.append(start + offsets.astype(start.dtype))
        else:
            grids.append(offsets)
    return tuple(grids)


def _grids_in_bounds(grids: Sequence[mx.array], shape: Sequence[int]) -> tuple[mx.array, ...]:
    return tuple(_in_bounds(g, size) for g, size in zip(grids, shape))


@_kernel("mlx.gather")
def _gather(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`result[b..., s...] = x[idx_0[b] + s_a0, ..., s_d, ...]`, shape `B ++ slice_sizes`.

    Python MLX has no general gather. The usual case (slice size 1 on every indexed
    axis) moves the indexed axes to the front and indexes them with the index arrays
    (numpy advanced indexing: the broadcast index dims come first), slices the other
    axes to their slice sizes, then re-inserts the indexed axes as size-1 dims. Any
    other slice size on an indexed axis takes index grids (`_offset_grids`)."""
    static_sizes = _ints(props, "static_slice_sizes")
    rank = len(static_sizes)
    plan = _AxisPlan(_ints(props, "axes"), rank)
    _, n_indices, _ = _segments(props)
    sizes_of = _mixed(static_sizes)
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
        indices = [_in_bounds(i, shape[a]) for i, a in zip(indices, plan.axes)]
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
    "add": mx.ArrayAt.add,
    "prod": mx.ArrayAt.multiply,
    "max": mx.ArrayAt.maximum,
    "min": mx.ArrayAt.minimum,
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


@_kernel("mlx.scatter")
def _scatter(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`updates` (`B ++ slice shape`) written into `x` with MLX's scatter addressing:
    slice element `s` of batch entry `b` goes to `x[idx_0[b] + s_a0, ..., s_d, ...]`.

    Usual case (every indexed axis' slice has size 1, the others start at 0): the
    indexed axes move to the front, the size-1 dims leave the updates, and
    `x.at[idx...]` (or `x[idx...] = u`) does the rest. Otherwise index grids."""
    axes = _ints(props, "axes")
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
        indices = [_in_bounds(i, shape[a]) for i, a in zip(indices, plan.axes)]
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


@_kernel("mlx.slice_update")
def _slice_update(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(_ints(props, "axes"))
    starts_of = _mixed(_ints(props, "static_start"))

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, update = operands[0], operands[1]
        starts = starts_of(operands[2:])
        x_shape, u_shape = x.shape, update.shape
        clamped = []
        for start, axis in zip(starts, axes):
            dim = x_shape[axis]
            if start < 0:
                start += dim
            clamped.append(max(0, min(start, dim - u_shape[axis])))
        return (mx.slice_update(x, update, mx.array(clamped), axes),)

    return run


@_kernel("mlx.dynamic_slice_update")
def _dynamic_slice_update(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mlx.slice_update`'s start rule, with the start kept an array (a trace does not
    fix it) and clamped on the device: MLX's `DynamicSliceUpdate` writes past the
    input's memory from an out-of-range start."""
    axes = list(_ints(props, "axes"))

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


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------


@_kernel("mlx.reshape")
def _reshape(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    shape_of = _mixed(_ints(props, "static_shape"))
    return lambda operands: (mx.reshape(operands[0], shape_of(operands[1:])),)


@_kernel("mlx.broadcast_to")
def _broadcast_to(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    shape_of = _mixed(_ints(props, "static_shape"))
    return lambda operands: (mx.broadcast_to(operands[0], shape_of(operands[1:])),)


@_kernel("mlx.transpose")
def _transpose(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(_ints(props, "axes"))
    return lambda operands: (mx.transpose(operands[0], axes),)


@_kernel("mlx.expand_dims")
def _expand_dims(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(_ints(props, "axes"))
    return lambda operands: (mx.expand_dims(operands[0], axes),)


@_kernel("mlx.squeeze")
def _squeeze(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(_ints(props, "axes"))
    return lambda operands: (mx.squeeze(operands[0], axes),)


@_kernel("mlx.concatenate")
def _concatenate(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axis = _int(props, "axis")
    return lambda operands: (mx.concatenate(list(operands), axis=axis),)


# MLX implements its linear algebra on the CPU only (LAPACK): these run on the CPU
# stream whatever the default device, as `mx.linalg` requires. Its inverse and solves
# of 0x0 matrices stop the process (SIGFPE, MLX 0.32): those are empty, and need no
# kernel.


def _unless_empty(fn: Callable[..., mx.array], *flags: str) -> KernelFactory:
    """`fn(*operands, flags..., stream=cpu)`, or, for 0x0 matrices, the last operand
    (the matrices, or the right-hand sides): empty, of the result's shape."""

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        options = {flag: _flag(props, flag) for flag in flags}

        def run(operands: Sequence[mx.array]) -> tuple[mx.array]:
            if operands[0].shape[-1] == 0:
                return (operands[-1],)
            return (fn(*operands, **options, stream=mx.cpu),)

        return run

    return factory


KERNELS.update(
    {
        "mlx.linalg_inv": _unless_empty(mx.linalg.inv),
        "mlx.linalg_solve": _unless_empty(mx.linalg.solve),
        "mlx.linalg_solve_triangular": _unless_empty(mx.linalg.solve_triangular, "upper"),
        "mlx.linalg_cholesky_inv": _unless_empty(mx.linalg.cholesky_inv, "upper"),
        "mlx.linalg_cholesky": _unless_empty(mx.linalg.cholesky, "upper"),
    }
)


@_kernel("mlx.fftn")
def _fftn(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """MLX's FFT over `axes`: `inverse` and `real` pick fftn, ifftn, rfftn or irfftn;
    irfftn's last signal size is `last_size`, its others the input's."""
    axes = list(_ints(props, "axes"))
    inverse, real = _flag(props, "inverse"), _flag(props, "real")
    if real and inverse:
        last_size = _int(props, "last_size")

        def irfftn(operands: Sequence[mx.array]) -> tuple[mx.array]:
            sizes = tuple(operands[0].shape[axis] for axis in axes[:-1])
            return (mx.fft.irfftn(operands[0], s=(*sizes, last_size), axes=axes),)

        return irfftn
    transform = mx.fft.rfftn if real else mx.fft.ifftn if inverse else mx.fft.fftn
    return lambda operands: (transform(operands[0], axes=axes),)


@_kernel("mlx.linalg_det")
def _linalg_det(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (mx.linalg.det(operands[0], stream=mx.cpu),)


@_kernel("mlx.linalg_slogdet")
def _linalg_slogdet(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: tuple(mx.linalg.slogdet(operands[0], stream=mx.cpu))


@_kernel("mlx.linalg_qr")
def _linalg_qr(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: tuple(mx.linalg.qr(operands[0], stream=mx.cpu))


@_kernel("mlx.linalg_lu_factor")
def _linalg_lu_factor(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """LU with partial pivoting; pivots cast from MLX's uint32. Matrices with no
    element stop the process in MLX (SIGFPE, 0.32): their factors are the (empty)
    input itself and pivots of the right shape, zeros where a batch is not empty."""
    pivots_dtype = _result(result_dtypes[1:])

    def run(operands: Sequence[mx.array]) -> tuple[mx.array, mx.array]:
        a = operands[0]
        *batch, m, n = a.shape
        if a.size == 0:
            return a, mx.zeros((*batch, min(m, n)), dtype=pivots_dtype)
        lu, pivots = mx.linalg.lu_factor(a, stream=mx.cpu)
        return lu, pivots.astype(pivots_dtype)

    return run


@_kernel("mlx.linalg_svd")
def _linalg_svd(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: tuple(mx.linalg.svd(operands[0], stream=mx.cpu))


@_kernel("mlx.linalg_svdvals")
def _linalg_svdvals(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (mx.linalg.svd(operands[0], compute_uv=False, stream=mx.cpu),)


@_kernel("mlx.linalg_eigh")
def _linalg_eigh(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    uplo = "U" if _flag(props, "upper") else "L"
    return lambda operands: tuple(mx.linalg.eigh(operands[0], UPLO=uplo, stream=mx.cpu))


@_kernel("mlx.linalg_eigvalsh")
def _linalg_eigvalsh(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    uplo = "U" if _flag(props, "upper") else "L"
    return lambda operands: (mx.linalg.eigvalsh(operands[0], UPLO=uplo, stream=mx.cpu),)


@_kernel("mlx.split")
def _split(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    points = list(_ints(props, "indices"))
    axis = _int(props, "axis")
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


@_kernel("mlx.slice")
def _slice(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`x[start_0:stop_0:step_0, ...]` with Python's semantics (negative bounds count
    from the end, out-of-range bounds clamp, negative steps walk backwards)."""
    starts_of = _mixed(_ints(props, "static_start"))
    stops_of = _mixed(_ints(props, "static_stop"))
    strides = _ints(props, "strides")
    _, n_start, _ = _segments(props)

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        starts = starts_of(operands[1 : 1 + n_start])
        stops = stops_of(operands[1 + n_start :])
        key = tuple(
            _python_slice(a, b, s, d) for a, b, s, d in zip(starts, stops, strides, x.shape)
        )
        return (x[key],)

    return run


def _scalar_of(value: float, dtype: mx.Dtype) -> mx.array:
    """`value` (an f64 property) as a 0-d array of `dtype`: bool is `value != 0`,
    integers truncate toward zero (as PyTorch casts a Scalar)."""
    if dtype == mx.bool_:
        return mx.array(value != 0)
    if not mx.issubdtype(dtype, mx.inexact):
        return mx.array(int(value), dtype=dtype)
    return mx.array(value, dtype=dtype)


@_kernel("mlx.pad")
def _pad(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    widths = list(zip(_ints(props, "low"), _ints(props, "high"), strict=True))
    value = _scalar_of(_float(props, "value"), _result(result_dtypes))
    return lambda operands: (mx.pad(operands[0], widths, constant_values=value),)


@_kernel("mlx.tile")
def _tile(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    reps = list(_ints(props, "reps"))
    return lambda operands: (mx.tile(operands[0], reps),)


# ---------------------------------------------------------------------------
# Linear algebra, convolution
# ---------------------------------------------------------------------------


def _exact_matmul(a: mx.array, b: mx.array) -> mx.array:
    """Integer (or bool) matmul, exact, wrapping like the type: MLX's matmul is
    floating-point only. Materialises `[..., M, K, N]`: integer matmuls are small."""
    return mx.sum(mx.expand_dims(a, -1) * mx.expand_dims(b, -3), axis=-2)


@_kernel("mlx.matmul")
def _matmul(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = _result(result_dtypes)
    if _is_float(dtype):
        return lambda operands: (mx.matmul(operands[0], operands[1]),)
    cast_result = _cast_to(dtype)
    return lambda operands: (cast_result(_exact_matmul(operands[0], operands[1])),)


@_kernel("mlx.addmm")
def _addmm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`beta * c + alpha * (a @ b)`; with `beta` 0, `c` is ignored (NaN in it does not
    propagate), in MLX as in PyTorch."""
    alpha, beta = _float(props, "alpha", 1.0), _float(props, "beta", 1.0)
    dtype = _result(result_dtypes)
    if _is_float(dtype):  # mx.addmm already skips c when beta is 0
        return lambda operands: (
            mx.addmm(operands[0], operands[1], operands[2], alpha=alpha, beta=beta),
        )
    cast_result = _cast_to(dtype)
    alpha_s, beta_s = _scalar_of(alpha, dtype), _scalar_of(beta, dtype)

    def integer(operands: Sequence[Any]) -> Sequence[Any]:
        product = cast_result(_exact_matmul(operands[1], operands[2]))
        if alpha != 1.0:
            product = product * alpha_s
        if beta == 0.0:
            return (product,)
        c = operands[0] if beta == 1.0 else operands[0] * beta_s
        return (cast_result(c + product),)

    return integer


CPU_DEQUANTIZED_ROWS = 8
"""From this many rows of `x` on, MLX's CPU backend computes a quantized product faster
as the float product with the dequantized weight: its quantized kernel's time grows
with every row, a dequantization's does not (4 bits, groups of 64, one thread: at 8
rows the two tie on a 32000 x 256 LM head, 84 against 76 ms, and on a 1408 x 256
weight the dequantized product is 2.3 times faster, 3.4 against 1.5 ms; at 32 rows
7.6 times, 13.2 against 1.7 ms). A decode step (one row) keeps the quantized kernel."""


@_kernel("mlx.quantized_matmul")
def _quantized_matmul(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.quantized_matmul`: `x @ dequantize(w).T` with `transpose`, else
    `x @ dequantize(w)`; `biases` (affine mode) is present iff there are 4 operands.
    On the CPU, from `CPU_DEQUANTIZED_ROWS` rows of `x` on, the same product as
    `x @ mx.dequantize(w)` (a float GEMM: the same values, summed in BLAS's order).
    Below that, a transposed weight's rows (the outputs) are cut into blocks computed
    concurrently on the CPU streams (`runtime.streams`: MLX's quantized CPU kernel uses
    one thread), whose results are the same bits as one product's."""
    options: dict[str, Any] = {
        "transpose": _flag(props, "transpose"),
        "group_size": _int(props, "group_size"),
        "bits": _int(props, "bits"),
        "mode": str(props["mode"]),
    }
    transpose = options["transpose"]
    dequantized = {k: v for k, v in options.items() if k != "transpose"}
    bits, group_size = options["bits"], options["group_size"]
    lean = options["mode"] == "affine" and bits in (2, 4, 8)
    on_cpu = mx.default_device() == mx.cpu
    quantized_matmul = mx.quantized_matmul

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, w, scales = operands[0], operands[1], operands[2]
        biases = operands[3] if len(operands) > 3 else None
        if on_cpu and x.size >= CPU_DEQUANTIZED_ROWS * x.shape[-1] > 0:
            if not (lean and biases is not None and w.ndim == 2):
                matrix = mx.dequantize(w, scales, biases, dtype=x.dtype, **dequantized)
                return (mx.matmul(x, matrix.T if transpose else matrix),)
            if not transpose:  # chunks of W's rows would split the sum: one piece
                return (mx.matmul(x, _affine_dequantize(w, scales, biases, bits, group_size, x.dtype)),)
            return (_dequantized_product(x, w, scales, biases, bits, group_size),)
        streams = cpu_streams() if on_cpu and transpose and w.ndim == 2 else ()
        blocks = _row_blocks(w.shape[0], w.shape[0] * w.shape[1] * 32 // bits, len(streams))
        if len(blocks) < 2:
            return (quantized_matmul(x, w, scales, biases, **options),)
        parts = [
            quantized_matmul(
                x, w[block], scales[block], None if biases is None else biases[block],
                stream=stream, **options,
            )
            for block, stream in zip(blocks, streams)
        ]
        return (mx.concatenate(parts, axis=-1),)

    return run


CPU_STREAM_OPS = frozenset({"mlx.quantized_matmul"})
"""The ops whose kernels may spread their work over the CPU streams (`_row_blocks`);
the float products by a weight that `weight_blocked_product` spreads are found by the
program at load."""

CPU_STREAM_MIN_ELEMENTS = 1 << 17
"""The fewest weight elements (unpacked) worth a CPU stream of their own: handing a
block to another stream and waiting for it cost about 50 us here (2 cores, 4 bits,
groups of 64, compiled, median of 300 timings: one row by 64 x 256 took 0.029 ms on
one stream, 0.078 as two halves), and MLX's one-thread quantized kernel reads about a
million elements a millisecond. In chains of 8 products, a 256 x 512 weight ran 4 %
slower split (1.22 against 1.17 ms), 512 x 512 16 % faster (1.72 against 2.04)."""


def _row_blocks(rows: int, elements: int, streams: int) -> list[slice]:
    """Rows of a weight cut into as many near-equal blocks as there are `streams`, and
    no more than give each `CPU_STREAM_MIN_ELEMENTS`; a single block means one op."""
    return _even_slices(rows, max(1, min(streams, rows, elements // CPU_STREAM_MIN_ELEMENTS)))


def _even_slices(total: int, count: int) -> list[slice]:
    """`range(total)` as `count` consecutive slices whose lengths differ by at most 1."""
    cuts = [total * k // count for k in range(count + 1)]
    return [slice(start, stop) for start, stop in zip(cuts, cuts[1:])]


CPU_SMALL_PRODUCT_OUTPUTS = 1200
"""The most outputs (rows x columns) of one block of `weight_blocked_product`.
OpenBLAS's SkylakeX/Cooperlake kernels (picked on AVX-512 machines, this one
included: 0.3.21, `openblas_get_corename()` says Cooperlake) compute a product
`x @ w.T` without packing its operands only when it has at most 1200 outputs, at
most 10^6 multiply-adds and a depth of at least 32 (`sgemm_small_kernel_permit`);
a bigger product packs the whole weight first, copying it once per call. One row by
a 32000 x 512 weight, one thread, median of 21: 12.2 ms as one product, 5.7 in
blocks of 1024 outputs; 3072 x 1024, 2.89 against 0.44 ms (`docs/blas.md`)."""

CPU_SMALL_PRODUCT_MACS = 10**6
"""The most multiply-adds (rows x columns x depth) of one block."""

CPU_SMALL_PRODUCT_MIN_DEPTH = 32
"""The shallowest product that OpenBLAS's small kernels take."""

CPU_BLOCKED_PRODUCT_ROWS = 8
"""From this many rows of `x` on, a product stays whole: the blocks shrink to 1200 /
rows outputs, so the gain shrinks with every row and then turns into a loss (by a
32000 x 512 weight, one thread, one stream, median of 11: 1 row 15.1 ms whole against
7.7 in blocks, 4 rows 14.5 against 10.0, 8 rows 15.1 against 13.4, 32 rows 24.1
against 32.8). Decode steps of up to 7 sequences are cut; prefills are not."""


CPU_SPREAD_PRODUCT_MACS = 1 << 19
"""Multiply-adds of a blocked product per CPU stream it spreads over: a smaller one runs
its blocks on one stream. Waking another stream's thread and waiting for its event
cost more than a small product saves: the small Llama's decode step (hidden 256, vocab
512), whose only blocked product is the 1408 x 256 gate/up projection, took 2.0 to 3.3
ms with its two blocks on two streams against 1.3 to 1.7 ms on one (medians of 32
steps, 3 per process, 2 processes each); its LM head at vocab 32000 (8.2 million
multiply-adds) was faster spread (3.7 to 5.6 ms against 4.8 to 6.7)."""


def _output_blocks(rows: int, columns: int, depth: int) -> list[slice]:
    """The product's output columns cut into the fewest near-equal blocks that each fit
    OpenBLAS's small kernels (`CPU_SMALL_PRODUCT_OUTPUTS`, `CPU_SMALL_PRODUCT_MACS`).
    It depends on the shape alone: the same outputs cut differently can differ in their
    last bits (BLAS's kernels accumulate in lanes), so the blocks must not follow the
    number of CPU streams."""
    per_block = max(1, min(CPU_SMALL_PRODUCT_OUTPUTS // rows, CPU_SMALL_PRODUCT_MACS // (rows * depth)))
    return _even_slices(columns, max(1, -(-columns // per_block)))


def is_cut_at_one_row(weight_t: mx.array) -> bool:
    """Whether `weight_blocked_product` cuts a product by `weight_t` (`w.T`) for one
    row of `x`, the most it ever cuts: a float32 matrix of depth at least
    `CPU_SMALL_PRODUCT_MIN_DEPTH` with more outputs than one block holds."""
    if weight_t.dtype != mx.float32 or weight_t.ndim != 2:
        return False
    depth, columns = weight_t.shape
    return depth >= CPU_SMALL_PRODUCT_MIN_DEPTH and len(_output_blocks(1, columns, depth)) > 1


WEIGHT_PRODUCT_OPERAND = {"mlx.matmul": 1, "mlx.addmm": 2}
"""Product ops, and the operand that is `w.T` when a `linear` layer made them: the
program hands such steps to `weight_blocked_product`."""


def weight_blocked_product(op: str, run: Kernel) -> Kernel:
    """`run`, a product kernel of `op` whose weight operand is `w.T` for a
    row-contiguous constant `w` (the program checks this at load), computed on the
    CPU for fewer than `CPU_BLOCKED_PRODUCT_ROWS` rows of float32 `x` (a decode step)
    as blocks of `w`'s rows (`_output_blocks`), spread over the CPU streams and
    concatenated: MLX's CPU matmul always calls BLAS's `sgemm`, which packs a large
    weight before it multiplies (`CPU_SMALL_PRODUCT_OUTPUTS`). Each block is a view
    of `w` (a slice of `w`'s rows is still a row-contiguous matrix, so MLX passes it
    to BLAS as a transposed operand, without a copy), and each output is the same
    dot product whichever stream runs its block (each stream takes a run of
    consecutive blocks). Anything else runs `run` whole."""
    if mx.default_device() != mx.cpu:
        return run
    at = WEIGHT_PRODUCT_OPERAND[op]
    # Per row count, the weight it was cut from and its blocks: evaluated views of its
    # memory, so that a call (or a compiled trace) reads them as constants instead of
    # slicing the weight again (a graph node per block and call).
    cut: dict[int, tuple[mx.array, list[mx.array]]] = {}

    def pieces(weight: mx.array, rows: int, blocks: list[slice]) -> list[mx.array]:
        cut_from, views = cut.get(rows, (None, []))
        if cut_from is not weight:
            views = [weight[:, block] for block in blocks]
            mx.eval(views)
            cut[rows] = (weight, views)
        return views

    def blocked(operands: Sequence[Any]) -> Sequence[Any]:
        x, weight = operands[at - 1], operands[at]
        depth = x.shape[-1] if x.ndim else 0
        if (
            x.dtype != mx.float32
            or weight.ndim != 2
            or depth < CPU_SMALL_PRODUCT_MIN_DEPTH
            or not 0 < x.size // depth < CPU_BLOCKED_PRODUCT_ROWS
            or mx.default_device() != mx.cpu  # the caller moved MLX to a GPU since the load
        ):
            return run(operands)
        rows, columns = x.size // depth, weight.shape[1]
        blocks = _output_blocks(rows, columns, depth)
        if len(blocks) < 2:
            return run(operands)
        spread = max(1, rows * columns * depth // CPU_SPREAD_PRODUCT_MACS)
        streams = cpu_streams()[: min(len(blocks), spread)] or (mx.default_stream(mx.cpu),)
        bias = operands[0]  # addmm's c (unused for matmul)
        cut_bias = at == 2 and bias.ndim > 0 and bias.shape[-1] == columns > 1
        # Rows as one matrix: one reshape in and out, where MLX would flatten and
        # unflatten around each block's product (the same products).
        flat = x if x.ndim == 2 or (cut_bias and bias.ndim > 1) else x.reshape(rows, depth)
        parts = []
        for index, (block, piece) in enumerate(zip(blocks, pieces(weight, rows, blocks))):
            sliced = list(operands)
            sliced[at - 1], sliced[at] = flat, piece
            if cut_bias:
                sliced[0] = bias[..., block]  # addmm's c, unless broadcast
            with mx.stream(streams[index * len(streams) // len(blocks)]):
                parts.append(run(sliced)[0])
        product = mx.concatenate(parts, axis=-1)
        return (product if flat is x else product.reshape(*x.shape[:-1], columns),)

    return blocked


CPU_DEQUANTIZED_CHUNK = 1 << 19
"""Bytes of dequantized weight (about) that `_dequantized_product` holds at a time."""


def _affine_dequantize(
    w: mx.array, scales: mx.array, biases: mx.array, bits: int, group_size: int, dtype: Any
) -> mx.array:
    """`mx.dequantize(w, scales, biases, dtype=dtype)` of a `[rows, packed]` affine
    matrix with 2, 4 or 8 bits, the same values (`q * scale + bias` in the scales'
    dtype, then `dtype`) with less memory on the CPU: MLX's CPU dequantization is
    composed of 32/bits shifts of the whole packed matrix and their uint32
    concatenation (as big as the float result) before the float ops; here the codes
    are unpacked as bytes (`uint8`, a quarter of the float result)."""
    rows = w.shape[0]
    packed = w.view(mx.uint8)  # little-endian: code j of a word is in byte j * bits // 8
    if bits == 8:
        codes = packed
    else:
        mask = (1 << bits) - 1
        codes = mx.stack(
            [packed & mask if s == 0 else (packed >> s) & mask if s + bits < 8 else packed >> s
             for s in range(0, 8, bits)],
            axis=-1,
        )
    codes = codes.reshape(rows, scales.shape[-1], group_size).astype(scales.dtype)
    matrix = (codes * scales[..., None] + biases[..., None]).reshape(rows, -1)
    return matrix if matrix.dtype == dtype else matrix.astype(dtype)


def _dequantized_product(
    x: mx.array, w: mx.array, scales: mx.array, biases: mx.array, bits: int, group_size: int
) -> mx.array:
    """`x @ dequantize(w).T` with W dequantized a block of rows (outputs) at a time,
    `CPU_DEQUANTIZED_CHUNK` bytes, each block made to wait (`mx.depends`) for the
    previous block's product: MLX's breadth-first schedule would otherwise dequantize
    many blocks, and the weights of the layers after, before their products, and the
    whole float weight lives at once. Each output is the same dot product over the
    whole input dim as with the whole matrix (the blocks split the outputs only)."""
    rows = w.shape[0]
    width = w.shape[1] * 32 // bits
    step = max(64, CPU_DEQUANTIZED_CHUNK // max(1, width * x.dtype.size) // 64 * 64)
    if step >= rows:
        return mx.matmul(x, _affine_dequantize(w, scales, biases, bits, group_size, x.dtype).T)
    parts: list[mx.array] = []
    after = x
    for start in range(0, rows, step):
        block = slice(start, min(start + step, rows))
        (codes,) = mx.depends([w[block]], [after])
        matrix = _affine_dequantize(codes, scales[block], biases[block], bits, group_size, x.dtype)
        after = mx.matmul(x, matrix.T)
        parts.append(after)
    return mx.concatenate(parts, axis=-1)


def _dequantizer(props: Props, result_dtypes: ResultDtypes) -> Callable[..., mx.array]:
    """`mx.dequantize(w, scales, biases)` of a `[rows, packed]` matrix, with the
    properties read once. `dtype` is the IR's result type: MLX infers it from the
    scales in affine mode (the verifier makes the two agree) and defaults to bfloat16
    in the microscaling modes, whose scales are `uint8`. MLX fails on an empty matrix
    (it cannot reshape one), so zero rows give zeros of the unpacked shape."""
    bits, dtype = _int(props, "bits"), result_dtypes[0]
    options: dict[str, Any] = {
        "group_size": _int(props, "group_size"),
        "bits": bits,
        "mode": str(props["mode"]),
        "dtype": dtype,
    }
    dequantize = mx.dequantize

    def run(w: mx.array, scales: mx.array, biases: mx.array | None) -> mx.array:
        if w.size == 0:
            return mx.zeros((w.shape[0], w.shape[1] * 32 // bits), dtype)
        return dequantize(w, scales, biases, **options)

    return run


@_kernel("mlx.dequantize")
def _dequantize(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.dequantize(w, scales, biases, ...)`; `biases` (affine mode) is present iff
    there are 3 operands."""
    dequantize = _dequantizer(props, result_dtypes)

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        biases = operands[2] if len(operands) > 2 else None
        return (dequantize(operands[0], operands[1], biases),)

    return run


@_kernel("mlx.quantized_take")
def _quantized_take(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """Rows `indices` of `w`, `scales` (and `biases`, present iff there are 4 operands),
    dequantized: mlx-lm's `QuantizedEmbedding`. The indices are flattened (MLX
    dequantizes nothing of rank < 2, so a 0-d index needs it) and clamped into bounds,
    as `mlx.take`'s are; the result is reshaped to `[*indices.shape, unpacked]`."""
    dequantize = _dequantizer(props, result_dtypes)
    take = mx.take

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        w, scales, indices = operands[0], operands[1], operands[-1]
        rows = _in_bounds(indices.reshape(-1), w.shape[0])
        biases = take(operands[2], rows, axis=0) if len(operands) > 3 else None
        table = dequantize(take(w, rows, axis=0), take(scales, rows, axis=0), biases)
        return (table.reshape(*indices.shape, table.shape[1]),)

    return run


@_kernel("mlx.conv_general")
def _conv_general(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.conv_general`, channels last: input `[N, *spatial, C]`, weight `[O, *k, C/g]`."""
    options: dict[str, Any] = {
        "stride": list(_ints(props, "stride")),
        "padding": (list(_ints(props, "padding_lo")), list(_ints(props, "padding_hi"))),
        "kernel_dilation": list(_ints(props, "kernel_dilation")),
        "input_dilation": list(_ints(props, "input_dilation")),
        "groups": _int(props, "groups"),
        "flip": _flag(props, "flip"),
    }
    return lambda operands: (mx.conv_general(operands[0], operands[1], **options),)


# ---------------------------------------------------------------------------
# Fast ops
# ---------------------------------------------------------------------------


_LOW_PRECISION = (mx.float16, mx.bfloat16)


@_kernel("mlx.scaled_dot_product_attention")
def _sdpa(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.fast.scaled_dot_product_attention`: a bool mask keeps True, an additive mask
    adds; "causal" is lower-right aligned; K/V may have fewer heads (GQA)."""
    scale = _float(props, "scale")
    fast_sdpa = mx.fast.scaled_dot_product_attention

    def sdpa(queries: Any, keys: Any, values: Any, *, scale: float, mask: Any) -> Any:
        if mx.default_device() != mx.cpu:
            return fast_sdpa(queries, keys, values, scale=scale, mask=mask)
        composed = fast_sdpa if isinstance(mask, str) else _cpu_sdpa
        # MLX's CPU backend composes attention in the operands' dtype, rounding scores
        # and probabilities to float16/bfloat16; torch's CPU kernel, like MLX's GPU
        # kernels, keeps them in float32. So does this, on the CPU.
        if queries.dtype in _LOW_PRECISION:
            out = composed(
                queries.astype(mx.float32), keys.astype(mx.float32), values.astype(mx.float32),
                scale=scale, mask=mask,
            )
            return out.astype(queries.dtype)
        return composed(queries, keys, values, scale=scale, mask=mask)

    if props.get("mask_mode") == "causal":
        return lambda operands: (
            sdpa(operands[0], operands[1], operands[2], scale=scale, mask="causal"),
        )

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        # The mask is an optional operand without segment sizes: present iff 4 operands.
        mask = operands[3] if len(operands) > 3 else None
        return (sdpa(operands[0], operands[1], operands[2], scale=scale, mask=mask),)

    if not _flag(props, "zero_masked_rows"):
        return run

    def zeroing_masked_rows(operands: Sequence[Any]) -> Sequence[Any]:
        (out,) = run(operands)
        mask = operands[3]
        attendable = mask if mask.dtype == mx.bool_ else mask > -math.inf
        keeps = mx.any(attendable, axis=-1, keepdims=True)
        return (mx.where(keeps, out, mx.zeros((), dtype=out.dtype)),)

    return zeroing_masked_rows


def _cpu_sdpa(q: mx.array, k: mx.array, v: mx.array, *, scale: float, mask: Any) -> mx.array:
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
        q = q.reshape(batch, kv_heads, rep * length, q.shape[-1])
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
    return out.reshape(batch, heads, length, v.shape[-1]) if rep > 1 else out


@_kernel("mlx.rms_norm")
def _rms_norm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    eps = _float(props, "eps")
    rms_norm = mx.fast.rms_norm
    return lambda operands: (
        rms_norm(operands[0], operands[1] if len(operands) > 1 else None, eps),
    )


@_kernel("mlx.layer_norm")
def _layer_norm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    eps = _float(props, "eps")
    _, has_weight, has_bias = _segments(props)
    layer_norm = mx.fast.layer_norm
    bias_at = 1 + has_weight

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        weight = operands[1] if has_weight else None
        bias = operands[bias_at] if has_bias else None
        return (layer_norm(operands[0], weight, bias, eps),)

    return run


@_kernel("mlx.rope")
def _rope(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    options: dict[str, Any] = {
        "traditional": _flag(props, "traditional"),
        "base": _float(props, "base") if "base" in props else None,
        "scale": _float(props, "scale"),
    }
    dims = _int(props, "dims")
    _, dynamic_offset, has_freqs, has_rows = _segments(props)
    offset_of = _mixed(_ints(props, "static_offset"))
    rope = mx.fast.rope
    freqs_at = 1 + dynamic_offset
    rows_at = freqs_at + has_freqs

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        offset: Any = offset_of(operands[1:freqs_at])[0]
        if has_rows:
            offset = operands[rows_at] + offset if offset else operands[rows_at]
        freqs = operands[freqs_at] if has_freqs else None
        fast = rope if mx.default_device() != mx.cpu else _cpu_rope
        if x.ndim == 2:  # mx.fast.rope wants rank >= 3
            return (fast(x[None], dims, offset=offset, freqs=freqs, **options)[0],)
        return (fast(x, dims, offset=offset, freqs=freqs, **options),)

    return run


_ROPE_CONSTANTS: dict[tuple[Any, ...], mx.array] = {}
"""The CPU rope's constants (positions `arange(T)` per length, rotation signs per
layout and dtype), evaluated once: the same array in every rope of a call, so that
`mx.compile` merges their angle tables into one, and no graph for another thread's
stream to evaluate."""


def _rope_constant(key: tuple[Any, ...], make: Callable[[], mx.array]) -> mx.array:
    value = _ROPE_CONSTANTS.get(key)
    if value is None:
        value = make()
        mx.eval(value)
        if len(_ROPE_CONSTANTS) < 4096:
            _ROPE_CONSTANTS[key] = value
    return value


def _cpu_rope(
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
        rotated = _cpu_rope(
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
        lambda: mx.array([-1, 1], dtype=x.dtype).reshape((2,) if traditional else (2, 1)),
    )
    pairs = x.reshape(*x.shape[:-1], *((half, 2) if traditional else (2, half)))
    partners = pairs[..., ::-1] if traditional else pairs[..., ::-1, :]
    cos, sin = mx.expand_dims(cos, pair_axis), mx.expand_dims(sin, pair_axis)
    return (pairs * cos + partners * (sin * signs)).reshape(x.shape)


# ---------------------------------------------------------------------------
# Arg reductions, scans, softmax
# ---------------------------------------------------------------------------


def _arg_reduction_of(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axis = _int(props, "axis") if "axis" in props else None  # None: flattened
        keepdims = _flag(props, "keepdims")
        cast_result = _cast_to(result_dtypes[0])  # MLX gives uint32
        return lambda operands: (cast_result(fn(operands[0], axis=axis, keepdims=keepdims)),)

    return factory


KERNELS.update({"mlx.argmax": _arg_reduction_of(mx.argmax), "mlx.argmin": _arg_reduction_of(mx.argmin)})


def _sort_of(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axis = _int(props, "axis")
        cast_result = _cast_to(result_dtypes[0])  # argsort gives uint32
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


@_kernel("mlx.nonzero")
def _nonzero(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """The indices of the nonzero elements (NaN included), row-major. Counting them
    evaluates the input: the program's sync point. Each element's flat position is then
    placed at its running count (the others at a discarded last slot) and unravelled."""

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        flat = (x != 0).reshape(-1)
        count = int(mx.sum(flat).item())  # pyright: ignore[reportArgumentType] (an integer sum)
        positions = _first_slots(flat, count)
        coordinates, stride = [], 1
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
    positions = mx.zeros((count + 1,), dtype=mx.int64).at[slots].add(mx.arange(marks.size, dtype=mx.int64))
    return positions[:count]


@_kernel("mlx.unique")
def _unique(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """Sorted (stably; MLX sorts NaN last), or left in input order with `consecutive`;
    a value starts a group where it differs from its predecessor (`!=`, so each NaN is
    its own group). Counting the groups evaluates the input: the sync point. Each
    element's group is its running count of starts; `inverse` puts each sorted
    element's group back at its input position, `counts` adds one per element."""
    consecutive = _flag(props, "consecutive")
    want_inverse, want_counts = _flag(props, "return_inverse"), _flag(props, "return_counts")

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
            inverse = group if order is None else mx.zeros_like(group).at[order].add(group)
            inverse = inverse.reshape(x.shape)
        counts = mx.zeros((count,), dtype=mx.int64).at[group].add(1) if want_counts else nothing
        return (output, inverse, counts)

    return run


@_kernel("mlx.repeat_interleave")
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
        mx.eval(total, least)
        if _host_int(least) < 0:
            raise ValueError(f"repeats must not be negative, got {_host_int(least)}")
        size = _host_int(total)
        ends = mx.minimum(mx.cumsum(repeats), size)
        marks = mx.zeros((size + 1,), dtype=mx.int64).at[ends].add(1)
        return (mx.cumsum(marks[:size]).astype(dtype),)

    return run


@_kernel("mlx.item")
def _item(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """The one element as a Python int (a bool as 0 or 1): the sync point."""
    return lambda operands: (_host_int(operands[0].reshape(-1)[0]),)


def _scan_of(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        axis = _int(props, "axis")
        reverse = _flag(props, "reverse")
        inclusive = not _flag(props, "exclusive")
        cast_result = _cast_to(result_dtypes[0])  # cumsum of bool/int8 widens in MLX
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


@_kernel("mlx.softmax")
def _softmax(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axes = list(_ints(props, "axes"))
    precise = _flag(props, "precise")
    return lambda operands: (mx.softmax(operands[0], axis=axes, precise=precise),)


# ---------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------


@_kernel("mlx.full")
def _full(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    # Operand order (IRDL): the 0-d value first, then the shape's index operands.
    shape_of = _mixed(_ints(props, "static_shape"))
    return lambda operands: (mx.full(shape_of(operands[1:]), operands[0]),)


def _filled(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        shape_of = _mixed(_ints(props, "static_shape"))
        dtype = _result(result_dtypes)
        return lambda operands: (fn(shape_of(operands), dtype=dtype),)

    return factory


KERNELS.update({"mlx.zeros": _filled(mx.zeros), "mlx.ones": _filled(mx.ones)})


def _drawn(fn: Callable[..., mx.array]) -> KernelFactory:
    """A draw from MLX's global generator: `mx.random.seed` makes a run repeatable."""

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        shape_of = _mixed(_ints(props, "static_shape"))
        dtype = _result(result_dtypes)
        return lambda operands: (fn(shape=shape_of(operands), dtype=dtype),)

    return factory


DRAWS: dict[str, Callable[..., mx.array]] = {
    "mlx.random_uniform": mx.random.uniform,
    "mlx.random_normal": mx.random.normal,
}
"""The ops that draw from MLX's generator: a program holding one runs interpreted, as
`mx.compile` would freeze the values drawn while tracing."""
KERNELS.update({name: _drawn(draw) for name, draw in DRAWS.items()})
RANDOM_OPS = frozenset(DRAWS)


@_kernel("mlx.arange")
def _arange(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    bounds_of = _mixed(_ints(props, "static_bounds"))
    dtype = _result(result_dtypes)

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        start, stop, step = bounds_of(operands)
        return (mx.arange(start, stop, step, dtype=dtype),)

    return run


@_kernel("mlx.diagonal")
def _diagonal(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    offset, axis1, axis2 = _int(props, "offset"), _int(props, "axis1"), _int(props, "axis2")
    return lambda operands: (mx.diagonal(operands[0], offset, axis1, axis2),)


@_kernel("mlx.tril")
def _tril(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    k = _int(props, "k")
    return lambda operands: (mx.tril(operands[0], k),)


@_kernel("mlx.triu")
def _triu(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    k = _int(props, "k")
    return lambda operands: (mx.triu(operands[0], k),)


@_kernel("mlx.constant")
def _constant(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    value = to_mx(props["value"], _result(result_dtypes))  # a NumPy array, or an mx.array from a program
    if isinstance(value, mx.array):
        # Computed now, in the loading thread: MLX cannot evaluate a graph built on
        # another thread's stream ("There is no Stream(cpu, 0) in current thread").
        mx.eval(value)
    result = (value,)
    return lambda operands: result


# ---------------------------------------------------------------------------
# Runtime integers
# ---------------------------------------------------------------------------


@_kernel("mlx.dim")
def _dim(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axis = _int(props, "axis")
    return lambda operands: (operands[0].shape[axis],)


@_kernel("mlx.from_index")
def _from_index(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = _result(result_dtypes)
    return lambda operands: (mx.array(operands[0], dtype=dtype),)


# ---------------------------------------------------------------------------
# arith on integers and `index` (Python ints; no fixed-width wrap-around)
# ---------------------------------------------------------------------------

_UNSIGNED = (1 << 64) - 1


def _remsi(a: int, b: int) -> int:
    """C's `%`: truncated division, the remainder takes the dividend's sign."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _unsigned(compare: Callable[[int, int], bool]) -> Callable[[int, int], bool]:
    # Two's complement as 64 bits: orders narrower integers the same way.
    return lambda a, b: compare(a & _UNSIGNED, b & _UNSIGNED)


CMPI_PREDICATES: tuple[Callable[[int, int], bool], ...] = (
    operator.eq,  # eq
    operator.ne,  # ne
    operator.lt,  # slt
    operator.le,  # sle
    operator.gt,  # sgt
    operator.ge,  # sge
    _unsigned(operator.lt),  # ult
    _unsigned(operator.le),  # ule
    _unsigned(operator.gt),  # ugt
    _unsigned(operator.ge),  # uge
)
"""`arith.cmpi` predicates by their enum value (eq = 0 ... uge = 9)."""


def _binary_int(fn: Callable[[int, int], Any]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        return lambda operands: (fn(operands[0], operands[1]),)

    return factory


KERNELS.update(
    {
        "arith.addi": _binary_int(operator.add),
        "arith.subi": _binary_int(operator.sub),
        "arith.muli": _binary_int(operator.mul),
        "arith.floordivsi": _binary_int(operator.floordiv),  # floor, as Python's //
        "arith.remsi": _binary_int(_remsi),
        "arith.minsi": _binary_int(min),
        "arith.maxsi": _binary_int(max),
    }
)


@_kernel("arith.constant")
def _arith_constant(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    result = (props["value"],)
    return lambda operands: result


@_kernel("arith.cmpi")
def _cmpi(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return _binary_int(CMPI_PREDICATES[_int(props, "predicate")])(props, result_dtypes)


@_kernel("arith.select")
def _select(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (operands[1] if operands[0] else operands[2],)


@_kernel("arith.index_cast")
def _index_cast(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (int(operands[0]),)


__all__ = [
    "CMPI_PREDICATES",
    "KERNELS",
    "NOT_KERNELS",
    "Kernel",
    "KernelFactory",
    "Value",
]
