"""What several `mlxir` commands share: reading a `.pt2`, a program and `--input`
values, the quantization flags, op counts."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlxir.tools.cli.errors import CliError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op is not module)


def format_counts(counts: Counter[str], width: int = 3) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    cells = [f"{name} {count}" for name, count in items]
    rows = [cells[i : i + width] for i in range(0, len(cells), width)]
    return "\n".join("    " + "  ".join(f"{c:<38}" for c in row).rstrip() for row in rows)



def load_exported(path: Path) -> Any:
    from mlxir.conversions.torch_to_aten.archive import ArchiveError, load_archive

    try:
        return load_archive(path)
    except ArchiveError as error:
        raise CliError(str(error)) from error


def quantize_option(args: argparse.Namespace) -> Any:
    """`--quantize BITS [--group-size N] [--quantize-mode M] [--quantize-embeddings]` as
    an `mlxir.Quantize`."""
    if args.quantize is None:
        if args.quantize_embeddings:
            raise CliError("--quantize-embeddings needs --quantize BITS")
        return None
    import mlxir

    quantize = mlxir.Quantize(
        bits=args.quantize, group_size=args.group_size, mode=args.quantize_mode, embeddings=args.quantize_embeddings
    )
    try:
        quantize.check()
    except ValueError as error:
        raise CliError(str(error)) from None
    return quantize


def add_quantize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quantize", type=int, metavar="BITS",
                        help="quantize the matmul weights to BITS (2, 3, 4, 5, 6 or 8) as mx.quantize does")
    parser.add_argument("--group-size", type=int, default=64, help="with --quantize: 32, 64 or 128 (default 64)")
    parser.add_argument("--quantize-mode", default="affine", choices=["affine", "mxfp4", "mxfp8"],
                        help="with --quantize (default affine)")
    parser.add_argument("--quantize-embeddings", action="store_true",
                        help="with --quantize: the embedding tables too (a tied LM head shares them)")



def read_inputs(items: Sequence[str]) -> list[Any]:
    """`--input` values: .npy files as arrays, anything else as an integer."""
    import numpy as np

    inputs: list[Any] = []
    for item in items:
        if item.endswith(".npy"):
            try:
                inputs.append(np.load(item, allow_pickle=False))
            except (OSError, ValueError) as error:
                raise CliError(f"cannot read input '{item}': {error}") from error
        else:
            try:
                inputs.append(int(item))
            except ValueError:
                raise CliError(f"input '{item}' is neither a .npy file nor an integer") from None
    return inputs


def load_program(path: str) -> Any:
    import mlxir

    return mlxir.load(path)

