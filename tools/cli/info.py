"""`mlxir info`: versions, MLX's device, the BLAS behind its CPU matmuls and why, the
thread settings."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mlxir.tools.cli.errors import CliError


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("info", help="versions, device, the BLAS MLX uses, thread settings")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """One fact per line: versions, MLX's default device, the library MLX's cblas_sgemm
    is bound to and how mlxir chose it, the BLAS thread settings."""
    import platform
    from importlib import metadata, util

    from mlxir.runtime.cpu.facts import cpu_facts

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "unknown"

    print(f"mlxir: {version('mlxir')}")
    print(f"Python: {platform.python_version()} ({sys.executable})")
    print(f"platform: {platform.platform()}")
    try:
        import mlx.core as mx
    except ImportError as error:
        raise CliError(f"mlx is not importable: {error}") from None
    print(f"MLX: {version('mlx')}")
    print(f"MLX default device: {mx.default_device()}")
    from mlxir.runtime.backend import backend_for

    print(f"mlxir backend: {backend_for(mx.default_device()).name}")
    for name, value in cpu_facts():
        print(f"{name}: {value}")
    # The installed version, read without importing torch (seconds, and not needed here).
    torch = version("torch") if util.find_spec("torch") is not None else "not installed"
    print(f"torch: {torch}")
    return 0

