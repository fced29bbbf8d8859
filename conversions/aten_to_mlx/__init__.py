"""Lowering from the `aten` dialect to the `mlx` dialect: pass `convert-aten-to-mlx`.

One rewrite pattern per aten op (the elementwise and reduction families are
instantiated from their tables). ATen's implicit type promotion becomes explicit
`mlx.astype`s here; Scalars become 0-d `mlx.constant`s (or `mlx.from_index` for
symbolic ones); ATen's `-1` sizes and open slice ends become runtime sizes from
`mlx.dim`, never the export-time values. Every new op carries the location of the
aten op it replaces. If an aten op survives, the pass fails listing each leftover
with its location.

One module per op family, as torch-mlir's TorchToLinalg: `core` (the `Emitter`,
`LoweringError`, the `AtenLowering` base, dtype promotion, shared helpers), then
`elementwise`, `reduction` (with scans and sorting), `shape`, `indexing`, `linalg`
(matmul, linear, convolution, pooling), `nn` (norms, attention) and `creation`, each
exposing its `PATTERNS`; every pattern declares the aten ops it rewrites in `OPS`.
`passes` holds the pass, which tries each op only against the patterns declaring it;
`lower-to-mlx` and `lower()` are re-exported from `conversions/pipelines.py`.
"""

from mlxir.conversions.aten_to_mlx.core import AtenLowering, Emitter, LoweringError, promoted_dtype
from mlxir.conversions.aten_to_mlx.passes import (
    LOWERING_PATTERNS,
    LOWERINGS_BY_OP,
    ConvertAtenToMlxPass,
)
from mlxir.conversions.pipelines import LowerToMlxPass, default_pipeline, lower, pipeline_passes

__all__ = [
    "LOWERING_PATTERNS",
    "LOWERINGS_BY_OP",
    "AtenLowering",
    "ConvertAtenToMlxPass",
    "Emitter",
    "LowerToMlxPass",
    "LoweringError",
    "default_pipeline",
    "lower",
    "pipeline_passes",
    "promoted_dtype",
]
