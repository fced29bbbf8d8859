"""What several `mlxir` commands share: the checks of the paths and values they are
given (made before any work, so that a mistake never costs a compile), reading a
`.pt2`, a program and `--input` values, the quantization flags, op counts."""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import os
import threading
from collections import Counter
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlxir.tools.cli.errors import CliError, UsageError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op is not module)


def format_counts(counts: Counter[str], width: int = 3) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    cells = [f"{name} {count}" for name, count in items]
    rows = [cells[i : i + width] for i in range(0, len(cells), width)]
    return "\n".join("    " + "  ".join(f"{c:<38}" for c in row).rstrip() for row in rows)


def check_readable_file(path: str, what: str) -> None:
    """`path` names a file to read (`what` says what it should be, for the message)."""
    if Path(path).is_dir():
        raise CliError(f"'{path}' is a folder: give {what}")
    if not Path(path).exists():
        raise CliError(f"cannot read '{path}': no such file")


def check_writable_file(path: str | None, flag: str) -> None:
    """`path` (given with `flag`) names a file that can be written: not a folder, in a
    folder that exists and can be written. `None` and `-` (standard output) pass."""
    if path is None or path == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise CliError(f"{flag} '{path}' is a folder: give the file to write")
    folder = target.parent
    if not folder.is_dir():
        raise CliError(f"cannot write '{path}': the folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise CliError(f"cannot write '{path}': permission denied")


def check_writable_folder(path: str | None, flag: str) -> None:
    """`path` (given with `flag`) names a folder that files can be written into, or
    that can be made (its first existing ancestor is a folder that can be written)."""
    if path is None:
        return
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{flag} '{path}' is a file: give a folder to write into")
    existing = next(p for p in (folder, *folder.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise CliError(f"cannot make the folder '{path}': '{existing}' is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CliError(f"cannot write into the folder '{path}': permission denied on '{existing}'")


def make_folder(path: str) -> Path:
    """The folder `path`, made if missing: one line if it cannot be, for what
    `check_writable_folder` cannot foresee (root may write anywhere but /proc)."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CliError(f"cannot make the folder '{path}': {error.strerror}") from None
    return folder


def add_plugin_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--load-pass-plugin",
        dest="pass_plugins",
        action="append",
        default=[],
        metavar="FILE.py",
        help="register the passes this Python file defines, for -p (repeatable; conversions/plugins.py)",
    )


def check_pipeline(spec: str | None, plugins: Sequence[str] = ()) -> None:
    """Loads the `--load-pass-plugin` files (one that cannot be used is one line), then
    checks `-p`: a pipeline that does not parse, names a pass no one registered or gives
    a pass an option it does not take is a usage error, said before the program is read."""
    from mlxir.conversions.plugins import PluginError, load_pass_plugin

    try:
        for path in plugins:
            load_pass_plugin(path)
    except PluginError as error:
        raise CliError(str(error)) from None
    if spec is None:
        return
    from xdsl.passes import PassPipeline
    from xdsl.utils.arg_spec import parse_pipeline
    from xdsl.utils.exceptions import ArgSpecParseError, ParseError

    from mlxir.conversions.registry import registered_passes

    available = registered_passes()
    try:
        unknown = [p.name for p in parse_pipeline(spec) if p.name not in available]
        if unknown:
            names = ", ".join(f"'{name}'" for name in unknown)
            raise UsageError(f"-p '{spec}': unknown pass {names} (`mlx-opt --help` lists the passes)")
        PassPipeline.parse_spec(available, spec)
    except ParseError as error:
        raise UsageError(f"-p '{spec}': {error.msg} (at character {error.span.start + 1})") from None
    except (ValueError, ArgSpecParseError) as error:
        raise UsageError(f"-p '{spec}': {str(error).splitlines()[-1].strip()}") from None


@contextlib.contextmanager
def progress_while(stage: str) -> Generator[None, None, None]:
    """Keeps the progress line (when one is shown) naming `stage` and its seconds while
    one long call that reports nothing itself runs (`torch.export.load`)."""
    from mlxir.support.progress import report

    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.2):
            report(stage)

    # The line lives in a context variable: the ticking thread runs in a copy of this
    # context so that it draws on the same line.
    ticker = threading.Thread(target=contextvars.copy_context().run, args=(tick,), daemon=True)
    report(stage)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()


def load_exported(path: Path) -> Any:
    """The ExportedProgram saved at `path`, with a progress line while it is read (a
    few seconds: torch deserializes and re-traces it)."""
    from mlxir.conversions.torch_to_aten.archive import ArchiveError, load_archive

    try:
        with progress_while(f"reading {path.name}"):
            return load_archive(path)
    except ArchiveError as error:
        raise CliError(str(error)) from error


def quantize_option(args: argparse.Namespace) -> Any:
    """`--quantize BITS [--group-size N] [--quantize-mode M] [--quantize-embeddings]` as
    an `mlxir.Quantize`."""
    if args.quantize is None:
        if args.quantize_embeddings:
            raise UsageError("--quantize-embeddings needs --quantize BITS")
        if args.activation_bits is not None:
            raise UsageError("--activation-bits needs --quantize BITS")
        return None
    import mlxir

    quantize = mlxir.Quantize(
        bits=args.quantize, group_size=args.group_size, mode=args.quantize_mode, embeddings=args.quantize_embeddings,
        activation_bits=args.activation_bits,
    )
    try:
        quantize.check()
    except ValueError as error:
        raise UsageError(str(error)) from None
    return quantize


def add_quantize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quantize", type=int, metavar="BITS",
                        help="quantize the matmul weights to BITS (2, 3, 4, 5, 6 or 8) as mx.quantize does")
    parser.add_argument("--group-size", type=int, default=64, help="with --quantize: 32, 64 or 128 (default 64)")
    parser.add_argument("--quantize-mode", default="affine", choices=["affine", "mxfp4", "mxfp8"],
                        help="with --quantize (default affine)")
    parser.add_argument("--quantize-embeddings", action="store_true",
                        help="with --quantize: the embedding tables too (a tied LM head shares them)")
    parser.add_argument("--activation-bits", type=int, choices=[8, 16], metavar="BITS",
                        help="with --quantize: approximate products, x rounded per group to BITS (8 or 16) "
                             "bits as llama.cpp's q4_0 x q8_0 dots do (about 1e-2 of the output's magnitude at 8)")


def read_inputs(items: Sequence[str]) -> list[Any]:
    """`--input` values: .npy files as arrays, anything else as an integer."""
    import numpy as np

    inputs: list[Any] = []
    for item in items:
        if item.endswith(".npy"):
            try:
                inputs.append(np.load(item, allow_pickle=False))
            except OSError as error:
                raise CliError(f"cannot read input '{item}': {error.strerror}") from None
            except ValueError as error:
                raise CliError(f"cannot read input '{item}': {error}") from None
        else:
            try:
                inputs.append(int(item))
            except ValueError:
                raise CliError(f"input '{item}' is neither a .npy file nor an integer") from None
    return inputs


def read_program_file(path: str, what: str) -> bytes:
    """The bytes of the program file at `path` (`what` it should be, for the message)."""
    check_readable_file(path, what)
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read '{path}': {error.strerror}") from error


def load_program(path: str) -> Any:
    import mlxir

    return mlxir.load(path)

