"""`fuse-rope`: HF's rotary embeddings (rotate_half, interleaved and partial) at
contiguous positions → `mlx.rope`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float32Type,
    TensorType,
)
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, is_float, mixed_values, rank_of, shape_of
from mlxir.dialects.weights import array_of
from mlxir.support import dtypes
from mlxir.transforms.canonicalization.mlx import arange_length, constant_array
from mlxir.transforms.constant_weights import add_global, weight_global
from mlxir.transforms.known_dims import KnownDims, known_dims
from mlxir.transforms.matching import op_named, strip_upcast


def _constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a weight read or a small `mlx.constant`, seen through exact casts."""
    source = strip_upcast(value)
    found = weight_global(source)
    if found is not None:
        assert isinstance(found.value, DenseIntOrFPElementsAttr)
        array = array_of(found.value)
        if dtype_of(source) == BFloat16Type():  # bits; bfloat16 is f32's top half
            array = (array.astype(np.uint32) << 16).view(np.float32)
    else:
        constant = constant_array(source)
        if constant is None:
            return None
        array = constant
    dtype = dtypes.of_ir(dtype_of(value))
    if dtype is None:
        return None
    if dtype_of(value) == BFloat16Type():
        return None  # wanted as bfloat16 bits: no caller needs that
    return np.asarray(array).astype(dtype.numpy)


def _strip_float_casts(value: SSAValue) -> SSAValue:
    """`value` before float-to-float casts: HF casts cos/sin to the activations' dtype,
    which the fused kernel does once, on its result."""
    while isinstance(value.owner, mlx.AstypeOp) and is_float(dtype_of(value.owner.input)) and is_float(
        dtype_of(value)
    ):
        value = value.owner.input
    return value


class _Sizes:
    """Equal sizes, by the function's symbolic dims (`KnownDims`), computed on first
    use: only once a pattern has matched the structure it needs sizes for."""

    def __init__(self, anchor: Operation):
        self._anchor = anchor
        self._known: KnownDims | None = None
        self._computed = False

    def _dims(self) -> KnownDims | None:
        if not self._computed:
            self._known, self._computed = known_dims(self._anchor), True
        return self._known

    def same_size(self, value: SSAValue, axis: int, size: SSAValue | int) -> bool:
        shape = shape_of(value)
        if shape[axis % len(shape)] != DYNAMIC_INDEX:
            return shape[axis % len(shape)] == size
        known = self._dims()
        return known is not None and known.same_size(value, axis, size)

    def same_axes(self, a: SSAValue, a_axis: int, b: SSAValue, b_axis: int) -> bool:
        da, db = shape_of(a)[a_axis % rank_of(a)], shape_of(b)[b_axis % rank_of(b)]
        if DYNAMIC_INDEX not in (da, db):
            return da == db
        known = self._dims()
        return known is not None and known.same_axes(a, a_axis, b, b_axis)


def _full_axis(op: mlx.SliceOp, axis: int, sizes: _Sizes) -> bool:
    """The slice takes all of `axis`: from 0, step 1, to the input's size."""
    start = mixed_values(ints(op.static_start), op.start)[axis]
    stop = mixed_values(ints(op.static_stop), op.stop)[axis]
    if start != 0 or ints(op.strides)[axis] != 1:
        return False
    size = shape_of(op.input)[axis]
    if isinstance(stop, int):
        return size != DYNAMIC_INDEX and stop >= size
    return sizes.same_size(op.input, axis, stop)


def _last_axis_slice(value: SSAValue, sizes: _Sizes) -> tuple[SSAValue, int, int] | None:
    """`x[..., lo:hi]` → (x, lo, hi): a step-1 slice of the last axis, whole elsewhere,
    or a piece of a split of the last axis (`slices-to-split` makes slices one)."""
    op = value.owner
    if isinstance(op, mlx.SplitOp) and isinstance(value, OpResult):
        size = shape_of(op.input)[-1]
        if op.axis.value.data % rank_of(op.input) != rank_of(op.input) - 1 or size == DYNAMIC_INDEX:
            return None
        bounds = [0, *(min(point, size) for point in ints(op.indices)), size]  # MLX clamps
        return op.input, bounds[value.index], bounds[value.index + 1]
    if not isinstance(op, mlx.SliceOp) or set(ints(op.strides)) != {1}:
        return None
    last = rank_of(op.input) - 1
    if not all(_full_axis(op, axis, sizes) for axis in range(last)):
        return None
    lo = mixed_values(ints(op.static_start), op.start)[last]
    hi = mixed_values(ints(op.static_stop), op.stop)[last]
    size = shape_of(op.input)[last]
    if not isinstance(lo, int) or not isinstance(hi, int) or size == DYNAMIC_INDEX:
        return None
    if not 0 <= lo <= hi <= size:
        return None
    return op.input, lo, hi


