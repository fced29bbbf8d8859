"""The pipelines, built here only: `lower-to-mlx` (the generic pipeline, then a target's
passes), the pass names it runs (`pipeline_passes`; `optimize_mlx_passes` for the
`optimize-mlx` stage), its spec for a target (`default_pipeline`) and `lower()`.

The compiler takes its target from its caller and never asks MLX which device it
runs on: the top-level API (`mlxir.lower`, `mlxir.compile`) passes the target of this
process's device, `mlxir.runtime.backend.host_target()`. A target is declared beside
its passes (`transforms/target.py`, `transforms/cpu/__init__.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mlxir.support.gc_pause import without_gc
from mlxir.support.progress import report
from mlxir.transforms.cpu import CPU
from mlxir.transforms.target import GENERIC, Target

GENERIC_PIPELINE = ("convert-aten-to-mlx", "canonicalize", "optimize-mlx", "cse", "dce")
"""What every target runs first."""

AFTER_TARGET_PASSES = ("fold-known-dims", "cse", "dce")
"""What runs after a target's own passes: a rewrite asks `mlx.dim` for sizes the
function already knows, and equal subexpressions it leaves (the ropes' angle tables)
become one."""

TARGETS: dict[str, Target] = {target.name: target for target in (GENERIC, CPU)}
"""Every target `lower-to-mlx{target=...}` accepts, by name."""


def target_named(name: str) -> Target:
    target = TARGETS.get(name)
    if target is None:
        raise PassFailedException(f"lower-to-mlx: unknown target '{name}' (known: {', '.join(TARGETS)})")
    return target


def pipeline_passes(target: str = GENERIC.name) -> list[str]:
    """The pass names `lower-to-mlx{target=...}` runs: the generic pipeline, then the
    target's own passes and `AFTER_TARGET_PASSES`."""
    passes = target_named(target).passes
    return [*GENERIC_PIPELINE, *passes, *AFTER_TARGET_PASSES] if passes else list(GENERIC_PIPELINE)


def optimize_mlx_passes() -> list[str]:
    """`optimize-mlx` written out as passes, in its order: `fold-known-dims`, each
    pattern the stage runs as a pass of its own (the catalog's order; not
    `fold-weight-transposes`, which the stage leaves out), `fold-known-dims`. The stage
    applies its patterns in one walk; one after another they reach the same forms."""
    from mlxir.transforms.catalog import OPTIMIZE, PATTERNS

    patterns = [name for name, entry in PATTERNS.items() if entry.stage == OPTIMIZE and entry.in_stage]
    return ["fold-known-dims", *patterns, "fold-known-dims"]


def default_pipeline(target: str | None = None) -> str:
    """`lower-to-mlx` for `target` (default: the generic target), as a pass spec."""
    chosen = target_named(target or GENERIC.name)
    return LowerToMlxPass.name if chosen is GENERIC else f"{LowerToMlxPass.name}{{target={chosen.name}}}"


@dataclass(frozen=True)
class LowerToMlxPass(ModulePass):
    """Lowers aten IR with the generic pipeline, then `target`'s passes (`transforms/cpu/`).

    The generic pipeline is convert-aten-to-mlx, canonicalize, optimize-mlx, cse and
    dce; a target with passes of its own (`target=cpu`) adds them, then
    fold-known-dims, cse and dce."""

    name = "lower-to-mlx"

    target: str = "generic"

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
    `target`, itself by default the generic target: `mlxir.lower` passes this device's),
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
