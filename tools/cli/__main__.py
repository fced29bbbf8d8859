"""`python -m mlxir.tools.cli`: the `mlxir` command."""

from mlxir.tools.cli import main

main()