def _rotated_half(value: SSAValue, sizes: _Sizes) -> SSAValue | None:
    """HF's `rotate_half(x)`: `cat(-x[..., h:], x[..., :h], -1)` with 2h x's last dim → x."""
    cat = value.owner
    if not isinstance(cat, mlx.ConcatenateOp) or len(cat.inputs) != 2:
        return None
    if cat.axis.value.data % rank_of(value) != rank_of(value) - 1:
        return None
    neg = op_named(cat.inputs[0], "mlx.negative")
    if neg is None:
        return None
    second, first = _last_axis_slice(neg.operands[0], sizes), _last_axis_slice(cat.inputs[1], sizes)
    if second is None or first is None or second[0] != first[0]:
        return None
    x, size = first[0], shape_of(first[0])[-1]
    if size % 2 or first[1:] != (0, size // 2) or second[1:] != (size // 2, size):
        return None
    return x


def _every_other(value: SSAValue, sizes: _Sizes) -> tuple[SSAValue, int] | None:
    """`x[..., first::2]` (first 0 or 1, whole elsewhere) → (x, first)."""
    op = value.owner
    if not isinstance(op, mlx.SliceOp):
        return None
    last = rank_of(op.input) - 1
    size = shape_of(op.input)[last]
    strides = list(ints(op.strides))
    if size == DYNAMIC_INDEX or size % 2 or strides[:-1] != [1] * last or strides[-1] != 2:
        return None
    if not all(_full_axis(op, axis, sizes) for axis in range(last)):
        return None
    first = mixed_values(ints(op.static_start), op.start)[last]
    stop = mixed_values(ints(op.static_stop), op.stop)[last]
    if first not in (0, 1) or not isinstance(stop, int) or stop < size - 1 + cast(int, first):
        return None
    return op.input, cast(int, first)


def _rotated_pairs(value: SSAValue, sizes: _Sizes) -> SSAValue | None:
    """The interleaved (GPT-J, Cohere) rotation of x's feature pairs,
    `stack([-x[..., 1::2], x[..., 0::2]], -1).flatten(-2)`: a reshape of
    `cat(expand_dims(-odd, r), expand_dims(even, r), r)` → x."""
    reshape = value.owner
    if not isinstance(reshape, mlx.ReshapeOp):
        return None
    cat = reshape.input.owner
    rank = rank_of(reshape.input)
    if not isinstance(cat, mlx.ConcatenateOp) or len(cat.inputs) != 2 or rank != rank_of(value) + 1:
        return None
    if cat.axis.value.data % rank != rank - 1 or shape_of(cat.result)[-1] != 2:
        return None
    pieces: list[SSAValue] = []
    for piece in cat.inputs:
        expand = piece.owner
        if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) in ([rank - 1], [-1])):
            return None
        pieces.append(expand.input)
    neg = op_named(pieces[0], "mlx.negative")
    if neg is None:
        return None
    odd, even = _every_other(neg.operands[0], sizes), _every_other(pieces[1], sizes)
    if odd is None or even is None or odd[0] != even[0] or (odd[1], even[1]) != (1, 0):
        return None
    x = even[0]
    if x.type != value.type or not all(
        sizes.same_axes(value, axis, x, axis) for axis in range(rank_of(x) - 1)
    ):
        return None
    return x


@dataclass(frozen=True)
class _Positions:
    """Contiguous positions: `offset + row_offsets[b] + t` for `t < length`."""

    length: SSAValue | int
    offset: SSAValue | int = 0
    row_offsets: SSAValue | None = None


def _scalar_offset(value: SSAValue) -> SSAValue | int | None:
    """A 0-d integer tensor as an index value or literal."""
    if shape_of(value) != () or is_float(dtype_of(value)):
        return None
    if isinstance(value.owner, mlx.FromIndexOp):
        return value.owner.input
    constant = constant_array(value)
    return int(constant.item()) if constant is not None else None


def _steps(value: SSAValue) -> tuple[SSAValue | int, SSAValue | int] | None:
    """`arange(0, n) [+ k]` (rank 1, k 0-d) → (n, k)."""
    length = arange_length(value)
    if length is not None:
        return length, 0
    add = op_named(value, "mlx.add")
    if add is None or rank_of(value) != 1:
        return None
    for a, k in (add.operands, reversed(add.operands)):
        length, offset = arange_length(a), _scalar_offset(k)
        if length is not None and offset is not None:
            return length, offset
    return None


