"""`convert-aten-to-mlx`: every family's patterns; fails listing any aten op left over.
The pipelines that run it (`lower-to-mlx`, `lower()`) are `conversions/pipelines.py`'s."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from mlxir.conversions.aten_to_mlx import (
    complex_numbers,
    creation,
    elementwise,
    indexing,
    linalg,
    nn,
    quantization,
    reduction,
    shape,
)
from mlxir.conversions.aten_to_mlx.core import AtenLowering, LoweringError
from mlxir.support.locations import describe, source_location
from mlxir.transforms.pattern_passes import OpDispatch, by_op

FAMILIES = (elementwise, reduction, shape, indexing, linalg, nn, creation, quantization, complex_numbers)
"""The modules of the op families, each exposing its `PATTERNS`."""

LOWERING_PATTERNS: tuple[AtenLowering, ...] = tuple(
    pattern for family in FAMILIES for pattern in family.PATTERNS
)
"""Every family's patterns, in the order the pass tries them on an op."""

LOWERINGS_BY_OP: dict[str, tuple[RewritePattern, ...]] = by_op(
    (pattern.op_names(), pattern) for pattern in LOWERING_PATTERNS
)
"""aten op name → the patterns declaring it in their `OPS`, in that order."""


def _describe(op: Operation) -> str:
    return f"{op.name} at {describe(op.location)}"


@dataclass
class _LocatedLowering(RewritePattern):
    """The lowering patterns, with each `LoweringError` prefixed by where the op that
    raised it comes from (the user's source line, from the importer's locations)."""

    patterns: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        try:
            self.patterns.match_and_rewrite(op, rewriter)
        except LoweringError as error:
            if source_location(op.location) is None:
                raise
            raise LoweringError(f"{describe(op.location)}: {error}") from error


@dataclass(frozen=True)
class ConvertAtenToMlxPass(ModulePass):
    """Lowers every aten op to mlx ops; fails listing any op left over."""

    name = "convert-aten-to-mlx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            # The applier erases a trivially dead op before it is lowered (its default,
            # kept so the output does not change); the dispatch tries each op only
            # against the patterns that declare it.
            lowering = GreedyRewritePatternApplier([OpDispatch(LOWERINGS_BY_OP)])
            PatternRewriteWalker(_LocatedLowering(lowering), apply_recursively=False).rewrite_module(op)
        except LoweringError as error:
            raise PassFailedException(str(error)) from error
        _erase_consumed_scalars(op)
        leftovers = [o for o in op.walk() if o.name.startswith("aten.")]
        if leftovers:
            raise PassFailedException(
                f"{len(leftovers)} aten op(s) could not be lowered:\n"
                + "\n".join("  " + _describe(o) for o in leftovers)
            )


def _erase_consumed_scalars(module: ModuleOp) -> None:
    """The aten ops' scalar operands (`arith.constant 2.5 : f64`) are folded into mlx
    constants of the tensor's type; left behind, an f64 scalar is a value no program
    can hold. A float scalar still used is a lowering bug, reported as such."""
    for constant in [o for o in module.walk() if isinstance(o, arith.ConstantOp)]:
        if constant.result.uses:
            if isinstance(constant.result.type, AnyFloat):
                raise PassFailedException(
                    f"{_describe(constant)}: a float scalar is still used after lowering "
                    f"by {', '.join(sorted({u.operation.name for u in constant.result.uses}))}"
                )
            continue
        Rewriter.erase_op(constant)

