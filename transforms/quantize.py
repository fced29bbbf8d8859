"""`quantize-weights`: mlxir's own weight quantization, as MLX's `mx.quantize` does it.

    mlx-opt model.mlir -p 'lower-to-mlx,quantize-weights{bits=4 group-size=64}'

Every `matmul` (or `addmm`) whose right operand is a constant 2-D weight `[K, N]` (or
the transpose of one, a `linear` weight `[N, K]`) with `K` divisible by the group size
becomes `mlx.quantized_matmul` on `mx.quantize(w)` of that weight in torch's `[N, K]`
layout: groups of `group_size` along the reduction dim share a scale (and, in
`affine` mode, a bias). The program then computes what eager torch would with every
such weight replaced by `mx.dequantize(mx.quantize(w))`, up to the rounding of MLX's
quantized product. Weights nothing else reads leave the module; a weight also read
elsewhere (a tied embedding) keeps its float copy for those reads.

With `embeddings=True` (`quantize-weights{embeddings=true}`), every `take` of rows of
a constant float table `[V, D]` with D divisible by the group size (an embedding)
becomes `mlx.quantized_take` on `mx.quantize` of the table. A tied embedding and LM
head then share one quantized copy and no float copy is left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, Signedness, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, is_float, shape_of
from mlxir.transforms.constant_weights import (
    add_global,
    array_of_constant,
    drop_unread,
    global_array,
    weight_global,
    weight_matrix,
)
from mlxir.transforms.int8_activations import QuantizeActivations


def _supported(mode: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The bits and group sizes `mlx.quantized_matmul` takes in `mode`."""
    if mode in mlx.MXFP_FORMATS:
        bits, group_size = mlx.MXFP_FORMATS[mode]
        return (bits,), (group_size,)
    return mlx.QUANTIZATION_BITS, mlx.QUANTIZATION_GROUP_SIZES


@dataclass(frozen=True)
class Quantize:
    """How to quantize weights: `mlxir.compile(ep, quantize=mlxir.Quantize(bits=4))`.

    `bits` in 2, 3, 4, 5, 6, 8 and `group_size` in 32, 64, 128 for `affine` mode;
    `mxfp4` (4 bits) and `mxfp8` (8 bits) take groups of 32. `embeddings=True`
    quantizes the embedding tables too. `skip(name)` keeps the weights (global names)
    it returns True for in floating point."""

    bits: int = 4
    group_size: int = 64
    mode: str = "affine"
    embeddings: bool = False
    """Also quantize embedding tables (`take` rows of a constant `[V, D]`, quantized
    along D), into `mlx.quantized_take`."""
    skip: Callable[[str], bool] | None = None
    activation_bits: int | None = None
    """Approximate, on request: the quantized products round `x` per group to this many
    bits (8 or 16) before the product, as llama.cpp's q4_0 x q8_0 dots do
    (`cpu-int8-activations`; affine mode only). `None` keeps the exact product."""

    def check(self) -> None:
        if self.mode not in mlx.QUANTIZATION_MODES:
            raise ValueError(
                f"quantization mode '{self.mode}' is not one of {', '.join(mlx.QUANTIZATION_MODES)}"
            )
        bits, groups = _supported(self.mode)
        if self.bits not in bits:
            raise ValueError(f"{self.mode} quantization takes bits in {list(bits)}, not {self.bits}")
        if self.group_size not in groups:
            raise ValueError(
                f"{self.mode} quantization takes a group size in {list(groups)}, not {self.group_size}"
            )
        if self.activation_bits is not None:
            if self.activation_bits not in mlx.ACTIVATION_BITS:
                raise ValueError(
                    f"activation bits must be one of {list(mlx.ACTIVATION_BITS)}, not {self.activation_bits}"
                )
            if self.mode != "affine":
                raise ValueError(f"activation bits need affine quantization, not {self.mode}")

    def key(self) -> str:
        """The scheme in a program cache's key. A `skip` predicate has no key: a caller
        caching programs must refuse one."""
        key = f"{self.mode}-{self.bits}bit-g{self.group_size}" + ("-embeddings" if self.embeddings else "")
        return key + (f"-a{self.activation_bits}" if self.activation_bits is not None else "")


