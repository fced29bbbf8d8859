"""`scatter-to-slice-update`: a KV cache write (a scatter at `start + arange(n)`) as
one `dynamic_slice_update` at `start`."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlxir.dialects import mlx
from mlxir.dialects.common import (
    dims_compatible,
    dtype_of,
    int_array,
    ints,
    is_integer,
    rank_of,
    shape_of,
)
from mlxir.transforms.canonicalization.mlx import arange_length


def _contiguous_start(index: SSAValue) -> SSAValue | None:
    """`add(start, arange(0, n, 1))` (either order), `start` a 0-d integer tensor →
    `start`: the indices of `n` consecutive slots."""
    add = index.owner
    if not isinstance(add, mlx.AddOp) or rank_of(index) != 1:
        return None
    lhs, rhs = add.operands
    for start, arange in ((lhs, rhs), (rhs, lhs)):
        if arange_length(arange) is not None and rank_of(start) == 0 and is_integer(dtype_of(start)):
            return start
    return None


class ScatterToSliceUpdate(RewritePattern):
    """A scatter of `n` slices along one axis at `start + arange(n)` (`index_copy` into
    a fixed KV cache at the written length) → one `dynamic_slice_update` at `start`.
    MLX's scatter moves the axis to the front and back, reshapes the updates and casts
    the indices: about ten graph nodes per cache write, where a slice update is one.
    The update is the scatter's with its slice axis dropped and its index axis moved
    into place (folded into the transpose index_copy's lowering made). In range both
    write the same elements; a start past the end is clamped instead of each index
    (torch rejects such an index_copy)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ScatterOp, rewriter: PatternRewriter) -> None:
        if len(op.indices) != 1 or (op.reduce is not None and op.reduce.data != "none"):
            return
        start = _contiguous_start(op.indices[0])
        rank = rank_of(op.input)
        if start is None or rank == 0:
            return
        axis = ints(op.axes)[0] % rank
        x, slices = shape_of(op.input), shape_of(op.updates)[1:]
        if slices[axis] != 1 or any(
            not dims_compatible(s, d) for i, (s, d) in enumerate(zip(slices, x)) if i != axis
        ):
            return
        new_ops: list[Operation] = []
        expand = op.updates.owner
        if isinstance(expand, mlx.ExpandDimsOp) and [a % (rank + 1) for a in ints(expand.axes)] == [1 + axis]:
            moved = expand.input  # [n, x's dims without the axis]
        else:
            moved_shape = [shape_of(op.updates)[0], *slices[:axis], *slices[axis + 1 :]]
            squeeze = mlx.SqueezeOp(op.updates, [1 + axis], TensorType(dtype_of(op.updates), moved_shape))
            new_ops.append(squeeze)
            moved = squeeze.result
        into_place = [*range(1, axis + 1), 0, *range(axis + 1, rank)]
        inner = moved.owner
        source, perm = (
            (inner.input, [ints(inner.axes)[p] for p in into_place])
            if isinstance(inner, mlx.TransposeOp)
            else (moved, into_place)
        )
        update = source
        if perm != list(range(rank)):
            source_shape = shape_of(source)
            transpose = mlx.TransposeOp(
                source, perm, TensorType(dtype_of(source), [source_shape[p] for p in perm])
            )
            new_ops.append(transpose)
            update = transpose.result
        write = mlx.DynamicSliceUpdateOp.build(
            operands=[op.input, update, start],
            result_types=[op.result.type],
            properties={"axes": int_array([axis])},
        )
        for new in (*new_ops, write):
            new.location = op.location
        rewriter.replace(op, [*new_ops, write])
