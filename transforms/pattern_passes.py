"""Passes built from the pattern catalog (`transforms/catalog.py`): `optimize-mlx`,
and each pattern as a pass of its own, so any subset runs alone:

    mlx-opt model.mlir -p fold-lossless-casts,zero-fully-masked-sdpa-rows
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, get_args

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from mlxir.transforms.catalog import OPTIMIZE, PATTERNS, Stage, pattern_module


@dataclass(frozen=True)
class OpDispatch(RewritePattern):
    """Tries on an op only the patterns registered for its name, in order, until one
    rewrites it: no op is matched against the patterns of other ops."""

    patterns: Mapping[str, tuple[RewritePattern, ...]]
    erase_dead: bool = False

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self.erase_dead and is_trivially_dead(op):
            # A fusion leaves its decomposition unread; erased at once (as MLIR's greedy
            # driver does), it no longer counts as a use that blocks the next pattern.
            rewriter.erase(op)
            return
        for pattern in self.patterns.get(op.name, ()):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def by_op(patterns: Iterable[tuple[tuple[str, ...], RewritePattern]]) -> dict[str, tuple[RewritePattern, ...]]:
    """(ops, pattern) pairs → op name → its patterns, in the order given."""
    table: dict[str, list[RewritePattern]] = {}
    for ops, pattern in patterns:
        for name in ops:
            table.setdefault(name, []).append(pattern)
    return {name: tuple(found) for name, found in table.items()}


@contextlib.contextmanager
def pattern_walk_caches() -> Generator[None, None, None]:
    """What a pattern walk computes once and shares: each function's known dims and
    each module's weight reads (`known_dims`, `constant_weights`)."""
    from mlxir.transforms.constant_weights import shared_weight_reads
    from mlxir.transforms.known_dims import shared_known_dims

    with shared_known_dims(), shared_weight_reads():
        yield


def pattern_class(pass_name: str) -> type[RewritePattern]:
    return getattr(importlib.import_module(pattern_module(pass_name)), PATTERNS[pass_name].pattern)


@functools.cache
def patterns_by_op(stage: Stage) -> dict[str, tuple[RewritePattern, ...]]:
    """Op name → the patterns of `stage` that rewrite it (for `canonicalize`, what
    `MlxCanonicalization` attaches to each op). An unknown stage is an error, not an
    empty table: no pattern silently goes missing."""
    if stage not in get_args(Stage):
        raise KeyError(f"no stage of patterns named '{stage}' (known: {', '.join(get_args(Stage))})")
    return by_op(
        (entry.ops, pattern_class(name)())
        for name, entry in PATTERNS.items()
        if entry.stage == stage and entry.in_stage
    )


@dataclass(frozen=True)
class PatternPass(ModulePass):
    """Applies one rewrite pattern everywhere until nothing changes.

    The base of the catalog's passes (`pattern_pass`), which name it: not a pass of its
    own."""

    PASS_NAME: ClassVar[str]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        entry = PATTERNS[self.PASS_NAME]
        pattern = pattern_class(self.PASS_NAME)()
        with pattern_walk_caches():
            PatternRewriteWalker(OpDispatch(by_op([(entry.ops, pattern)]))).rewrite_module(op)


def pattern_pass(name: str) -> type[ModulePass]:
    cls = type(
        "".join(part.capitalize() for part in name.split("-")) + "Pass",
        (PatternPass,),
        {"name": name, "PASS_NAME": name, "__doc__": PATTERNS[name].summary},
    )
    return dataclass(frozen=True)(cls)


@dataclass(frozen=True)
class OptimizeMlxPass(ModulePass):
    """Fuses norms and rotary embeddings, merges projections, un-repeats K/V, folds weights.

    The optimizations of mlx IR (the `optimize-mlx` stage of `lower-to-mlx`), each
    also a pass of its own, in a module named after it (`transforms/fuse_rope.py`):
    dims already known reused (`fold-known-dims`, before the patterns, which then see
    one value per size, and after, for the reshapes they leave), norms and rotary
    embeddings fused into MLX's fast kernels, projections merged, grouped-query
    attention on un-repeated K/V, arithmetic on constant weights done at compile time.
    Each keeps its input's values (a fused kernel within the float tolerance its
    pattern states). `fold-weight-transposes` is not among them (`catalog.py` says
    why). Expects canonicalized IR."""

    name = "optimize-mlx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from mlxir.transforms.known_dims import FoldKnownDimsPass

        FoldKnownDimsPass().apply(ctx, op)
        with pattern_walk_caches():
            PatternRewriteWalker(OpDispatch(patterns_by_op(OPTIMIZE), erase_dead=True)).rewrite_module(op)
        FoldKnownDimsPass().apply(ctx, op)
