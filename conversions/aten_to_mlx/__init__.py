"""Lowering from the `aten` dialect to the `mlx` dialect (pass `convert-aten-to-mlx`),
being split into one module per op family; `core` still holds it all."""

from mlxir.conversions.aten_to_mlx.core import (
    DEFAULT_PIPELINE,
    LOWERING_PATTERNS,
    AtenLowering,
    ConvertAtenToMlxPass,
    Emitter,
    LowerBinary,
    LowerCreation,
    LoweringError,
    LowerNorm,
    LowerReduction,
    LowerSplit,
    LowerToMlxPass,
    LowerUnary,
    lower,
    promoted_dtype,
)

__all__ = [
    "DEFAULT_PIPELINE",
    "LOWERING_PATTERNS",
    "AtenLowering",
    "ConvertAtenToMlxPass",
    "Emitter",
    "LowerBinary",
    "LowerCreation",
    "LowerNorm",
    "LowerReduction",
    "LowerSplit",
    "LowerToMlxPass",
    "LowerUnary",
    "LoweringError",
    "lower",
    "promoted_dtype",
]
