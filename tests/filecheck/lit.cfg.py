"""lit configuration: every `.mlir` file here is a test run through `mlx-opt`."""

import os
import sys

import lit.formats

config.name = "mlxir"  # noqa: F821
config.test_format = lit.formats.ShTest()  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["lit.cfg.py", "Inputs"]  # noqa: F821

# Run the tools of the environment lit itself runs in (the project's venv).
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    [bin_dir, os.environ.get("PATH", "")]
)
