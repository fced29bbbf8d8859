"""The CPU backend (`runtime/cpu/backend.py`). Importing this package imports nothing
else: `import mlxir` reads `runtime/cpu/blas.py` before MLX is imported."""
