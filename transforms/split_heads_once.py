"""`split-heads-once`: a split whose pieces are each reshaped to heads and
transposed alike → one reshape, one transpose, one split on the heads axis."""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, int_array, ints, mixed_values, rank_of, shape_of
from mlxir.support.locations import fused, result_locations


def _heads(value: SSAValue) -> tuple[mlx.ReshapeOp, mlx.TransposeOp] | None:
    """`transpose(reshape(value, [..., h, d]), perm)`, each the only use of its input."""
    if value.uses.get_length() != 1:
        return None
    reshape = next(iter(value.uses)).operation
    if not isinstance(reshape, mlx.ReshapeOp) or reshape.result.uses.get_length() != 1:
        return None
    transpose = next(iter(reshape.result.uses)).operation
    if not isinstance(transpose, mlx.TransposeOp):
        return None
    rank = rank_of(value)
    sizes = mixed_values(ints(reshape.static_shape), reshape.shape)
    if len(sizes) != rank + 1 or not all(isinstance(s, int) for s in sizes[-2:]):
        return None
    if shape_of(value)[-1] != cast(int, sizes[-2]) * cast(int, sizes[-1]):
        return None
    return reshape, transpose


def _defined_before(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is a block argument or the result of an op before `op` in its
    block (a piece's reshape may read a size computed after the split: Swin's windows)."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return True
    earlier = op.prev_op
    while earlier is not None:
        if earlier is owner:
            return True
        earlier = earlier.prev_op
    return False


def _alike(pairs: list[tuple[mlx.ReshapeOp, mlx.TransposeOp]]) -> bool:
    """The pieces are reshaped to the same leading sizes and head dim and transposed by
    the same permutation."""
    reshape0, transpose0 = pairs[0]
    prefix = mixed_values(ints(reshape0.static_shape), reshape0.shape)[:-2]
    head_dim = shape_of(reshape0.result)[-1]
    perm = list(ints(transpose0.axes))
    for reshape, transpose in pairs:
        sizes = mixed_values(ints(reshape.static_shape), reshape.shape)
        if sizes[:-2] != prefix or sizes[-1] != head_dim or list(ints(transpose.axes)) != perm:
            return False
    return True


class SplitHeadsOnce(RewritePattern):
    """`split(y)` on the last axis, each piece reshaped to `[..., h_i, d]` and transposed
    the same way → `reshape(y, [..., sum h_i, d])`, one transpose, one split on the
    heads axis: the pieces' values, moved, with three ops instead of three per piece.
    Where only a run of consecutive pieces are heads (a parallel block's q, k, v next to
    its MLP's pieces), the run is first split off as one piece, split again."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.SplitOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        if op.axis.value.data % rank != rank - 1:
            return
        found = [_heads(piece) for piece in op.outputs]
        if any(f is None for f in found):
            self._split_off_heads(op, found, rewriter)
            return
        pairs = cast(list[tuple[mlx.ReshapeOp, mlx.TransposeOp]], found)
        if len(pairs) < 2 or not _alike(pairs):
            return
        reshape0, transpose0 = pairs[0]
        prefix = mixed_values(ints(reshape0.static_shape), reshape0.shape)[:-2]
        if not all(isinstance(size, int) or _defined_before(size, op) for size in prefix):
            return  # the new reshape goes where the split is, and must see its sizes
        head_dim = shape_of(reshape0.result)[-1]
        perm = list(ints(transpose0.axes))
        heads = [shape_of(r.result)[-2] for r, _ in pairs]
        dtype = dtype_of(op.input)
        whole = [*prefix, sum(heads), head_dim]
        reshaped_shape = [s if isinstance(s, int) else DYNAMIC_INDEX for s in whole]
        reshape = mlx.ReshapeOp(op.input, whole, TensorType(dtype, reshaped_shape))
        moved_shape = [reshaped_shape[p] for p in perm]
        transpose = mlx.TransposeOp(reshape.result, perm, TensorType(dtype, moved_shape))
        axis = perm.index(rank - 1)  # the heads axis of the [..., heads, d] reshape
        split = mlx.SplitOp.build(
            operands=[transpose.result],
            result_types=[[t.result.type for _, t in pairs]],
            properties={
                "indices": int_array([int(h) for h in np.cumsum(heads)[:-1]]),
                "axis": IntegerAttr(axis, 64),
            },
        )
        for new in (reshape, transpose):
            new.location = op.location
        split.location = fused([t.location for _, t in pairs])
        for new in (reshape, transpose, split):
            rewriter.insert(new, InsertPoint.before(op))
        for (old_reshape, old_transpose), piece in zip(pairs, split.results, strict=True):
            rewriter.replace(old_transpose, [], [piece])
            rewriter.erase(old_reshape)
        rewriter.erase(op)

    @staticmethod
    def _split_off_heads(
        op: mlx.SplitOp,
        found: list[tuple[mlx.ReshapeOp, mlx.TransposeOp] | None],
        rewriter: PatternRewriter,
    ) -> None:
        widths = [shape_of(piece)[-1] for piece in op.outputs]
        if DYNAMIC_INDEX in widths:
            return
        start = 0
        while start < len(found):
            end = start
            while end < len(found) and found[end] is not None:
                end += 1
            run = cast(list[tuple[mlx.ReshapeOp, mlx.TransposeOp]], found[start:end])
            if len(run) >= 2 and _alike(run):
                break
            start = end + 1
        else:
            return
        bounds = [0, *np.cumsum(widths).tolist()]
        outer_points = [b for i, b in enumerate(bounds[1:-1], 1) if not start < i < end]
        piece_type = op.outputs[start].type
        merged_type = TensorType(
            piece_type.get_element_type(), [*piece_type.get_shape()[:-1], sum(widths[start:end])]
        )
        outer_types = [p.type for p in op.outputs[:start]] + [merged_type] + [p.type for p in op.outputs[end:]]
        outer = mlx.SplitOp.build(
            operands=[op.input],
            result_types=[outer_types],
            properties={"indices": int_array(outer_points), "axis": op.axis},
        )
        run_points = np.cumsum(widths[start:end])[:-1].tolist()
        inner = mlx.SplitOp.build(
            operands=[outer.results[start]],
            result_types=[[p.type for p in op.outputs[start:end]]],
            properties={"indices": int_array(run_points), "axis": op.axis},
        )
        pieces_at = result_locations(op)
        outer.location = fused([*pieces_at[:start], fused(pieces_at[start:end]), *pieces_at[end:]])
        inner.location = fused(pieces_at[start:end])
        pieces = [*outer.results[:start], *inner.results, *outer.results[start + 1 :]]
        rewriter.replace(op, [outer, inner], pieces)
