"""The canonicalization patterns that run alone as passes: pass name → (pattern class
in `dialects/canonicalization/mlx.py`, one-line summary). Kept free of imports so
`mlx-opt --help` lists them without loading the dialects."""

CANONICALIZATION_PATTERNS: dict[str, tuple[str, str]] = {
    "remove-identity-casts": ("RemoveIdentityCast", "astype(x, dtype(x)) -> x"),
    "fold-lossless-casts": (
        "FoldLosslessCastChain",
        "astype(astype(x, d1), d2) -> astype(x, d2) when x -> d1 is exact",
    ),
    "fold-constant-casts": ("FoldConstantCast", "astype of a small constant -> a constant"),
    "fold-constant-arithmetic": (
        "FoldConstantArithmetic",
        "binary arithmetic on small float constants -> a constant",
    ),
    "remove-identity-transposes": (
        "RemoveIdentityTranspose",
        "identity transposes (or ones moving only size-1 dims) removed",
    ),
    "compose-transposes": ("ComposeTransposes", "transpose(transpose(x)) -> one transpose"),
    "remove-identity-reshapes": (
        "RemoveIdentityReshape",
        "reshape/broadcast_to to the input's own shape removed",
    ),
    "compose-reshapes": ("ComposeReshapes", "reshape(reshape(x)) -> one reshape"),
    "remove-identity-slices": ("RemoveIdentitySlice", "a slice of the whole input removed"),
    "zero-fully-masked-sdpa-rows": (
        "ZeroFullyMaskedRows",
        "SDPA rows whose keys are all masked give exact zeros, as in PyTorch",
    ),
    "unrepeat-kv": (
        "UnrepeatKV",
        "grouped-query attention on un-repeated K/V (HF's repeat_kv removed)",
    ),
    "fuse-rms-norm": ("FuseRmsNorm", "the RMSNorm decomposition times a weight -> mlx.rms_norm"),
    "fuse-layer-norm": ("FuseLayerNorm", "the LayerNorm decomposition -> mlx.layer_norm"),
    "fold-norm-affine": (
        "FoldNormAffine",
        "norm(x) * w -> norm(x, w); layer_norm(x, w) + b -> layer_norm(x, w, b)",
    ),
    "fold-weight-transposes": (
        "FoldWeightTranspose",
        "transpose(weight) -> a weight whose payload is transposed at compile time",
    ),
}
