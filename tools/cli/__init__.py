"""The `mlxir` command.

    mlxir demo                                   export, compile and run the built-in model
    mlxir compile model.pt2 -o model.mlxfb       compile a saved ExportedProgram
    mlxir compile model.pt2 --emit aten|mlx      print the IR at a level instead
    mlxir run model.mlxfb --input x.npy ...      run a program on .npy inputs
    mlxir debug model.pt2 --input x.npy [--all]  the first node whose value leaves eager
                                                 PyTorch's while its inputs agree
    mlxir debug model.pt2 --input x.npy --module edited.mlir
                                                 the same for an mlx-level module (compile --emit mlx)
    mlxir debug --bisect model.pt2 --input x.npy the first pass that takes the outputs away
                                                 from eager PyTorch's, and its IR diff
    mlxir inspect model.mlxfb                    instructions, slots, constants, signature
    mlxir inspect model.pte                      an ExecuTorch program's delegates, each
                                                 mlxir payload described as above
    mlxir generate --model DIR --prompt "text"   generate text, mlx-lm style, from a
                                                 save_pretrained folder (compiled once, cached)
    mlxir generate --model llm.mlxfb --tokenizer DIR --prompt "text"
    mlxir generate llm.mlxfb --ids 1,15,27       token ids in and out
    mlxir info                                   versions, MLX's device, the BLAS behind its
                                                 CPU matmuls and why, thread settings
    mlxir export-mlxfn model.mlxfb -o model.mlxfn --shape 1x16 --shape 4x16
                                                 MLX's own function file, loaded without mlxir
                                                 (mx.import_function, C++, Swift)

Each command is a module of this package with `add_parser(sub)` and `run(args) -> int`
(as mlx-lm's commands are); this one assembles the parser and holds the error policy.
The paths and values a command is given are checked before any work (a mistake never
costs a compile). An error in the user's input is one line on stderr and exit status 1,
never a traceback; a usage error (a flag given a value it does not take, flags that do
not go together) is one line too, named after its command as argparse's own are
(`mlxir compile: error: ...`), with exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from mlxir.tools.cli.common import check_writable_file
from mlxir.tools.cli.errors import CliError, UsageError

__all__ = ["CliError", "UsageError", "build_parser", "main", "main_with"]


def _version_line() -> str:
    """`mlxir --version`: mlxir's version and MLX's and xDSL's it runs on, read from the
    installed packages (nothing imported)."""
    from importlib.metadata import PackageNotFoundError, version

    def of(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return f"mlxir {of('mlxir')} (MLX {of('mlx')}, xDSL {of('xdsl')})"


def build_parser() -> argparse.ArgumentParser:
    """The `mlxir` parser: each command's subparser from its module's `add_parser`
    (importing a command module imports nothing heavy: torch, xDSL and MLX are imported
    by the commands that run)."""
    return _parsers()[0]


def _parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """`mlxir`'s parser and each command's, by name."""
    parser = argparse.ArgumentParser(prog="mlxir", description="PyTorch → MLX compiler")
    parser.add_argument("--version", action="version", version=_version_line())
    sub = parser.add_subparsers(dest="command", required=True)
    from mlxir.tools.cli import (
        cache_prompt,
        compile,
        debug,
        demo,
        export_mlxfn,
        generate,
        info,
        inspect,
        run,
    )

    for command in (demo, compile, debug, run, inspect, info, export_mlxfn, generate, cache_prompt):
        command.add_parser(sub)
    return parser, sub.choices


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line as the chosen command's arguments. A usage error exits with
    status 2 under the usage of the command it is in: an argument no command takes is
    the subcommand's error (argparse would report it under `mlxir`'s own usage)."""
    parser, commands = _parsers()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main_with(argv: Sequence[str] | None = None) -> int:
    """Runs one `mlxir` command: its exit status (argparse's usage errors exit, 2)."""
    args = parse(argv)
    from mlxir.codegen.errors import ProgramError
    from mlxir.runtime.program import InputError

    try:
        check_writable_file(getattr(args, "output", None), "-o")
        return args.run(args)
    except BrokenPipeError:
        # The reader went away (`mlxir inspect m.mlxfb | head`): not an error of ours.
        # Point stdout at /dev/null so Python's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell tool killed by the signal reports
    except UsageError as error:
        # named after the command, as argparse names its usage errors
        print(f"mlxir {args.command}: error: {error}", file=sys.stderr)
        return 2
    except (CliError, ProgramError, InputError) as error:
        return _fail(str(error))
    except Exception as error:
        if _is_diagnostic(error) or _is_import_error(error):
            return _fail(str(error))
        if isinstance(error, OSError) and error.filename is not None:
            # A file of the user's that cannot be read or written (a check before the
            # work cannot foresee every case: a full disk, /proc).
            return _fail(f"cannot use '{error.filename}': {error.strerror}")
        if os.environ.get("MLXIR_TRACEBACK"):
            raise
        return _fail(
            f"internal error: {type(error).__name__}: {error} "
            "(set MLXIR_TRACEBACK=1 for the traceback and please report it)"
        )


def _is_diagnostic(error: Exception) -> bool:
    """A verifier's or pass's diagnostic, told without importing xDSL (an error raised
    by xDSL means it is imported already)."""
    exceptions = sys.modules.get("xdsl.utils.exceptions")
    return exceptions is not None and isinstance(error, exceptions.DiagnosticException)


def _is_import_error(error: Exception) -> bool:
    """An importer error, told without importing the importer (it imports torch, which
    `mlxir generate` from a cached program never needs)."""
    importer = sys.modules.get("mlxir.conversions.torch_to_aten")
    return importer is not None and isinstance(error, importer.ImportError_)


def _fail(message: str) -> int:
    print(f"mlxir: error: {message}", file=sys.stderr)
    return 1


def main() -> None:
    sys.exit(main_with())

