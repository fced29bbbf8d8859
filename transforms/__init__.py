"""mlx-level transforms: canonicalization, the optimize-mlx passes (one per file),
quantization, the pattern catalog, and the targets (`target.py`; the CPU's passes in
`cpu/`). Each pass registers by being a `ModulePass` class in its own module
(`conversions/registry.py`)."""
