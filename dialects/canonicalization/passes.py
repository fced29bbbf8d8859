"""Each canonicalization pattern as a pass of its own, so any subset runs alone:

    mlx-opt model.mlir -p fold-lossless-casts,zero-fully-masked-sdpa-rows
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker, RewritePattern

from mlxir.dialects.canonicalization import mlx as mlx_patterns
from mlxir.dialects.canonicalization.catalog import CANONICALIZATION_PATTERNS


@dataclass(frozen=True)
class PatternPass(ModulePass):
    """Applies one rewrite pattern everywhere until nothing changes."""

    name = "apply-pattern"
    PATTERN: ClassVar[type[RewritePattern]]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(self.PATTERN()).rewrite_module(op)


def pattern_pass(name: str) -> type[ModulePass]:
    class_name, summary = CANONICALIZATION_PATTERNS[name]
    pattern = getattr(mlx_patterns, class_name)
    cls = type(
        "".join(part.capitalize() for part in name.split("-")) + "Pass",
        (PatternPass,),
        {"name": name, "PATTERN": pattern, "__doc__": summary},
    )
    return dataclass(frozen=True)(cls)