def _contiguous_positions(value: SSAValue) -> _Positions | None:
    """Positions `[rows or 1, S]` that provably count up by one along S."""
    if rank_of(value) != 2 or is_float(dtype_of(value)):
        return None
    owner = value.owner
    if isinstance(owner, mlx.ExpandDimsOp) and list(ints(owner.axes)) == [0]:
        steps = _steps(owner.input)
        return None if steps is None else _Positions(steps[0], steps[1])
    add = op_named(value, "mlx.add")
    if add is None:
        return None
    for rows, steps_value in (add.operands, reversed(add.operands)):
        expand = rows.owner
        if not (
            isinstance(expand, mlx.ExpandDimsOp)
            and list(ints(expand.axes)) == [1]
            and rank_of(expand.input) == 1
            and shape_of(rows)[1] == 1
        ):
            continue
        if isinstance(steps_value.owner, mlx.ExpandDimsOp) and list(ints(steps_value.owner.axes)) == [0]:
            steps_value = steps_value.owner.input
        steps = _steps(steps_value)
        if steps is not None and dtype_of(expand.input) == dtype_of(value):
            return _Positions(steps[0], steps[1], expand.input)
    return None


@dataclass(frozen=True)
class _Angles:
    """`positions[..., None] * inv_freq`, repeated twice along the features: one copy
    after the other (`cat(f, f)`), or each angle twice in a row (`traditional`)."""

    positions: _Positions
    inv_freq: np.ndarray
    source: str
    traditional: bool = False


def _angles(value: SSAValue) -> _Angles | None:
    """`cat(f, f, -1)`, or `f` with each angle repeated twice in a row
    (`reshape(broadcast_to(f[..., None], [..., n, 2]), [..., 2n])`, torch's
    `repeat_interleave(f, 2, -1)`), with `f = float(positions[..., None]) * inv_freq`
    (rank 3)."""
    if rank_of(value) != 3:
        return None
    owner = value.owner
    if isinstance(owner, mlx.ConcatenateOp):
        if len(owner.inputs) != 2 or owner.inputs[0] != owner.inputs[1] or owner.axis.value.data % 3 != 2:
            return None
        return _angle_products(owner.inputs[0], traditional=False)
    if not isinstance(owner, mlx.ReshapeOp):
        return None
    broadcast = owner.input.owner
    if not isinstance(broadcast, mlx.BroadcastToOp) or shape_of(broadcast.result)[-1] != 2:
        return None
    expand = broadcast.input.owner
    if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) in ([3], [-1])):
        return None
    f = expand.input
    if shape_of(f)[-1] == DYNAMIC_INDEX or 2 * shape_of(f)[-1] != shape_of(value)[-1]:
        return None
    return _angle_products(f, traditional=True)


def _angle_products(value: SSAValue, traditional: bool) -> _Angles | None:
    """`float(positions[..., None]) * inv_freq`."""
    mul = op_named(value, "mlx.multiply")
    if mul is None or dtype_of(mul.results[0]) != Float32Type():
        return None
    for positions, inv in (mul.operands, reversed(mul.operands)):
        cast_op = positions.owner
        if not isinstance(cast_op, mlx.AstypeOp):
            continue
        expand = cast_op.input.owner
        if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) == [2]):
            continue
        found = _contiguous_positions(expand.input)
        inv_freq = _constant_array(inv) if rank_of(inv) == 1 else None
        if found is None or inv_freq is None or not np.all(inv_freq > 0):
            continue
        weight = weight_global(strip_upcast(inv))
        source = weight.sym_name.data if weight is not None else "rope"
        return _Angles(found, inv_freq.astype(np.float32), source, traditional)
    return None


def _trig_of(value: SSAValue, name: str) -> SSAValue | None:
    """`expand_dims(fn(angles), [1])`, float casts allowed around it → the angles."""
    value = _strip_float_casts(value)
    expand = value.owner
    if not (isinstance(expand, mlx.ExpandDimsOp) and list(ints(expand.axes)) == [1]):
        return None
    trig = op_named(_strip_float_casts(expand.input), name)
    return trig.operands[0] if trig is not None else None


def _rope_operands(op: Operation, sizes: _Sizes) -> tuple[SSAValue, _Angles] | None:
    """`x * cos + rotate_half(x) * sin` (any operand order) → (x, the angles)."""
    for cos_term, sin_term in (op.operands, reversed(op.operands)):
        cos_mul, sin_mul = op_named(cos_term, "mlx.multiply"), op_named(sin_term, "mlx.multiply")
        if cos_mul is None or sin_mul is None:
            continue
        for x, cos in (cos_mul.operands, reversed(cos_mul.operands)):
            for rotated, sin in (sin_mul.operands, reversed(sin_mul.operands)):
                if _rotated_half(rotated, sizes) == x:
                    traditional = False
                elif _rotated_pairs(rotated, sizes) == x:
                    traditional = True
                else:
                    continue
                cos_angles, sin_angles = _trig_of(cos, "mlx.cos"), _trig_of(sin, "mlx.sin")
                if cos_angles is None or cos_angles != sin_angles:
                    continue
                angles = _angles(cos_angles)
                if angles is not None and angles.traditional == traditional:
                    return x, angles
    return None


