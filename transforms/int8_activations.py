"""`cpu-int8-activations`: quantized products whose `x` is quantized too, to int8 per
group, as llama.cpp's q4_0 x q8_0 dot products do.

    mlx-opt model.mlir -p 'lower-to-mlx{target=cpu},quantize-weights{bits=4 group-size=64},cpu-int8-activations'

Every `mlx.quantized_matmul` in affine mode with `transpose` (what `quantize-weights`
makes) gets `activation_bits = 8` (`bits=16`: 16). Its meaning is then an approximate
product, visible in the IR: `x` rounded per group of `group_size` to `2^(b-1) - 1`
levels of its largest magnitude, then the exact product (`mlx.QuantizedMatmulOp`,
`evaluator/linalg.py`). On the CPU the native kernel computes it with integer dot
products of the weight's codes and `x`'s int8 values (`native/kernels/quantized.cpp`);
any device runs the generic composition.

A pass run on request, never in the CPU target: the product is no longer the exact
one. Its error, measured in `runtime/cpu/products.py` (`NATIVE_INT8_ERROR`), is about
1 % of the largest output of one product (4 bits, groups of 64), against 1e-6 for the
exact kernel. It runs after the weights are quantized: `mlxir.compile(ep, quantize=...)`
quantizes after the pipeline, so a program that wants both names `quantize-weights`
in its pipeline instead."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from mlxir.dialects import mlx


@dataclass(frozen=True)
class QuantizeActivations(RewritePattern):
    """An affine, transposed `quantized_matmul` without `activation_bits` gets `bits`."""

    bits: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.QuantizedMatmulOp, rewriter: PatternRewriter) -> None:
        if op.activation_bits is not None or op.transpose is None or op.mode.data != "affine":
            return
        quantized = mlx.QuantizedMatmulOp.create(
            operands=list(op.operands),
            result_types=[op.result.type],
            properties={**op.properties, "activation_bits": IntegerAttr(self.bits, 64)},
            attributes=dict(op.attributes),
        )
        quantized.location = op.location
        rewriter.replace(op, quantized)


@dataclass(frozen=True)
class CpuInt8ActivationsPass(ModulePass):
    """On request: affine quantized products with x quantized to int8 per group (approximate).

    `bits=16` quantizes x to int16 instead. A product that already has
    `activation_bits` keeps them."""

    name = "cpu-int8-activations"

    bits: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.bits not in mlx.ACTIVATION_BITS:
            raise PassFailedException(
                f"{self.name}: bits must be one of {mlx.ACTIVATION_BITS}, got {self.bits}"
            )
        PatternRewriteWalker(QuantizeActivations(self.bits), apply_recursively=False).rewrite_module(op)
