"""The one registration of mlxir's rewrite patterns on the `mlx` dialect.

Each row names a pattern's pass, its class, the ops it rewrites and its stage. The
canonicalization patterns are defined together (`canonicalization/mlx.py`), each
optimization in a module named after its pass (`fuse-rope` in `fuse_rope.py`). From
this table come the ops' canonicalization traits (`canonicalize` rows), the
`optimize-mlx` pass (`optimize-mlx` rows it runs, `in_stage`), one pass per pattern
and `mlx-opt --help`. It imports nothing, so `--help` lists the passes without loading
the dialects.

Every pattern keeps the meaning of its input (docs/architecture.md). Canonicalization
only simplifies; the optimizations fuse ops into MLX's fast kernels or rewrite weights
and run as a stage of their own, after canonicalization has put the IR in the form
they match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Stage = Literal["canonicalize", "optimize-mlx"]

CANONICALIZE: Stage = "canonicalize"
OPTIMIZE: Stage = "optimize-mlx"

CANONICALIZATION_MODULE = "mlxir.transforms.canonicalization.mlx"
"""Where the `canonicalize` rows' pattern classes are defined."""

_FOLDABLE_BINARY_OPS = (
    "mlx.add",
    "mlx.subtract",
    "mlx.multiply",
    "mlx.divide",
    "mlx.maximum",
    "mlx.minimum",
)


@dataclass(frozen=True)
class PatternEntry:
    pattern: str
    """The pattern's class name, in its module (`pattern_module`)."""
    ops: tuple[str, ...]
    """The ops it rewrites: it is tried on these and no other."""
    stage: Stage
    summary: str
    in_stage: bool = True
    """Whether its stage runs it; if not, it runs only as a pass of its own."""


