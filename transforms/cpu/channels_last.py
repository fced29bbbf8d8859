"""`cpu-channels-last`: activations stay in MLX's channels-last layout between
convolutions, and convolution weights are stored in it.

`mx.conv_general` takes `[N, *spatial, C]` inputs and `[O, *k, C]` weights, so the
lowering of a PyTorch (channels-first) convolution transposes its input and weight
into that layout and its result back out. Between two convolutions the activation
then makes a round trip per layer: a batch norm, an activation function, a residual
add or a pooling computed on the channels-first view of a channels-last buffer reads
it with a stride of C elements, and the next convolution copies it back into
channels-last. Here each channels-first transpose sinks below the elementwise ops,
pads, static slices and reductions that read it, computed in channels-last instead,
until it meets the next convolution's transpose back, with which it cancels. A
transposed weight that only convolutions read is stored transposed at compile time,
instead of being copied at every call by the convolution that reads it strided.

Measured on this machine's CPU (ResNet-18 at 224x224, one thread, `docs/performance.md`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, shape_of
from mlxir.transforms.canonicalization.mlx import ComposeTransposes, RemoveIdentityTranspose
from mlxir.transforms.fold_weight_transposes import FoldWeightTranspose

_Item = TypeVar("_Item")

SMALL_OPERAND_ELEMENTS = 4096
"""An operand of an elementwise op that is not itself channels-first (a batch norm's
per-channel scale, a scalar) is transposed along with the op when it has at most this
many elements: its transpose is a view of a few values, never a copy that matters."""


def channels_first(rank: int) -> list[int]:
    """The permutation from channels-last `[N, *spatial, C]` to channels-first `[N, C,
    *spatial]`: the one the convolution lowering puts on its result."""
    return [0, rank - 1, *range(1, rank - 1)]


def _inverse(perm: Sequence[int]) -> list[int]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def _sinking(value: SSAValue) -> mlx.TransposeOp | None:
    """The channels-first transpose of a rank >= 4 value (a 2-D or 3-D convolution's)
    that `value` is, if it is one. Rank 3 is left alone: there `[0, 2, 1]` is its own
    inverse and a batched matrix transpose, so the small operands' transposes back
    would sink in turn, without end."""
    owner = value.owner
    if not isinstance(owner, mlx.TransposeOp):
        return None
    perm = list(ints(owner.axes))
    if len(perm) < 4 or perm != channels_first(len(perm)):
        return None
    return owner


def _unpermuted_list(values: Sequence[_Item], perm: Sequence[int]) -> list[_Item]:
    """Per-axis `values` of a transpose by `perm`, in the order of its input's axes."""
    return [values[i] for i in _inverse(perm)]


def _unpermuted(value: SSAValue, perm: Sequence[int]) -> TensorType[Attribute]:
    """The type whose transpose by `perm` is `value`'s."""
    return TensorType(dtype_of(value), _unpermuted_list(shape_of(value), perm))


def _located(op: Operation, like: Operation) -> Operation:
    op.location = like.location
    return op


def _transposed_back(
    new_op: Operation, old: Operation, perm: Sequence[int], rewriter: PatternRewriter
) -> None:
    """Replaces `old` by `new_op` (computed in channels-last) and its transpose by `perm`."""
    back = _located(mlx.TransposeOp(new_op.results[0], perm, old.results[0].type), old)
    rewriter.replace(old, [_located(new_op, old), back])


class SinkThroughElementwise(RewritePattern):
    """`f(transpose(x, p))` → `transpose(f(x), p)` for a unary op or a cast."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mlx.UnaryOp | mlx.AstypeOp):
            return
        transpose = _sinking(op.operands[0])
        if transpose is None:
            return
        perm = list(ints(transpose.axes))
        new_type = _unpermuted(op.results[0], perm)
        new_op = (
            mlx.AstypeOp(transpose.input, new_type)
            if isinstance(op, mlx.AstypeOp)
            else type(op)(transpose.input, new_type)
        )
        _transposed_back(new_op, op, perm, rewriter)


class SinkThroughBinary(RewritePattern):
    """`f(transpose(x, p), y)` → `transpose(f(x, y'), p)` where `y` is channels-first
    too (`y'` its input) or small (`y'` its transpose back, a view)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.BinaryOp, rewriter: PatternRewriter) -> None:
        transposes = [_sinking(v) for v in (op.lhs, op.rhs)]
        found = next((t for t in transposes if t is not None), None)
        if found is None:
            return
        perm = list(ints(found.axes))
        rank = len(perm)
        operands: list[SSAValue] = []
        for value, transpose in zip((op.lhs, op.rhs), transposes):
            if transpose is not None:
                if list(ints(transpose.axes)) != perm:
                    return
                operands.append(transpose.input)
                continue
            shape = shape_of(value)
            if DYNAMIC_INDEX in shape or math.prod(shape) > SMALL_OPERAND_ELEMENTS or len(shape) > rank:
                return
            operands.append(self._small_operand(value, perm, op, rewriter))
        new_op = type(op)(operands[0], operands[1], _unpermuted(op.result, perm))
        _transposed_back(new_op, op, perm, rewriter)

    @staticmethod
    def _small_operand(
        value: SSAValue, perm: Sequence[int], op: Operation, rewriter: PatternRewriter
    ) -> SSAValue:
        shape = shape_of(value)
        if math.prod(shape) == 1:
            return value  # a single value broadcasts the same in any layout
        rank = len(perm)
        element = dtype_of(value)
        if len(shape) < rank:
            leading = list(range(rank - len(shape)))
            full = [1] * len(leading) + list(shape)
            expand = _located(mlx.ExpandDimsOp(value, leading, TensorType(element, full)), op)
            rewriter.insert(expand)
            value, shape = expand.results[0], tuple(full)
        inverse = _inverse(perm)
        back = _located(
            mlx.TransposeOp(value, inverse, TensorType(element, [shape[i] for i in inverse])), op
        )
        rewriter.insert(back)
        return back.results[0]


