"""`cpu-fuse-conv-epilogue`: a convolution, the add of a per-channel bias after it and
a relu, relu6 or silu after that → one `mlx.conv_bias_activation`.

What a convolution's epilogue is in a lowered CNN, channels last (after
`cpu-channels-last`, and `fold-conv-affine`, which leaves an inference batch norm as
the bias): `conv_general`, then `add(y, b)` with `b` of shape `[C]` (either operand
order), then `maximum(y, 0)` (relu), `maximum(y, 0)` then `minimum(y, 6)` (relu6,
`hardtanh(0, 6)`), or `sigmoid(y)` and `multiply(y, sigmoid(y))` (silu). Each step
fuses only when the value before it has no other reader, so every value the program
still reads is still computed; the fused op takes the last fused op's place and
location (its result is that op's value).

The CPU runs a depthwise one in the native kernel's own pass over the output (bias and
activation added before the store, `runtime/cpu/convolution.py`); any other, and every
device's generic kernel, computes the ops fused, in order (`evaluator/linalg.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, shape_of
from mlxir.transforms.matching import scalar_constant


def _only_reader(value: SSAValue) -> Operation | None:
    """The one op that reads `value` (once), or None."""
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _binary(op: Operation | None, name: str, value: SSAValue) -> tuple[mlx.BinaryOp, SSAValue] | None:
    """`op` when it is `name(value, other)` or `name(other, value)` of `value`'s type,
    and `other`."""
    if not isinstance(op, mlx.BinaryOp) or op.name != name or op.result.type != value.type:
        return None
    if op.lhs == op.rhs:
        return None
    return op, op.rhs if op.lhs == value else op.lhs


def _bias_add(value: SSAValue) -> tuple[mlx.BinaryOp, SSAValue] | None:
    """The add of a `[C]` vector of `value`'s element type that is `value`'s one reader,
    and the vector."""
    found = _binary(_only_reader(value), "mlx.add", value)
    if found is None:
        return None
    channels = shape_of(value)[-1]
    bias = found[1]
    if channels == DYNAMIC_INDEX or tuple(shape_of(bias)) != (channels,) or dtype_of(bias) != dtype_of(value):
        return None
    return found


def _clamp(value: SSAValue, name: str, bound: float) -> mlx.BinaryOp | None:
    """`name(value, bound)` (`maximum` or `minimum` with a one-element constant), when it
    is `value`'s one reader."""
    found = _binary(_only_reader(value), name, value)
    return found[0] if found is not None and scalar_constant(found[1]) == bound else None


def _silu(value: SSAValue) -> list[Operation] | None:
    """`sigmoid(value)` and `multiply(value, sigmoid(value))`, when they are `value`'s
    only readers and the multiply is the sigmoid's."""
    readers = {use.operation for use in value.uses}
    if len(readers) != 2 or len(list(value.uses)) != 2:
        return None
    sigmoid = next((op for op in readers if isinstance(op, mlx.UnaryOp) and op.name == "mlx.sigmoid"), None)
    if sigmoid is None or sigmoid.result.type != value.type:
        return None
    found = _binary(_only_reader(sigmoid.result), "mlx.multiply", sigmoid.result)
    if found is None or found[1] != value:
        return None
    return [sigmoid, found[0]]


def _activation(value: SSAValue) -> tuple[str, list[Operation]]:
    """The activation applied to `value` and its ops, or `"none"` and no op."""
    relu = _clamp(value, "mlx.maximum", 0.0)
    if relu is not None:
        six = _clamp(relu.result, "mlx.minimum", 6.0)
        return ("relu6", [relu, six]) if six is not None else ("relu", [relu])
    silu = _silu(value)
    return ("silu", silu) if silu is not None else ("none", [])


class FuseConvEpilogue(RewritePattern):
    """`conv_general(x, w)` [`+ b`] [relu | relu6 | silu] → `conv_bias_activation`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ConvGeneralOp, rewriter: PatternRewriter) -> None:
        fused: list[Operation] = [op]
        value: SSAValue = op.result
        bias: SSAValue | None = None
        if (add := _bias_add(value)) is not None:
            fused.append(add[0])
            value, bias = add[0].result, add[1]
        activation, activation_ops = _activation(value)
        fused += activation_ops
        if len(fused) == 1:
            return
        new = mlx.ConvBiasActivationOp(op, bias=bias, activation=activation)
        last = fused[-1]
        new.location = last.location
        rewriter.replace(last, new)
        for dead in reversed(fused[:-1]):  # readers first: each is unread once its reader is gone
            rewriter.erase(dead)


@dataclass(frozen=True)
class CpuFuseConvEpiloguePass(ModulePass):
    """CPU target: a convolution, its per-channel bias and relu/relu6/silu as one op.

    `mlx.conv_bias_activation`, which the CPU's native depthwise kernel computes in one
    pass over its output (`FuseConvEpilogue`)."""

    name = "cpu-fuse-conv-epilogue"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseConvEpilogue(), apply_recursively=False).rewrite_module(op)