def matmul_operands(op: Operation) -> tuple[SSAValue, SSAValue, SSAValue | None] | None:
    """`x`, the right operand and the bias of a `matmul` or a plain `addmm` (no alpha,
    no beta): the products a quantized one can replace."""
    if isinstance(op, mlx.MatmulOp):
        return op.lhs, op.rhs, None
    if isinstance(op, mlx.AddmmOp) and op.alpha is None and op.beta is None:
        return op.a, op.b, op.c
    return None


def replace_by_quantized_product(
    op: Operation,
    rewriter: PatternRewriter,
    packed: tuple[SSAValue, SSAValue, SSAValue | None],
    scheme: tuple[int, int, str],
    transpose: bool,
) -> None:
    """Replaces the `matmul`/`addmm` `op` by `quantized_matmul(x, w, scales, biases)` of
    the `packed` weight in `scheme` (group size, bits, mode), plus the addmm's bias."""
    found = matmul_operands(op)
    assert found is not None
    x, weight, bias = found
    result_type = op.results[0].type
    product_type = TensorType(dtype_of(x), [*shape_of(x)[:-1], shape_of(weight)[1]])
    product = mlx.QuantizedMatmulOp(
        x, *packed, *scheme, transpose, product_type if bias is not None else result_type
    )
    new: list[Operation] = [product]
    if bias is not None:
        new.append(mlx.BINARY_OP_CLASSES["add"](bias, product.result, result_type))
    for created in new:
        created.location = op.location
    rewriter.replace(op, new)


def _quantized_reads(anchor: Operation, source: mlx.GlobalOp, rows: Any, scheme: Quantize) -> list[mlx.WeightOp]:
    """Reads, before `anchor`, of `mx.quantize(rows)` (a float `[N, K]` matrix quantized
    along K): the packed global `<source>.q<bits>g<group>`, its `.scales` and, in affine
    mode, its `.biases`. A weight quantized for two uses (a tied embedding and LM head)
    gets one set of globals: `add_global` reuses a global holding the same value."""
    import mlx.core as mx

    quantized = mx.quantize(mx.contiguous(rows), scheme.group_size, scheme.bits, mode=scheme.mode)
    mx.eval(*quantized)  # pyright: ignore[reportUnknownMemberType] (mlx.core's stub leaves eval's *args unannotated)
    name = f"{source.sym_name.data}.q{scheme.bits}g{scheme.group_size}"
    kind = source.kind.data
    packed_type = TensorType(IntegerType(32, Signedness.UNSIGNED), list(quantized[0].shape))
    packed = cast(np.ndarray, np.array(quantized[0]))  # mlx's array.__array__ returns an NDArray without its dtype
    reads = [add_global(anchor, name, packed, packed_type, kind)]
    for suffix, part in zip(("scales", "biases"), quantized[1:], strict=False):
        part_dtype = source.type.get_element_type() if scheme.mode == "affine" else IntegerType(8, Signedness.UNSIGNED)
        reads.append(add_global(anchor, f"{name}.{suffix}", global_array(part), TensorType(part_dtype, list(part.shape)), kind))
    return reads


class _QuantizeWeights(RewritePattern):
    """What the two patterns share: the scheme, and the weights done and left."""

    def __init__(self, quantize: Quantize):
        self.quantize = quantize
        self.quantized: list[str] = []
        self.left: list[str] = []
        """Weights kept in float: their column count (the dim quantized) is not a multiple
        of the group size."""

    def fits(self, source: mlx.GlobalOp, k: int) -> bool:
        """Whether to quantize `source`, whose rows of `k` are cut into groups."""
        scheme = self.quantize
        if scheme.skip is not None and scheme.skip(source.sym_name.data):
            return False
        if k % scheme.group_size or (k * scheme.bits) % 32:
            self.left.append(source.sym_name.data)
            return False
        self.quantized.append(source.sym_name.data)
        return True