PATTERNS: dict[str, PatternEntry] = {
    "remove-identity-casts": PatternEntry(
        "RemoveIdentityCast", ("mlx.astype",), CANONICALIZE, "astype(x, dtype(x)) -> x"
    ),
    "fold-lossless-casts": PatternEntry(
        "FoldLosslessCastChain",
        ("mlx.astype",),
        CANONICALIZE,
        "astype(astype(x, d1), d2) -> astype(x, d2) when x -> d1 is exact",
    ),
    "fold-constant-casts": PatternEntry(
        "FoldConstantCast",
        ("mlx.astype",),
        CANONICALIZE,
        "astype of a small constant -> a constant",
    ),
    "fold-constant-arithmetic": PatternEntry(
        "FoldConstantArithmetic",
        _FOLDABLE_BINARY_OPS,
        CANONICALIZE,
        "binary arithmetic on small float constants -> a constant",
    ),
    "remove-identity-transposes": PatternEntry(
        "RemoveIdentityTranspose",
        ("mlx.transpose",),
        CANONICALIZE,
        "identity transposes (or ones moving only size-1 dims) removed",
    ),
    "compose-transposes": PatternEntry(
        "ComposeTransposes",
        ("mlx.transpose",),
        CANONICALIZE,
        "transpose(transpose(x)) -> one transpose",
    ),
    "remove-identity-reshapes": PatternEntry(
        "RemoveIdentityReshape",
        ("mlx.reshape", "mlx.broadcast_to"),
        CANONICALIZE,
        "reshape/broadcast_to to the input's own shape removed",
    ),
    "compose-reshapes": PatternEntry(
        "ComposeReshapes", ("mlx.reshape",), CANONICALIZE, "reshape(reshape(x)) -> one reshape"
    ),
    "remove-identity-slices": PatternEntry(
        "RemoveIdentitySlice", ("mlx.slice",), CANONICALIZE, "a slice of the whole input removed"
    ),
    "slices-to-split": PatternEntry(
        "SlicesToSplit",
        ("mlx.slice",),
        CANONICALIZE,
        "step-1 slices cutting one axis of a value into contiguous pieces that cover it "
        "-> one split",
    ),
    "fold-empty-concatenate": PatternEntry(
        "FoldEmptyConcatenate",
        ("mlx.concatenate",),
        CANONICALIZE,
        "concatenate drops inputs statically empty along the axis; one left of the "
        "result type -> that input",
    ),
    "fold-identity-arithmetic": PatternEntry(
        "FoldIdentityArithmetic",
        ("mlx.multiply", "mlx.divide", "mlx.add", "mlx.subtract"),
        CANONICALIZE,
        "x*1, 1*x, x/1, x-0 and (integer) x+0 -> x when the result type is x's",
    ),
    "fold-double-negation": PatternEntry(
        "FoldDoubleNegation", ("mlx.negative",), CANONICALIZE, "negative(negative(x)) -> x"
    ),
    "fold-constant-where": PatternEntry(
        "FoldConstantWhere",
        ("mlx.where",),
        CANONICALIZE,
        "where on a constant condition -> the branch it selects",
    ),
    "zero-fully-masked-sdpa-rows": PatternEntry(
        "ZeroFullyMaskedRows",
        ("mlx.scaled_dot_product_attention",),
        CANONICALIZE,
        "SDPA zero_masked_rows made an explicit where(any(mask)) guard, or dropped where "
        "no row can be empty",
    ),
    "scatter-to-slice-update": PatternEntry(
        "ScatterToSliceUpdate",
        ("mlx.scatter",),
        OPTIMIZE,
        "scatter along one axis at start + arange(n) (a KV cache write) -> "
        "dynamic_slice_update at start",
    ),
    "unrepeat-kv": PatternEntry(
        "UnrepeatKV",
        ("mlx.scaled_dot_product_attention",),
        OPTIMIZE,
        "grouped-query attention on un-repeated K/V (HF's repeat_kv removed)",
    ),
    "fuse-rms-norm": PatternEntry(
        "FuseRmsNorm",
        ("mlx.multiply",),
        OPTIMIZE,
        "the RMSNorm decomposition times a weight -> mlx.rms_norm",
    ),
    "fuse-layer-norm": PatternEntry(
        "FuseLayerNorm",
        ("mlx.multiply", "mlx.divide"),
        OPTIMIZE,
        "the LayerNorm decomposition -> mlx.layer_norm",
    ),
    "fold-norm-affine": PatternEntry(
        "FoldNormAffine",
        ("mlx.multiply", "mlx.add"),
        OPTIMIZE,
        "norm(x) * w -> norm(x, w); layer_norm(x, w) + b -> layer_norm(x, w, b)",
    ),
    "fold-constant-weights": PatternEntry(
        "FoldConstantWeights",
        ("mlx.astype", *_FOLDABLE_BINARY_OPS, "mlx.negative", "mlx.sqrt", "mlx.rsqrt", "mlx.exp"),
        OPTIMIZE,
        "an elementwise op of constants, one a weight -> a weight computed at compile time",
    ),
    "fuse-rope": PatternEntry(
        "FuseRope",
        ("mlx.add", "mlx.concatenate"),
        OPTIMIZE,
        "rotate_half, interleaved and partial rotary embeddings at contiguous positions -> mlx.rope",
    ),
    "fuse-bias-add": PatternEntry(
        "FuseBiasAdd",
        ("mlx.add",),
        OPTIMIZE,
        "matmul(x, w) + bias -> addmm(bias, x, w)",
    ),
    "merge-projections": PatternEntry(
        "MergeProjections",
        ("mlx.matmul", "mlx.addmm"),
        OPTIMIZE,
        "matmuls of one input by constant weights -> one matmul on the concatenated "
        "weights and a split",
    ),
    "split-heads-once": PatternEntry(
        "SplitHeadsOnce",
        ("mlx.split",),
        OPTIMIZE,
        "split, then reshape to heads and transpose per piece -> reshape, transpose, "
        "split on the head axis",
    ),
    "transpose-before-norm": PatternEntry(
        "TransposeBeforeNorm",
        ("mlx.transpose",),
        OPTIMIZE,
        "transpose(norm(x)) -> norm(transpose(x)) when the last axis stays last",
    ),
    "tanh-gelu-as-sigmoid": PatternEntry(
        "TanhGeluAsSigmoid",
        ("mlx.multiply",),
        OPTIMIZE,
        "0.5x(1 + tanh(k(x + c x^3))) -> x * sigmoid(x(2k + 2kc x^2)) (within 5e-7 in f32)",
    ),
    "fold-dequantize-into-matmul": PatternEntry(
        "FoldDequantizeIntoMatmul",
        ("mlx.matmul", "mlx.addmm"),
        OPTIMIZE,
        "matmul(x, dequantize(w)) or of its transpose -> quantized_matmul(x, w)",
    ),
    "fold-dequantize-into-take": PatternEntry(
        "FoldDequantizeIntoTake",
        ("mlx.take",),
        OPTIMIZE,
        "take(dequantize(w), indices, axis 0) -> quantized_take(w, indices)",
    ),
    "fold-weight-transposes": PatternEntry(
        "FoldWeightTranspose",
        ("mlx.transpose",),
        OPTIMIZE,
        "transpose(weight) -> a weight whose payload is transposed at compile time",
        # Not in optimize-mlx: MLX's matmul reads `w.T` without a copy, and transposing
        # every linear weight was most of a large model's compile time
        # (docs/compile-time.md).
        in_stage=False,
    ),
}
"""Pass name → its pattern."""


def pattern_module(pass_name: str) -> str:
    """Where the pattern of `pass_name` is defined: the `canonicalize` rows' together,
    each optimization in a module named after its pass (`fuse-rope`:
    `mlxir.transforms.fuse_rope`)."""
    if PATTERNS[pass_name].stage == CANONICALIZE:
        return CANONICALIZATION_MODULE
    return "mlxir.transforms." + pass_name.replace("-", "_")
