"""`python -m mlxir.interop.model_explorer MODEL [--node-data FILE]`: Model Explorer on
a `.pt2`, `.mlir` or `.mlxfb` file with mlxir's adapter, until interrupted."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def run(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mlxir.interop.model_explorer",
        description="Show a .pt2, .mlir or .mlxfb file in Model Explorer (mlxir's adapter).",
    )
    parser.add_argument("model", metavar="MODEL", help="a .pt2, .mlir or .mlxfb file")
    parser.add_argument("--node-data", metavar="FILE",
                        help="a node data JSON file, such as mlxir debug's overlay")
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, default=8080,
                        help="8080 tries the next free port up to 8099")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    args = parser.parse_args(argv)

    from mlxir.interop.model_explorer import FILE_EXTENSIONS, ModelExplorerUnavailable, visualize

    model = Path(args.model)
    problem = None
    if model.suffix.lstrip(".") not in FILE_EXTENSIONS:
        problem = f"{model}: expected a .pt2, .mlir or .mlxfb file"
    elif not model.is_file():
        problem = f"{model}: no such file"
    elif args.node_data is not None and not Path(args.node_data).is_file():
        problem = f"{args.node_data}: no such file"
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        visualize(model.resolve(), args.node_data and Path(args.node_data).resolve(),
                  host=args.host, port=args.port, open_browser=not args.no_browser)
    except ModelExplorerUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run())