class SinkThroughPad(RewritePattern):
    """`pad(transpose(x, p))` → `transpose(pad(x), p)`, the widths moved with the axes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.PadOp, rewriter: PatternRewriter) -> None:
        transpose = _sinking(op.input)
        if transpose is None:
            return
        perm = list(ints(transpose.axes))
        new_op = mlx.PadOp(
            transpose.input,
            _unpermuted_list(ints(op.low), perm),
            _unpermuted_list(ints(op.high), perm),
            op.value.value.data,
            _unpermuted(op.result, perm),
        )
        _transposed_back(new_op, op, perm, rewriter)


class SinkThroughSlice(RewritePattern):
    """`transpose(x, p)[bounds]` → `transpose(x[bounds moved with the axes], p)`; a
    bound given at run time (a dynamic batch's) moves with its axis."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.SliceOp, rewriter: PatternRewriter) -> None:
        transpose = _sinking(op.input)
        if transpose is None:
            return
        perm = list(ints(transpose.axes))
        new_op = mlx.SliceOp(
            transpose.input,
            _unpermuted_list(_mixed(ints(op.static_start), op.start), perm),
            _unpermuted_list(_mixed(ints(op.static_stop), op.stop), perm),
            _unpermuted_list(ints(op.strides), perm),
            _unpermuted(op.result, perm),
        )
        _transposed_back(new_op, op, perm, rewriter)


def _mixed(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[SSAValue | int]:
    """Per axis, its bound: the literal, or the run-time value standing for it."""
    values = iter(dynamic)
    return [next(values) if bound == DYNAMIC_INDEX else bound for bound in static]


class SinkThroughReduction(RewritePattern):
    """`reduce(transpose(x, p), axes)` → `transpose(reduce(x, p[axes]), p')`: with
    `keepdims` p itself; without, the kept axes' order (none when it is unchanged)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ReductionOp, rewriter: PatternRewriter) -> None:
        if isinstance(op, mlx.VarianceOp):
            return  # ddof: a property of its own, left alone
        transpose = _sinking(op.input)
        if transpose is None:
            return
        perm = list(ints(transpose.axes))
        reduced = op.reduced_axes()
        axes = sorted(perm[a] for a in reduced)
        keepdims = op.keepdims is not None
        if keepdims:
            new_op = type(op)(transpose.input, axes, True, _unpermuted(op.result, perm))
            _transposed_back(new_op, op, perm, rewriter)
            return
        kept = [perm[i] for i in range(len(perm)) if i not in reduced]  # x's axes, in result order
        order = sorted(kept)
        order_perm = [order.index(axis) for axis in kept]
        new_type = _unpermuted(op.result, order_perm)
        new_op = type(op)(transpose.input, axes, False, new_type)
        if order_perm == sorted(order_perm):
            rewriter.replace(op, _located(new_op, op))
            return
        _transposed_back(new_op, op, order_perm, rewriter)


class DimThroughTranspose(RewritePattern):
    """`dim(transpose(x, p), a)` → `dim(x, p[a])`: a size read (a dynamic batch's, for
    a slice bound) does not keep a channels-first view alive."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.DimOp, rewriter: PatternRewriter) -> None:
        transpose = _sinking(op.input)
        if transpose is None:
            return
        axis = op.axis.value.data % len(ints(transpose.axes))
        rewriter.replace(op, _located(mlx.DimOp(transpose.input, ints(transpose.axes)[axis]), op))


class ConvWeightChannelsLast(FoldWeightTranspose):
    """A weight transposed for convolutions only is stored transposed
    (`FoldWeightTranspose`, restricted to them: a matmul reads a transposed weight
    without a copy)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        users = [use.operation for use in op.result.uses]
        if not users or not all(
            isinstance(user, mlx.ConvGeneralOp) and user.weight == op.result for user in users
        ):
            return
        super().match_and_rewrite(op, rewriter)


@dataclass(frozen=True)
class CpuChannelsLastPass(ModulePass):
    """CPU target: activations stay channels-last between convolutions, weights stored so.

    Channels-first transposes sink through elementwise ops, pads, slices and
    reductions until they cancel."""

    name = "cpu-channels-last"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns: list[RewritePattern] = [
            SinkThroughElementwise(),
            SinkThroughBinary(),
            SinkThroughPad(),
            SinkThroughSlice(),
            SinkThroughReduction(),
            DimThroughTranspose(),
            ComposeTransposes(),
            RemoveIdentityTranspose(),
            ConvWeightChannelsLast(),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