class QuantizeMatmulWeights(_QuantizeWeights):
    """`matmul(x, w)` / `addmm(c, x, w)` with `w` a constant weight → `quantized_matmul`
    on the weight quantized at compile time (plus `c`, for addmm)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        found = matmul_operands(op)
        if found is None:
            return
        x, weight, _ = found
        matrix = weight_matrix(weight)
        dtype = dtype_of(x)
        if matrix is None or not is_float(dtype) or dtype_of(weight) != dtype:
            return
        if not self.fits(matrix.source, shape_of(weight)[0]):
            return
        stored = array_of_constant(matrix.read)
        w_nk = stored if matrix.transposed else stored.T  # torch's [N, K] layout
        reads = _quantized_reads(op, matrix.source, w_nk, self.quantize)
        packed = (reads[0].result, reads[1].result, reads[2].result if len(reads) > 2 else None)
        scheme = (self.quantize.group_size, self.quantize.bits, self.quantize.mode)
        replace_by_quantized_product(op, rewriter, packed, scheme, True)
        drop_unread(weight, rewriter)


class QuantizeEmbeddingTables(_QuantizeWeights):
    """`take(w, indices, axis 0)` with `w` a constant float table `[V, D]` (an
    embedding) → `quantized_take` on the table quantized along D."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TakeOp, rewriter: PatternRewriter) -> None:
        table = op.input
        source = weight_global(table)
        if source is None or op.axis is None or len(shape_of(table)) != 2:
            return
        if op.axis.value.data not in (0, -2) or not is_float(dtype_of(table)):
            return
        if not self.fits(source, shape_of(table)[1]):
            return
        reads = _quantized_reads(op, source, array_of_constant(cast(Operation, table.owner)), self.quantize)
        taken = mlx.QuantizedTakeOp(
            reads[0].result,
            reads[1].result,
            reads[2].result if len(reads) > 2 else None,
            op.indices,
            self.quantize.group_size,
            self.quantize.bits,
            self.quantize.mode,
            op.result.type,
        )
        taken.location = op.location
        rewriter.replace(op, [taken])
        drop_unread(table, rewriter)


@dataclass(frozen=True)
class QuantizeWeightsPass(ModulePass):
    """Quantizes matmuls' constant weights as `mx.quantize` does, into `quantized_matmul`.

    `mx.quantize(w, group_size, bits, mode)` (see the module's docstring)."""

    name = "quantize-weights"

    bits: int = 4
    group_size: int = 64
    mode: str = "affine"
    embeddings: bool = False
    activation_bits: int = 0
    """8 or 16: the approximate products of `Quantize.activation_bits`; 0 keeps them exact."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        scheme = Quantize(
            self.bits,
            self.group_size,
            self.mode,
            self.embeddings,
            activation_bits=self.activation_bits or None,
        )
        try:
            scheme.check()
        except ValueError as error:
            raise PassFailedException(f"quantize-weights: {error}") from None
        quantize_weights(op, scheme)


def quantize_weights(module: ModuleOp, quantize: Quantize) -> str:
    """Quantizes `module`'s matmul weights (and embedding tables, if asked) in place
    (raises `ValueError` for a scheme MLX lacks) and says what it did in one line."""
    quantize.check()
    patterns: list[_QuantizeWeights] = [QuantizeMatmulWeights(quantize)]
    if quantize.embeddings:
        patterns.append(QuantizeEmbeddingTables(quantize))
    for pattern in patterns:
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(module)
    scheme = f"{quantize.bits} bits, groups of {quantize.group_size}, {quantize.mode}"
    if quantize.activation_bits is not None:
        PatternRewriteWalker(
            QuantizeActivations(quantize.activation_bits), apply_recursively=False
        ).rewrite_module(module)
        scheme += f", x rounded to {quantize.activation_bits} bits (approximate)"
    summary = f"quantized {len(patterns[0].quantized)} matmul weights"
    if quantize.embeddings:
        summary += f" and {len(patterns[1].quantized)} embedding tables"
    summary += f" ({scheme})"
    left = sorted({name for pattern in patterns for name in pattern.left})
    if left:
        summary += (
            f"; {len(left)} kept in float (columns not a multiple of {quantize.group_size}: "
            f"{', '.join(left[:3])}{', ...' if len(left) > 3 else ''})"
        )
    return summary
