"""`apply-pdl`: rewrite patterns written as data, in MLIR's PDL dialect, applied to
`aten` and `mlx` IR by xDSL's PDL interpreter, with xDSL's pass and option names.

    mlx-opt model.mlir -p 'apply-pdl{pdl_file=rules.mlir}'
    mlxir.lower(module, "lower-to-mlx,apply-pdl{pdl_file=rules.mlir}")

Every `pdl.pattern` of the file is applied greedily until none matches, as xDSL's own
`apply-pdl` does. What mlxir adds around it: the file is read with the PDL dialect
beside mlxir's (its patterns name `mlx.*` and `aten.*` ops), and a file that is
missing or does not parse is one line, `file:line:col` and the problem, instead of an
assertion. Without `pdl_file` the patterns are taken from the input module itself.
docs/pdl.md has a worked example: `remove-identity-casts` written in PDL.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import builtin, pdl
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class ApplyPdlPass(ModulePass):
    """Applies the PDL patterns of `pdl_file` (or of the input) until none matches."""

    name = "apply-pdl"

    pdl_file: str | None = None

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from xdsl.interpreters.pdl import PDLRewritePattern

        patterns = op if self.pdl_file is None else _read_patterns(Path(self.pdl_file))
        rewrites: list[RewritePattern] = [
            PDLRewritePattern(rewrite, ctx, None) for rewrite in patterns.walk() if isinstance(rewrite, pdl.RewriteOp)
        ]
        if not rewrites:
            where = self.pdl_file or "the input"
            raise PassFailedException(f"apply-pdl: {where} has no pdl.pattern with a pdl.rewrite")
        PatternRewriteWalker(GreedyRewritePatternApplier(rewrites)).rewrite_module(op)


def _read_patterns(path: Path) -> builtin.ModuleOp:
    from mlxir.dialects.context import parse_mlir_file

    if not path.is_file():
        raise PassFailedException(f"apply-pdl: no PDL file '{path}'")
    try:
        return parse_mlir_file(path, pdl.PDL)
    except ValueError as error:
        raise PassFailedException(f"apply-pdl: {error}") from None
