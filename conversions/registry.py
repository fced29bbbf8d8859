"""The pass registry: every pass and pipeline `mlx-opt`, `lower`, the debugger and the
ExecuTorch partitioner accept, by name (`PASSES`: name → lazy factory and a one-line
summary). It sits above the transforms and the conversions it names, and imports them
only when a pass is asked for, so `mlx-opt --help` stays fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from xdsl.passes import ModulePass


def _lazy(module: str, name: str) -> Callable[[], type[ModulePass]]:
    """The pass class `name` of `module`, imported when first asked for."""

    def load() -> type[ModulePass]:
        return cast(type[ModulePass], getattr(importlib.import_module(module), name))

    return load


@dataclass(frozen=True)
class PassEntry:
    factory: Callable[[], type[ModulePass]]
    summary: str


PASSES: dict[str, PassEntry] = {
    "lower-to-mlx": PassEntry(
        _lazy("mlxir.conversions.aten_to_mlx", "LowerToMlxPass"),
        "the default pipeline: convert-aten-to-mlx, canonicalize, optimize-mlx, cse, dce "
        "(options: target=generic; target=cpu adds the CPU target's passes, fold-known-dims, cse and dce)",
    ),
    "convert-aten-to-mlx": PassEntry(
        _lazy("mlxir.conversions.aten_to_mlx", "ConvertAtenToMlxPass"),
        "lower every aten op to mlx ops; fail listing any leftover",
    ),
    "canonicalize": PassEntry(
        _lazy("mlxir.transforms.canonicalize", "CanonicalizePass"),
        "apply every op's canonicalization patterns",
    ),
    "optimize-mlx": PassEntry(
        _lazy("mlxir.transforms.pattern_passes", "OptimizeMlxPass"),
        "fold known dims, fuse norms and rotary embeddings, merge projections, un-repeat "
        "K/V, fold dequantizations into products (each also a pass below)",
    ),
    "fold-known-dims": PassEntry(
        _lazy("mlxir.transforms.known_dims", "FoldKnownDimsPass"),
        "reuse a dim already known as an SSA value; drop reshapes/broadcasts to the "
        "input's own (symbolic) shape",
    ),
    "quantize-weights": PassEntry(
        _lazy("mlxir.transforms.quantize", "QuantizeWeightsPass"),
        "quantize matmuls' constant weights as mx.quantize does, into quantized_matmul "
        "(options: bits=4 group-size=64 mode=affine)",
    ),
    "shard-tensor-parallel": PassEntry(
        _lazy("mlxir.transforms.shard_tensor_parallel", "ShardTensorParallelPass"),
        "split attention and MLP pairs over N ranks: column- then row-parallel weights, "
        "one mlx.all_sum per pair; what it cannot prove safe stays whole, with a remark "
        "(options: ranks=2; run it last)",
    ),
    "cse": PassEntry(
        _lazy("xdsl.transforms.common_subexpression_elimination", "CommonSubexpressionElimination"),
        "eliminate common subexpressions",
    ),
    "dce": PassEntry(
        _lazy("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
        "remove ops whose results are unused and that have no effects",
    ),
    "cpu-channels-last": PassEntry(
        _lazy("mlxir.transforms.cpu.channels_last", "CpuChannelsLastPass"),
        "CPU target: activations stay channels-last between convolutions (transposes sink "
        "through elementwise ops, pads, slices and reductions until they cancel); "
        "convolution weights stored channels-last",
    ),
    "fold-conv-affine": PassEntry(
        _lazy("mlxir.transforms.fold_conv_affine", "FoldConvAffinePass"),
        "a channels-last convolution's per-channel affine map of constants (an inference "
        "batch norm) folded into its weights and one bias at compile time",
    ),
    "cpu-depthwise-conv": PassEntry(
        _lazy("mlxir.transforms.cpu.depthwise_conv", "CpuDepthwiseConvPass"),
        "CPU target: depthwise convolutions as sums of shifted views scaled per tap "
        "(MLX's CPU computes a grouped convolution in a generic loop)",
    ),
    "cpu-polynomial-exp": PassEntry(
        _lazy("mlxir.transforms.cpu.polynomial_exp", "CpuPolynomialExpPass"),
        "on request (not in the CPU target): exp, sigmoid, erf and softmax from a "
        "polynomial exp of arithmetic ops, where 16384 elements are known (MLX's CPU exp "
        "costs 47 multiplies)",
    ),
    "cpu-float32-attention": PassEntry(
        _lazy("mlxir.transforms.cpu.float32_attention", "CpuFloat32AttentionPass"),
        "CPU target: float16/bfloat16 attention computed in float32 (MLX's CPU rounds its "
        "scores to 16 bits)",
    ),
    "cpu-rope-pairs": PassEntry(
        _lazy("mlxir.transforms.cpu.rope_pairs", "CpuRopePairsPass"),
        "CPU target: rope as rotated pairs of a reshape, with one angle table per "
        "position source (MLX's CPU has no rope kernel)",
    ),
    "view-op-graph": PassEntry(
        _lazy("mlxir.transforms.view_op_graph", "ViewOpGraphPass"),
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
