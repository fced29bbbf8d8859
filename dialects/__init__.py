"""The `aten` and `mlx` dialects. Importing them applies mlxir's fixes to the pinned
xDSL (`xdsl_fixes.py`), so their IR prints and parses alike wherever it is used."""

from mlxir import xdsl_fixes

xdsl_fixes.apply()
