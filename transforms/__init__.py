"""mlx-level transforms: canonicalization, the optimize-mlx passes (one per file), quantization and the pattern catalog."""
