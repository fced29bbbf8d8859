"""The passes: `convert-aten-to-mlx` (every family's patterns; fails listing any aten
op left over) and `lower-to-mlx` (the default pipeline), and `lower()`."""

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
from mlxir.support.gc_pause import without_gc
from mlxir.support.locations import describe, source_location
from mlxir.support.progress import report
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


DEFAULT_PIPELINE: str = "convert-aten-to-mlx,canonicalize,optimize-mlx,cse,dce"

GENERIC_TARGET = "generic"
CPU_TARGET = "cpu"


def _target_passes() -> dict[str, tuple[str, ...]]:
    from mlxir.transforms.cpu import CPU_TARGET_PASSES

    return {GENERIC_TARGET: (), CPU_TARGET: CPU_TARGET_PASSES}


def pipeline_passes(target: str = GENERIC_TARGET) -> list[str]:
    """The pass names `lower-to-mlx{target=...}` runs: the default pipeline, then the
    target's own passes, and after them `fold-known-dims` (a rewrite asks `mlx.dim`
    for sizes the function already knows), `cse` (so that equal subexpressions, such
    as the ropes' angle tables, are one) and `dce`."""
    extra = _target_passes().get(target)
    if extra is None:
        raise PassFailedException(
            f"lower-to-mlx: unknown target '{target}' (known: "
            f"{', '.join(_target_passes())})"
        )
    passes = DEFAULT_PIPELINE.split(",")
    return passes + [*extra, "fold-known-dims", "cse", "dce"] if extra else passes


def host_target() -> str:
    """The target of the device this process computes on: MLX's CPU gets the CPU's
    passes, a GPU (Metal, CUDA) the generic pipeline. A program compiled for one
    still runs on the other, with the same meaning."""
    import mlx.core as mx

    return CPU_TARGET if mx.default_device() == mx.cpu else GENERIC_TARGET


def default_pipeline(target: str | None = None) -> str:
    """`lower-to-mlx` for `target` (default: `host_target()`), as a pass spec."""
    chosen = target or host_target()
    return LowerToMlxPass.name if chosen == GENERIC_TARGET else f"{LowerToMlxPass.name}{{target={chosen}}}"


@dataclass(frozen=True)
class LowerToMlxPass(ModulePass):
    """The default pipeline: convert-aten-to-mlx, canonicalize, optimize-mlx, cse, dce;
    with `target=cpu`, then the CPU target's passes (`transforms/cpu/`),
    fold-known-dims, cse and dce."""

    name = "lower-to-mlx"

    target: str = GENERIC_TARGET

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xdsl.passes import PassPipeline

        from mlxir.conversions.registry import registered_passes

        names = pipeline_passes(self.target)
        passes = PassPipeline.parse_spec(registered_passes(), ",".join(names)).passes
        for done, module_pass in enumerate(passes):
            report(f"lower: {module_pass.name}", done, len(passes))
            module_pass.apply(ctx, op)


@without_gc
def lower(
    module: ModuleOp,
    pipeline: str | None = None,
    *,
    verify: bool = True,
    target: str | None = None,
) -> ModuleOp:
    """Lowers an aten-level module in place with `pipeline` (default: lower-to-mlx for
    `target`, itself by default the device this process computes on, `host_target()`),
    and verifies the result unless `verify=False` (`serialize` verifies what it is
    given: a compile verifies once)."""
    from xdsl.passes import PassPipeline

    from mlxir.conversions.registry import registered_passes
    from mlxir.dialects.context import make_context

    if pipeline is not None and target is not None:
        raise ValueError("lower: give a pipeline or a target, not both")

    def show(_: ModulePass | None, __: ModuleOp, next_pass: ModulePass | None) -> None:
        if next_pass is not None:
            report(f"lower: {next_pass.name}")

    ctx = make_context()
    spec = pipeline or default_pipeline(target)
    PassPipeline.parse_spec(registered_passes(), spec, callback=show).apply(ctx, module)
    if verify:
        module.verify()
    return module
