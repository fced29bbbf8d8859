"""`fold-constant-weights`: elementwise ops and casts of constants, one a weight,
computed at compile time into a new weight."""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, shape_of
from mlxir.support import dtypes
from mlxir.transforms.constant_weights import (
    add_global,
    array_of_constant,
    drop_unread,
    evaluate,
    global_array,
    weight_global,
)

FOLDED_WEIGHT_BYTES = 1 << 20
"""`fold-constant-weights` computes a result at compile time when it is at most this
big or no bigger than its constant operands together: a broadcast or an upcast of a
large weight would grow the program and its memory."""


def _constant_operand(value: SSAValue) -> Operation | None:
    """The op giving a constant operand: a read of a weight with its value in the IR, or
    an `mlx.constant`."""
    owner = value.owner
    if isinstance(owner, mlx.ConstantOp) or weight_global(value) is not None:
        return cast(Operation, owner)
    return None


def _bytes(value: SSAValue) -> int:
    """The size of a static tensor value."""
    found = dtypes.of_ir(dtype_of(value))
    itemsize = np.dtype(found.numpy).itemsize if found is not None else 8
    return int(np.prod(shape_of(value))) * itemsize


class FoldConstantWeights(RewritePattern):
    """An elementwise op or cast whose operands are all constants, one of them a weight
    (Gemma's `1 + norm.weight`, a weight's upcast) → a new weight holding the result,
    computed at compile time by the runtime's own kernel (so bit for bit what the run
    would compute). Results that would grow the program (`FOLDED_WEIGHT_BYTES`) are left to run time."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mlx.UnaryOp | mlx.BinaryOp | mlx.AstypeOp):
            return
        sources = [_constant_operand(v) for v in op.operands]
        if any(s is None for s in sources) or not any(isinstance(s, mlx.WeightOp) for s in sources):
            return
        result = op.results[0]
        result_type = cast(TensorType[Attribute], result.type)
        shape = result_type.get_shape()
        dtype = dtypes.of_ir(result_type.get_element_type())
        if DYNAMIC_INDEX in shape or dtype is None:
            return
        size = _bytes(result)
        operand_sizes = sum(_bytes(v) for v in op.operands)
        if size > max(FOLDED_WEIGHT_BYTES, operand_sizes):
            return
        value = evaluate(op, [array_of_constant(cast(Operation, s)) for s in sources])[0]
        array = global_array(value)
        weight = next(s for s in sources if isinstance(s, mlx.WeightOp))
        assert isinstance(weight, mlx.WeightOp)
        name = f"{weight.global_name.root_reference.data}.{op.name.removeprefix('mlx.')}"
        kind = cast(mlx.GlobalOp, weight_global(weight.result)).kind.data
        read = add_global(op, name, array, result_type, kind)
        read.location = op.location
        operands = list(op.operands)
        rewriter.replace(op, [], [read.result])
        for operand in operands:
            drop_unread(operand, rewriter)
