"""The pass registry: every pass and pipeline `mlx-opt`, `lower`, the debugger and the
ExecuTorch partitioner accept, by name (`PASSES`: name → lazy factory and a one-line
summary). It sits above the transforms and the conversions it names, and imports them
only when a pass is asked for, so `mlx-opt --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.passes import ModulePass


def _canonicalize() -> type[ModulePass]:
    from mlxir.transforms.canonicalize import CanonicalizePass

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


def _cpu_channels_last() -> type[ModulePass]:
    from mlxir.transforms.cpu.channels_last import CpuChannelsLastPass

    return CpuChannelsLastPass


def _fold_conv_affine() -> type[ModulePass]:
    from mlxir.transforms.fold_conv_affine import FoldConvAffinePass

    return FoldConvAffinePass


def _cpu_depthwise_conv() -> type[ModulePass]:
    from mlxir.transforms.cpu.depthwise_conv import CpuDepthwiseConvPass

    return CpuDepthwiseConvPass


def _cpu_polynomial_exp() -> type[ModulePass]:
    from mlxir.transforms.cpu.polynomial_exp import CpuPolynomialExpPass

    return CpuPolynomialExpPass


def _cpu_float32_attention() -> type[ModulePass]:
    from mlxir.transforms.cpu.float32_attention import CpuFloat32AttentionPass

    return CpuFloat32AttentionPass


def _cpu_rope_pairs() -> type[ModulePass]:
    from mlxir.transforms.cpu.rope_pairs import CpuRopePairsPass

    return CpuRopePairsPass


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
        "the default pipeline: convert-aten-to-mlx, canonicalize, optimize-mlx, cse, dce "
        "(options: target=generic; target=cpu adds the CPU target's passes, fold-known-dims, cse and dce)",
    ),
    "convert-aten-to-mlx": PassEntry(
        _convert_aten_to_mlx, "lower every aten op to mlx ops; fail listing any leftover"
    ),
    "canonicalize": PassEntry(_canonicalize, "apply every op's canonicalization patterns"),
    "optimize-mlx": PassEntry(
        _optimize_mlx,
        "fold known dims, fuse norms and rotary embeddings, merge projections, un-repeat "
        "K/V, fold dequantizations into products (each also a pass below)",
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
    "cpu-channels-last": PassEntry(
        _cpu_channels_last,
        "CPU target: activations stay channels-last between convolutions (transposes sink "
        "through elementwise ops, pads, slices and reductions until they cancel); "
        "convolution weights stored channels-last",
    ),
    "fold-conv-affine": PassEntry(
        _fold_conv_affine,
        "a channels-last convolution's per-channel affine map of constants (an inference "
        "batch norm) folded into its weights and one bias at compile time",
    ),
    "cpu-depthwise-conv": PassEntry(
        _cpu_depthwise_conv,
        "CPU target: depthwise convolutions as sums of shifted views scaled per tap "
        "(MLX's CPU computes a grouped convolution in a generic loop)",
    ),
    "cpu-polynomial-exp": PassEntry(
        _cpu_polynomial_exp,
        "CPU target: exp, sigmoid and softmax from a polynomial exp of arithmetic ops "
        "(MLX's CPU exp is 50x slower than a multiply)",
    ),
    "cpu-float32-attention": PassEntry(
        _cpu_float32_attention,
        "CPU target: float16/bfloat16 attention computed in float32 (MLX's CPU rounds its "
        "scores to 16 bits)",
    ),
    "cpu-rope-pairs": PassEntry(
        _cpu_rope_pairs,
        "CPU target: rope as rotated pairs of a reshape, with one angle table per "
        "position source (MLX's CPU has no rope kernel)",
    ),
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