def _freqs(angles: _Angles, anchor: Operation) -> SSAValue:
    """MLX's `freqs` (the inverse of `inv_freq`, computed once in f32) as a new global."""
    freqs = (np.float32(1.0) / angles.inv_freq).astype(np.float32)
    tensor_type = TensorType(Float32Type(), [len(freqs)])
    return add_global(anchor, f"{angles.source}.rope_freqs", freqs, tensor_type, "buffer").result


class FuseRope(RewritePattern):
    """HF's rotary embedding → `mlx.rope` (`mx.fast.rope`):

    - `x * cos + rotate_half(x) * sin`, where cos/sin are `expand_dims(cos(a), 1)` of
      the angles `a = cat(f, f)`, `f = float(positions[..., None]) * inv_freq`, and the
      positions provably count up by one along x's sequence axis (-2) from a scalar
      or per-row start: `arange(n) + k`, or `offsets[:, None] + arange(n)`;
    - interleaved (GPT-J style, Cohere): `x * cos + rotate_pairs(x) * sin`, with
      `rotate_pairs(x) = stack([-x[..., 1::2], x[..., 0::2]], -1).flatten(-2)` and each
      angle of `f` repeated twice in a row → `mlx.rope` with `traditional`;
    - partial rotary: `cat(rope(x[..., :r]), x[..., r:], -1)` → `rope(x)` of `dims r`.

    `freqs` is `1 / inv_freq` of the program's own (possibly scaled) constant, not a
    `base`: exact up to the f32 rounding of the angle (5e-7 at position 2047 in f32).
    In f16/bf16 HF rounds cos and sin to the activations' dtype and each product; the
    kernel rounds once, so the result is within the dtype's rounding of HF's."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, mlx.ConcatenateOp):
            self._merge_pass_through(op, rewriter)
            return
        if op.name != "mlx.add":
            return
        sizes = _Sizes(op)
        found = _rope_operands(op, sizes)
        if found is None:
            return
        x, angles = found
        if op.results[0].type != x.type or rank_of(x) < 3 or not is_float(dtype_of(x)):
            return
        positions = angles.positions
        if not sizes.same_size(x, -2, positions.length):
            return
        if positions.row_offsets is not None and not sizes.same_axes(x, 0, positions.row_offsets, 0):
            return
        if 2 * len(angles.inv_freq) != shape_of(x)[-1]:
            return
        freqs = _freqs(angles, op)
        rope = mlx.RopeOp(
            x,
            shape_of(x)[-1],
            freqs=freqs,
            offset=positions.offset,
            row_offsets=positions.row_offsets,
            traditional=angles.traditional,
        )
        rope.location = op.location
        rewriter.replace(op, rope)

    @staticmethod
    def _merge_pass_through(op: mlx.ConcatenateOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) != 2 or op.axis.value.data % rank_of(op.result) != rank_of(op.result) - 1:
            return
        rope = op.inputs[0].owner
        if not isinstance(rope, mlx.RopeOp):
            return
        sizes = _Sizes(op)
        rotated, passed = _last_axis_slice(rope.input, sizes), _last_axis_slice(op.inputs[1], sizes)
        if rotated is None or passed is None or rotated[0] != passed[0]:
            return
        x, size = rotated[0], shape_of(rotated[0])[-1]
        dims = rope.dims.value.data
        if rotated[1:] != (0, dims) or passed[1:] != (dims, size) or x.type != op.result.type:
            return
        new = _rope_like(rope, x, dims)
        new.location = op.location
        rewriter.replace(op, new)


def _rope_like(rope: mlx.RopeOp, x: SSAValue, dims: int) -> mlx.RopeOp:
    """`rope`'s embedding (frequencies, positions) applied to `x`."""
    offset = mixed_values(ints(rope.static_offset), rope.offset)[0]
    return mlx.RopeOp(
        x,
        dims,
        freqs=rope.freqs,
        base=rope.base.value.data if rope.base is not None else None,
        offset=offset,
        row_offsets=rope.row_offsets,
        traditional=rope.traditional is not None,
        scale=rope.scale.value.data,
    )
