"""`cpu-rope-pairs`: `mlx.rope` as the CPU computes it, rotated pairs of a reshape."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    Float32Type,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, shape_of
from mlxir.dialects.weights import array_of
from mlxir.transforms.canonicalization.mlx import constant_array
from mlxir.transforms.constant_weights import weight_global

_F32 = Float32Type()


def _tensor(dtype: Attribute, shape: Sequence[int]) -> TensorType[Attribute]:
    return TensorType(dtype, list(shape))


def _constant(dtype: Attribute, shape: Sequence[int], values: Sequence[float]) -> mlx.ConstantOp:
    tensor_type = cast(TensorType[Float32Type], _tensor(dtype, shape))  # from_list's overloads want a float type
    return mlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(tensor_type, list(values)))


def _constant_inverse(freqs: SSAValue) -> list[float] | None:
    """`1 / freqs` as MLX's CPU computes it (`mx.reciprocal` in float32), when `freqs`
    is a float32 weight in the IR or a constant: computed here, once, instead of on
    every call."""
    if dtype_of(freqs) != _F32:
        return None
    found = weight_global(freqs)
    if found is not None:
        assert isinstance(found.value, DenseIntOrFPElementsAttr)
        values = array_of(found.value)
    else:
        constant = constant_array(freqs)
        if constant is None:
            return None
        values = constant
    import mlx.core as mx

    inverse = mx.reciprocal(mx.array(np.asarray(values, dtype=np.float32).reshape(-1)))
    return [float(v) for v in cast(list[float], inverse.tolist())]


def _inverse_frequencies(base: float, half: int) -> list[float]:
    """MLX's rope angles per position, `base ** (-i / half)`, computed as MLX's CPU
    composition of `mx.fast.rope` computes them (`exp(-i * log(base) / half)` in
    float32), so that the angle table has the same bits; evaluated once, here."""
    import mlx.core as mx

    exponents = mx.arange(0, -half, -1, dtype=mx.float32) * (math.log(base) / half)
    return [float(v) for v in cast(list[float], mx.exp(exponents).tolist())]


class _Builder:
    """Inserts ops before the rope being rewritten, at its location (they compute the
    node it computed), and returns their results."""

    def __init__(self, rewriter: PatternRewriter, rope: mlx.RopeOp) -> None:
        self.rewriter = rewriter
        self.location = rope.location

    def add(self, op: Operation) -> SSAValue:
        op.location = self.location
        self.rewriter.insert(op)
        return op.results[0]

    def dims(self, x: SSAValue) -> list[SSAValue | int]:
        """`x`'s sizes: literals where static, `mlx.dim` where dynamic."""
        return [
            self.add(mlx.DimOp(x, axis)) if size == DYNAMIC_INDEX else size
            for axis, size in enumerate(shape_of(x))
        ]

    def binary(self, name: str, lhs: SSAValue, rhs: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self.add(mlx.BINARY_OP_CLASSES[name](lhs, rhs, _tensor(dtype_of(lhs), shape)))

    def unary(self, name: str, x: SSAValue) -> SSAValue:
        return self.add(cast(type[mlx.UnaryOp], mlx.UNARY_OP_CLASSES[name])(x))

    def astype(self, x: SSAValue, dtype: Attribute) -> SSAValue:
        if dtype_of(x) == dtype:
            return x
        return self.add(mlx.AstypeOp(x, _tensor(dtype, shape_of(x))))

    def reshape(self, x: SSAValue, sizes: Sequence[SSAValue | int]) -> SSAValue:
        shape = [s if isinstance(s, int) else DYNAMIC_INDEX for s in sizes]
        return self.add(mlx.ReshapeOp(x, sizes, _tensor(dtype_of(x), shape)))

    def expand(self, x: SSAValue, axis: int) -> SSAValue:
        shape = list(shape_of(x))
        shape.insert(axis % (len(shape) + 1), 1)
        return self.add(mlx.ExpandDimsOp(x, [axis], _tensor(dtype_of(x), shape)))

    def slice(
        self,
        x: SSAValue,
        sizes: Sequence[SSAValue | int],
        axis: int,
        bounds: tuple[int, int, int],
        size: int,
    ) -> SSAValue:
        """`x`, whose sizes are `sizes`, sliced along `axis` alone by `(start, stop,
        step)`: `size` elements."""
        start, stop, step = bounds
        starts: list[SSAValue | int] = [0] * len(sizes)
        stops = list(sizes)
        steps = [1] * len(stops)
        starts[axis], stops[axis], steps[axis] = start, stop, step
        shape = list(shape_of(x))
        shape[axis] = size
        return self.add(mlx.SliceOp(x, starts, stops, steps, _tensor(dtype_of(x), shape)))


def _positions(op: mlx.RopeOp, b: _Builder) -> SSAValue:
    """`(arange(T) + offset) * scale` in float32: `[T]`, or `[B, 1, ..., T]` with row
    offsets. Every term is an integer below 2^24 until the scale, so the sum is exact
    in any order, as MLX's (which adds the offsets as integers)."""
    x = op.input
    length = b.dims(x)[-2]
    positions = b.add(
        mlx.ArangeOp([0, length, 1], _tensor(_F32, [length if isinstance(length, int) else DYNAMIC_INDEX]))
    )
    (static_offset,) = ints(op.static_offset)
    offset: SSAValue | None = None
    if op.offset:
        offset = b.add(mlx.FromIndexOp(op.offset[0], _tensor(_F32, [])))
    elif static_offset:
        offset = b.add(_constant(_F32, [], [float(static_offset)]))
    if op.row_offsets is not None:
        rows = b.astype(op.row_offsets, _F32)
        if shape_of(rows):  # [B] → [B, 1, ..., 1]: one start per batch row
            rank = len(shape_of(x))
            rows = b.reshape(rows, [b.dims(rows)[0], *[1] * (rank - 2)])
        offset = rows if offset is None else b.binary("add", rows, offset, shape_of(rows))
    if offset is not None:
        shape = [*shape_of(offset)[:-1], shape_of(positions)[0]] if shape_of(offset) else shape_of(positions)
        positions = b.binary("add", positions, offset, shape)
    scale = op.scale.value.data
    if scale != 1.0:  # x * 1.0 is x, bit for bit
        scaled = b.add(_constant(_F32, [], [scale]))
        positions = b.binary("multiply", positions, scaled, shape_of(positions))
    return positions


def _rotated(op: mlx.RopeOp, x: SSAValue, b: _Builder) -> SSAValue:
    """The rotary embedding of all of `x`'s features (`dims` of them)."""
    dims = op.dims.value.data
    half = dims // 2
    traditional = op.traditional is not None
    dtype = dtype_of(x)
    positions = _positions(op, b)
    if op.freqs is None:
        assert op.base is not None
        inverse = b.add(_constant(_F32, [half], _inverse_frequencies(op.base.value.data, half)))
    else:
        constant = _constant_inverse(op.freqs)
        if constant is not None:
            inverse = b.add(_constant(_F32, [half], constant))
        else:
            inverse = b.unary("reciprocal", b.astype(op.freqs, _F32))
    table_shape = [*shape_of(positions), half]
    theta = b.binary("multiply", b.expand(positions, -1), inverse, table_shape)
    cos = b.astype(b.unary("cos", theta), dtype)
    sin = b.astype(b.unary("sin", theta), dtype)
    # Pairs (x[i], x[i + half]) on an axis of 2 before the halves, or (x[2i], x[2i + 1])
    # on an axis of 2 after them (traditional); each element's partner is that axis
    # reversed (a view), and the sine takes the signs: x1 cos - x2 sin, x2 cos + x1 sin.
    pair_axis = -1 if traditional else -2
    signs = b.add(_constant(dtype, [2] if traditional else [2, 1], [-1.0, 1.0]))
    cos, sin = b.expand(cos, pair_axis), b.expand(sin, pair_axis)
    signed_sin = b.binary("multiply", sin, signs, [*shape_of(sin)[:-2], 2, half] if not traditional else [*shape_of(sin)[:-1], 2])
    sizes = b.dims(x)
    pair_sizes = [*sizes[:-1], *((half, 2) if traditional else (2, half))]
    pairs = b.reshape(x, pair_sizes)
    pair_shape = shape_of(pairs)
    partners = b.slice(pairs, pair_sizes, len(pair_shape) + pair_axis, (1, -3, -1), 2)
    rotated = b.binary(
        "add",
        b.binary("multiply", pairs, cos, pair_shape),
        b.binary("multiply", partners, signed_sin, pair_shape),
        pair_shape,
    )
    return b.reshape(rotated, sizes)


class RopePairs(RewritePattern):
    """`mlx.rope` → its arithmetic in MLX ops, in the form that costs MLX's CPU fewest
    graph nodes. MLX's CPU has no rope kernel: `mx.fast.rope` composes 12 nodes a call
    there (an angle table from a fresh `arange`, two slices, two products, a
    concatenation). Here each rotated pair is a size-2 axis of a reshape of `x`, its
    partner that axis reversed (a view), the signs in the sine: 6 ops a rope, and the
    angle table (`(arange(T) + offset) * scale` times the inverse frequencies, its
    cosine and sine) depends on the positions alone, so `cse` leaves one table for all
    the ropes at the same positions. The same arithmetic as MLX's composition, in the
    same order, so the same bits (`tests/test_cpu_target.py`). A rank-2 input with
    one offset per row is left as it is: its rows are positions, not a batch."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.RopeOp, rewriter: PatternRewriter) -> None:
        x = op.input
        rank = len(shape_of(x))
        if rank == 2 and op.row_offsets is not None and shape_of(op.row_offsets):
            return
        b = _Builder(rewriter, op)
        dims, features = op.dims.value.data, shape_of(x)[-1]
        if features == DYNAMIC_INDEX:
            return  # the pass-through features' count would be unknown
        if dims == features:
            rewriter.replace(op, [], [_rotated(op, x, b)])
            return
        sizes = b.dims(x)
        head = b.slice(x, sizes, rank - 1, (0, dims, 1), dims)
        tail = b.slice(x, sizes, rank - 1, (dims, features, 1), features - dims)
        whole = mlx.ConcatenateOp([_rotated(op, head, b), tail], rank - 1, op.result.type)
        whole.location = op.location
        rewriter.replace(op, whole)


@dataclass(frozen=True)
class CpuRopePairsPass(ModulePass):
    """CPU target: every `mlx.rope` as rotated pairs of a reshape (MLX's CPU has no rope kernel).

    Run `cse` after it (`RopePairs`), so the ropes at the same positions share one
    angle table."""

    name = "cpu-rope-pairs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(RopePairs(), apply_recursively=False).rewrite_module(op)
