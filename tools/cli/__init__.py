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
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

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
    return parser


def _check_output_folder(output: str | None) -> None:
    """A file to write into a folder that does not exist is the user's to fix, said
    before any work (not after a whole compile)."""
    if output and output != "-" and not Path(output).parent.is_dir():
        raise CliError(f"cannot write '{output}': the folder '{Path(output).parent}' does not exist")


def main_with(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from mlxir.codegen.errors import ProgramError
    from mlxir.runtime.program import InputError

    try:
        _check_output_folder(getattr(args, "output", None))
        return args.run(args)
    except BrokenPipeError:
        # The reader went away (`mlxir inspect m.mlxfb | head`): not an error of ours.
        # Point stdout at /dev/null so Python's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell tool killed by the signal reports
    except UsageError as error:
        _fail(str(error))
        return 2
    except (CliError, ProgramError, InputError) as error:
        return _fail(str(error))
    except Exception as error:
        from xdsl.utils.exceptions import DiagnosticException

        if isinstance(error, DiagnosticException) or _is_import_error(error):
            return _fail(str(error))
        if os.environ.get("MLXIR_TRACEBACK"):
            raise
        return _fail(
            f"internal error: {type(error).__name__}: {error} "
            "(set MLXIR_TRACEBACK=1 for the traceback and please report it)"
        )


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

