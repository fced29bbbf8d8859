"""The `aten` and `mlx` dialects. Importing either applies mlxir's fixes to the pinned
xDSL (`support/xdsl_fixes.py`, from `dialects/common.py`), so their IR prints and parses alike
wherever it is used. This package itself imports nothing: the runtime reads the
xDSL-free tables of `dialects/elementwise.py` without xDSL."""
