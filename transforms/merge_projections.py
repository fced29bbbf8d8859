"""`merge-projections`: projections of one input by constant weights (q/k/v,
gate/up) → one product on the concatenated weights, then a split."""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, int_array, shape_of
from mlxir.dialects.weights import array_of, concatenated_columns
from mlxir.support.locations import fused
from mlxir.transforms.constant_weights import (
    Matrix,
    add_global,
    drop_unread,
    weight_global,
    weight_matrix,
)
from mlxir.transforms.matching import bias_add_of, bias_vector


def _projection(op: Operation) -> tuple[SSAValue, Matrix, SSAValue | None] | None:
    """`matmul(x, w)` or `addmm(b, x, w)` (alpha = beta = 1) with constant `w` [K, N]
    (and `b` [N]) → (x, w's global, b)."""
    if isinstance(op, mlx.MatmulOp):
        weight = weight_matrix(op.rhs)
        return None if weight is None else (op.lhs, weight, None)
    if isinstance(op, mlx.AddmmOp) and op.alpha is None and op.beta is None:
        weight = weight_matrix(op.b)
        if weight is None or bias_vector(op.c, shape_of(op.b)[1]) is None:
            return None
        return op.a, weight, op.c
    return None


def _merged_name(names: list[str]) -> str:
    """`a.q_proj.weight`, `a.k_proj.weight` → `a.q_proj+k_proj.weight`."""
    parts = [n.split(".") for n in names]
    prefix = 0
    while all(len(p) > prefix + 1 for p in parts) and len({p[prefix] for p in parts}) == 1:
        prefix += 1
    suffix = 0
    while (
        all(len(p) > prefix + suffix + 1 for p in parts)
        and len({p[-1 - suffix] for p in parts}) == 1
    ):
        suffix += 1
    middles = ["_".join(p[prefix : len(p) - suffix]) or "_" for p in parts]
    return ".".join([*parts[0][:prefix], "+".join(middles), *parts[0][len(parts[0]) - suffix :]])


class MergeProjections(RewritePattern):
    """Projections of one input by constant weights (`matmul(x, w_i)`, or all
    `addmm(b_i, x, w_i)`) → one product with the weights (and biases) concatenated at
    compile time, then `split` on the last axis: q/k/v, gate/up. Each output column is
    the same dot product as before, so the values are those of the separate products
    (BLAS may block the wider GEMM differently: f32 within 1e-6 relative). The old
    weights leave the program once nothing reads them."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        found = _projection(op)
        if found is None or (isinstance(op, mlx.MatmulOp) and bias_add_of(op.result)):
            return  # a biased linear merges once `fuse-bias-add` has made it an addmm
        x, _, bias = found
        kind = type(op)
        group: list[tuple[Operation, Matrix, SSAValue | None]] = []
        block = op.parent_block()
        if block is None:
            return
        for use in x.uses:
            user = use.operation
            if isinstance(user, mlx.MatmulOp) and _projection(user) and bias_add_of(user.result):
                return  # merge once every biased sibling is an addmm, all in one split
            if type(user) is not kind or user.parent_block() is not block or user in [g[0] for g in group]:
                continue
            sibling = _projection(user)
            if sibling is None or sibling[0] != x or (sibling[2] is None) != (bias is None):
                continue
            if isinstance(user, mlx.MatmulOp) and bias_add_of(user.result):
                continue
            group.append((user, sibling[1], sibling[2]))
        if len(group) < 2:
            return
        rows, dtype = shape_of(group[0][0].results[0])[:-1], dtype_of(group[0][0].results[0])
        depth = shape_of(x)[-1]
        if any(
            shape_of(o.operands[-1])[0] != depth
            or dtype_of(o.operands[-1]) != dtype
            or shape_of(o.results[0])[:-1] != rows
            or dtype_of(o.results[0]) != dtype
            for o, _, _ in group
        ):
            return
        order = {o: i for i, o in enumerate(block.ops)}
        group.sort(key=lambda g: order[g[0]])
        anchor = group[0][0]
        widths = [shape_of(o.operands[-1])[1] for o, _, _ in group]
        name = _merged_name([m.source.sym_name.data for _, m, _ in group])
        kind = group[0][1].source.kind.data
        if all(m.transposed for _, m, _ in group):
            # `linear` weights [N_i, K], read through `w.T`: stacked as rows (a plain
            # copy of each) and read through one transpose, which MLX's matmul takes
            # without a copy, as the separate products did.
            stacked = np.concatenate([array_of(cast(DenseIntOrFPElementsAttr, m.source.value)) for _, m, _ in group])
            weight = add_global(anchor, name, stacked, TensorType(dtype, [sum(widths), depth]), kind)
            transposed = mlx.TransposeOp(weight.result, [1, 0], TensorType(dtype, [depth, sum(widths)]))
            rewriter.insert(transposed, InsertPoint.before(anchor))
            rhs = transposed.result
            weight_ops: list[Operation] = [weight, transposed]
        else:
            columns = concatenated_columns([m.array() for _, m, _ in group])
            weight = add_global(anchor, name, columns, TensorType(dtype, [depth, sum(widths)]), kind)
            rhs = weight.result
            weight_ops = [weight]
        result_type = TensorType(dtype, [*rows, sum(widths)])
        if bias is None:
            merged: Operation = mlx.MatmulOp(x, rhs, result_type)
        else:
            biases = [cast(SSAValue, b) for _, _, b in group]
            bias_globals = [cast(mlx.GlobalOp, weight_global(b)) for b in biases]
            values = np.concatenate([array_of(cast(DenseIntOrFPElementsAttr, g.value)) for g in bias_globals])
            merged_bias = add_global(
                anchor,
                _merged_name([g.sym_name.data for g in bias_globals]),
                values,
                TensorType(dtype, [sum(widths)]),
                bias_globals[0].kind.data,
            )
            merged = mlx.AddmmOp.build(
                operands=[merged_bias.result, x, rhs], result_types=[result_type]
            )
            weight_ops.append(merged_bias)
        merged.location = fused([projection.location for projection, _, _ in group])
        for weight_op in weight_ops:
            weight_op.location = merged.location
        rewriter.insert(merged, InsertPoint.before(anchor))
        points = [int(p) for p in np.cumsum(widths)[:-1]]
        split = mlx.SplitOp.build(
            operands=[merged.results[0]],
            result_types=[[TensorType(dtype, [*rows, w]) for w in widths]],
            properties={"indices": int_array(points), "axis": IntegerAttr(len(rows), 64)},
        )
        split.location = fused([projection.location for projection, _, _ in group])
        rewriter.insert(split, InsertPoint.before(anchor))
        for (projection, _, _), piece in zip(group, split.results, strict=True):
            reads = list(projection.operands)
            rewriter.replace(projection, [], [piece])
            for read in reads:
                if read != x:
                    drop_unread(read, rewriter)
