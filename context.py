"""mlxir's core context: the one place that says which dialects and passes exist.

`make_context()` gives an xDSL context with every dialect registered (loaded lazily)
and the fixes to the pinned xDSL applied; `PASSES` names every pass `mlx-opt`, the
pipelines and the partitioner accept. The libraries (conversions, codegen, runtime)
and the tools read both from here; nothing here imports the tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.passes import ModulePass


def _aten() -> Dialect:
    from mlxir.dialects.aten import Aten

    return Aten


def _mlx() -> Dialect:
    from mlxir.dialects.mlx import MLX

    return MLX


def _builtin() -> Dialect:
    from xdsl.dialects.builtin import Builtin

    return Builtin


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "builtin": _builtin,
    "func": _func,
    "arith": _arith,
    "aten": _aten,
    "mlx": _mlx,
}


def register_dialects(ctx: Context) -> None:
    for name, factory in DIALECTS.items():
        if name == "builtin":
            ctx.load_dialect(factory())
        else:
            ctx.register_dialect(name, factory)


def _canonicalize() -> type[ModulePass]:
    from xdsl.transforms.canonicalize import CanonicalizePass

    return CanonicalizePass


def _cse() -> type[ModulePass]:
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    return CommonSubexpressionElimination


def _dce() -> type[ModulePass]:
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    return DeadCodeElimination


def _optimize_mlx() -> type[ModulePass]:
    from mlxir.transforms.pattern_passes import OptimizeMlxPass

    return OptimizeMlxPass


def _fold_known_dims() -> type[ModulePass]:
    from mlxir.transforms.known_dims import FoldKnownDimsPass

    return FoldKnownDimsPass


def _convert_aten_to_mlx() -> type[ModulePass]:
    from mlxir.conversions.aten_to_mlx import ConvertAtenToMlxPass

    return ConvertAtenToMlxPass


def _quantize_weights() -> type[ModulePass]:
    from mlxir.transforms.quantize import QuantizeWeightsPass

    return QuantizeWeightsPass


def _lower_to_mlx() -> type[ModulePass]:
    from mlxir.conversions.aten_to_mlx import LowerToMlxPass

    return LowerToMlxPass


def _view_op_graph() -> type[ModulePass]:
    from mlxir.transforms.view_op_graph import ViewOpGraphPass

    return ViewOpGraphPass


@dataclass(frozen=True)
class PassEntry:
    factory: Callable[[], type[ModulePass]]
    summary: str


PASSES: dict[str, PassEntry] = {
    "lower-to-mlx": PassEntry(
        _lower_to_mlx,
        "the default pipeline: convert-aten-to-mlx, canonicalize, optimize-mlx, cse, dce",
    ),
    "convert-aten-to-mlx": PassEntry(
        _convert_aten_to_mlx, "lower every aten op to mlx ops; fail listing any leftover"
    ),
    "canonicalize": PassEntry(_canonicalize, "apply every op's canonicalization patterns"),
    "optimize-mlx": PassEntry(
        _optimize_mlx,
        "fold known dims, fuse norms and rotary embeddings, merge projections, un-repeat "
        "K/V and fold weight transposes (each also a pass below)",
    ),
    "fold-known-dims": PassEntry(
        _fold_known_dims,
        "reuse a dim already known as an SSA value; drop reshapes/broadcasts to the "
        "input's own (symbolic) shape",
    ),
    "quantize-weights": PassEntry(
        _quantize_weights,
        "quantize matmuls' constant weights as mx.quantize does, into quantized_matmul "
        "(options: bits=4 group-size=64 mode=affine)",
    ),
    "cse": PassEntry(_cse, "eliminate common subexpressions"),
    "dce": PassEntry(_dce, "remove ops whose results are unused and that have no effects"),
    "view-op-graph": PassEntry(
        _view_op_graph,
        "print the IR as a Graphviz DOT graph on stdout, IR unchanged (options: "
        "max-label-len=20 print-attrs=true print-control-flow-edges=false "
        "print-data-flow-edges=true print-result-types=true print-debug-info=false)",
    ),
}
"""Pass name → factory (imported lazily so `mlx-opt --help` stays fast) and summary."""


def _pattern_passes() -> dict[str, PassEntry]:
    from mlxir.transforms.catalog import PATTERNS

    def factory(name: str) -> Callable[[], type[ModulePass]]:
        def make() -> type[ModulePass]:
            from mlxir.transforms.pattern_passes import pattern_pass

            return pattern_pass(name)

        return make

    return {name: PassEntry(factory(name), entry.summary) for name, entry in PATTERNS.items()}


PASSES.update(_pattern_passes())


def registered_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {name: entry.factory for name, entry in PASSES.items()}


def make_context() -> Context:
    """A context with every dialect mlxir knows, for the tools, library users and tests."""
    from mlxir import xdsl_fixes

    xdsl_fixes.apply()
    ctx = Context()
    register_dialects(ctx)
    return ctx


def parse_mlir_file(path: Path) -> ModuleOp:
    """The module in the text file `path`; a ValueError of one line naming
    `file:line:col` and the problem where it does not parse."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError

    try:
        return Parser(make_context(), path.read_text(), str(path)).parse_module()
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from error
    except ParseError as error:
        lines = str(error).strip().splitlines()
        # xDSL's message: the location, the source line, a caret, then the problem.
        raise ValueError(f"{lines[0]} {lines[-1]}" if len(lines) > 1 else lines[0]) from error
    except Exception as error:  # a verifier or type constraint raised while parsing
        first = str(error).strip().splitlines()
        raise ValueError(f"{path}: cannot parse: {first[0] if first else type(error).__name__}") from error
