"""`fold-conv-affine`: a channels-last convolution followed by a per-channel affine map
of constants (an inference batch norm: `(y - mean) * scale + shift`) is one
convolution with scaled weights plus one bias, computed at compile time.

The map is read off the chain of `add`, `subtract` and `multiply` ops that follows the
convolution's result, each with a constant operand that varies along the channels (the
last axis) only: weights with their value in the IR, `mlx.constant`s, and the shape,
cast and elementwise ops of those (a batch norm's `rsqrt(var + eps) * gamma`),
evaluated by the runtime's own kernels. Composed in float64 into `y * a + b`, it
becomes `conv(x, w * a) + b`, `w * a` computed in float32 and rounded once to the
weight's type: the same value up to that rounding, where the unfolded program rounds
after each op (PyTorch's `fuse_conv_bn_eval` folds the same way).

It matches the layout `cpu-channels-last` leaves (the channels last, as `mx.conv_general`
returns them), and runs after it in the CPU target."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, shape_of
from mlxir.evaluator.arrays import element_type_to_mx
from mlxir.transforms.constant_weights import (
    add_global,
    array_of_constant,
    drop_unread,
    evaluate,
    global_array,
    weight_global,
)

if TYPE_CHECKING:
    import mlx.core as mx

CONSTANT_ELEMENTS = 1 << 16
"""The largest intermediate a per-channel constant is evaluated through (a batch
norm's are one value per channel)."""

_CONSTANT_SOURCES = (
    mlx.UnaryOp,
    mlx.BinaryOp,
    mlx.AstypeOp,
    mlx.ExpandDimsOp,
    mlx.ReshapeOp,
    mlx.TransposeOp,
    mlx.BroadcastToOp,
)
"""Ops through which a constant is evaluated at compile time."""


def constant_value(value: SSAValue, limit: int | None = CONSTANT_ELEMENTS) -> mx.array | None:
    """`value` computed at compile time, when it derives from constants only (weights
    with their value in the IR, `mlx.constant`s) through `_CONSTANT_SOURCES` ops of
    static shapes of at most `limit` elements (None: any)."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return None
    shape = shape_of(value)
    if DYNAMIC_INDEX in shape or (limit is not None and math.prod(shape) > limit):
        return None
    if isinstance(owner, mlx.WeightOp):
        return array_of_constant(owner) if weight_global(value) is not None else None
    if isinstance(owner, mlx.ConstantOp):
        return array_of_constant(owner)
    if not isinstance(owner, _CONSTANT_SOURCES):
        return None
    operands: list[mx.array] = []
    for operand in owner.operands:
        found = constant_value(operand, limit)
        if found is None:
            return None
        operands.append(found)
    return evaluate(owner, operands)[0]


def _per_channel(value: SSAValue, rank: int, channels: int) -> np.ndarray | None:
    """`value` as `channels` float64 numbers, when it is a constant that varies along
    the last of `rank` axes only."""
    shape = shape_of(value)
    if len(shape) > rank or any(size != 1 for size in shape[:-1]):
        return None
    if shape and shape[-1] not in (1, channels):
        return None
    found = constant_value(value)
    if found is None:
        return None
    import mlx.core as mx

    flat = np.array(found.astype(mx.float32), copy=True).astype(np.float64).reshape(-1)
    return np.broadcast_to(flat, (channels,)).copy()


def _erase_unused(value: SSAValue, rewriter: PatternRewriter) -> None:
    """Erases the constant computation of `value` once nothing uses it, and the globals
    it alone read."""
    owner = value.owner
    if not isinstance(owner, Operation) or value.uses:
        return
    if isinstance(owner, mlx.WeightOp):
        drop_unread(value, rewriter)
        return
    if not isinstance(owner, (*_CONSTANT_SOURCES, mlx.ConstantOp)):
        return
    operands = list(owner.operands)
    rewriter.erase(owner)
    for operand in operands:
        _erase_unused(operand, rewriter)


def _weight_read(value: SSAValue) -> mlx.WeightOp | None:
    """The weight read `value` is, or is a reshape or transpose of (a 1x1 kernel's
    layout change is a reshape)."""
    owner = value.owner
    if isinstance(owner, mlx.ReshapeOp | mlx.TransposeOp) and len(owner.operands) == 1:
        owner = owner.operands[0].owner
    return owner if isinstance(owner, mlx.WeightOp) else None


class FoldConvAffine(RewritePattern):
    """`conv(x, w)` then a chain of per-channel `+ c`, `- c`, `c -` and `* c` →
    `conv(x, w * a) + b`, with `a` and `b` the chain composed."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ConvGeneralOp, rewriter: PatternRewriter) -> None:
        weight_read = _weight_read(op.weight)
        source = weight_global(weight_read.result) if weight_read is not None else None
        channels = shape_of(op.result)[-1]
        if weight_read is None or source is None or channels == DYNAMIC_INDEX:
            return
        rank = len(shape_of(op.result))
        scale, shift = np.ones(channels), np.zeros(channels)
        chain: list[mlx.BinaryOp] = []
        current = op.result
        while len(uses := list(current.uses)) == 1:
            user = uses[0].operation
            if not isinstance(user, mlx.BinaryOp) or user.name not in ("mlx.add", "mlx.subtract", "mlx.multiply"):
                break
            if user.result.type != current.type or user.lhs == user.rhs:
                break
            current_is_lhs = user.lhs == current
            constant = _per_channel(user.rhs if current_is_lhs else user.lhs, rank, channels)
            if constant is None:
                break
            if user.name == "mlx.multiply":
                scale, shift = scale * constant, shift * constant
            elif user.name == "mlx.add":
                shift = shift + constant
            elif current_is_lhs:
                shift = shift - constant
            else:
                scale, shift = -scale, constant - shift
            chain.append(user)
            current = user.result
        if not chain:
            return
        import mlx.core as mx

        weight = constant_value(op.weight, None)
        if weight is None:
            return
        factor = mx.reshape(mx.array(scale.astype(np.float32)), [channels] + [1] * (rank - 1))
        scaled = (weight.astype(mx.float32) * factor).astype(weight.dtype)
        weight_type = cast(TensorType[Attribute], op.weight.type)
        name = source.sym_name.data
        new_weight = add_global(op, f"{name}.affine", global_array(scaled), weight_type, source.kind.data)
        conv = op.clone()
        conv.operands = (op.input, new_weight.result)
        rewriter.insert(conv)
        result: SSAValue = conv.results[0]
        if np.any(shift != 0):
            element = dtype_of(op.result)
            bias = mx.array(shift.astype(np.float32)).astype(element_type_to_mx(element))
            bias_type = TensorType(element, [channels])
            bias_read = add_global(op, f"{name}.affine_bias", global_array(bias), bias_type, "constant")
            add = mlx.BINARY_OP_CLASSES["add"](result, bias_read.result, op.result.type)
            add.location = chain[-1].location
            rewriter.insert(add)
            result = add.result
        computed = {op.result, *(user.result for user in chain)}
        constants = [v for user in chain for v in user.operands if v not in computed]
        last = chain[-1]
        rewriter.replace(last, [], [result])
        for dead in reversed(chain[:-1]):
            rewriter.erase(dead)
        weight_value = op.weight
        rewriter.erase(op)
        if weight_value.owner is not weight_read and not weight_value.uses:
            rewriter.erase(cast(Operation, weight_value.owner))
        drop_unread(weight_read.result, rewriter)
        for value in constants:
            _erase_unused(value, rewriter)


@dataclass(frozen=True)
class FoldConvAffinePass(ModulePass):
    """CPU target: a convolution's per-channel affine map of constants folded into it.

    An inference batch norm after a channels-last convolution becomes its weights
    and one bias, computed at compile time."""

    name = "fold-conv-affine"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldConvAffine(), apply_recursively=False).rewrite_module(op)
