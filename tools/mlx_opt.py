"""`mlx-opt`: mlxir's modular optimizer driver, an `xDSLOptMain` with our dialects,
passes and targets.

    mlx-opt model.mlir -p canonicalize,cse
    mlx-opt tests/filecheck/x.mlir --split-input-file --verify-diagnostics

Bad input never ends in a Python traceback: a parse error prints `file:line:col`
with the problem, a verifier error names the op and the broken rule, an unknown
pass or option is a one-line error; each exits with status 1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException
from xdsl.xdsl_opt_main import xDSLOptMain

from mlxir.tools.registry import PASSES, register_dialects, registered_passes

TOOL_NAME = "mlx-opt"
MLXFB_FRONTEND = "mlxfb"  # = mlxir.codegen.tooling.FRONTEND (not imported: --help stays fast)
MLXFB_TARGET = "mlx-fb"  # = mlxir.codegen.tooling.TARGET


class MlxOptMain(xDSLOptMain):
    version_format = "mlx-opt (mlxir), built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="mlxir modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        register_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in registered_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        from xdsl.universe import Universe

        self.available_targets["mlir"] = Universe.get_multiverse().all_targets["mlir"]
        self.available_targets[MLXFB_TARGET] = self._emit_mlxfb

    def register_all_frontends(self) -> None:
        from xdsl.universe import Universe

        self.available_frontends["mlir"] = Universe.get_multiverse().all_frontends["mlir"]
        self.available_frontends[MLXFB_FRONTEND] = self._parse_mlxfb
        self.available_frontends["pt2"] = self._import_pt2

    def _import_pt2(self, stream: IO[bytes]) -> ModuleOp:
        """A saved ExportedProgram, imported to the aten level (payloads kept beside)."""
        import io

        import torch

        from mlxir.conversions.torch_to_aten import import_program

        try:
            with quiet_torch_export_logs():
                ep = torch.export.load(io.BytesIO(stream.read()))
        except Exception as error:  # torch raises many types for a bad archive
            raise ValueError(
                f"{self.get_input_name()} is not a torch.export archive: {error}"
            ) from error
        return import_program(ep)

    # -- .mlxfb programs: binary in and out, payloads carried from frontend to target --

    def _mlxfb(self) -> Any:
        from mlxir.codegen.tooling import MlxfbSession

        if not hasattr(self, "_mlxfb_session"):
            self._mlxfb_session = MlxfbSession()
        return self._mlxfb_session

    def _parse_mlxfb(self, stream: IO[bytes]) -> ModuleOp:
        return self._mlxfb().parse(self.ctx, stream, self.get_input_name())

    def _emit_mlxfb(self, module: ModuleOp, output: IO[Any]) -> None:
        output.write(self._mlxfb().emit(module))

    def _writes_mlxfb(self) -> bool:
        return parse_spec(self.args.target).name == MLXFB_TARGET

    def prepare_output(self) -> IO[Any]:
        if self._writes_mlxfb():
            from mlxir.codegen.tooling import BinaryOutput

            return BinaryOutput(self.args.output_file)  # type: ignore[return-value]
        return super().prepare_output()

    def output_resulting_program(self, prog: ModuleOp) -> Any:
        if self._writes_mlxfb():
            return self._mlxfb().emit(prog)
        return super().output_resulting_program(prog)


@contextlib.contextmanager
def quiet_torch_export_logs() -> Iterator[None]:
    """torch.export.load logs a traceback before raising on a bad archive; the error
    we raise says it in one line."""
    logger = logging.getLogger("torch.export")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def pass_help() -> str:
    lines = ["passes (use with -p 'a,b{option=value}'):"]
    for name, entry in PASSES.items():
        lines.append(f"  {name:<28} {entry.summary}")
    return "\n".join(lines)


def _fail(message: str) -> int:
    print(f"{TOOL_NAME}: error: {message}", file=sys.stderr)
    return 1


def run(args: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if args is None else args)
    if "-h" in argv or "--help" in argv:
        try:
            MlxOptMain(argv)
        except SystemExit:
            pass
        print()
        print(pass_help())
        return 0
    try:
        main = MlxOptMain(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    except Exception as error:  # a bad pass spec or option: one line, no traceback
        return _fail(str(error).strip().splitlines()[0] if str(error).strip() else repr(error))
    try:
        main.run()
    except ParseError as error:
        print(str(error).rstrip(), file=sys.stderr)
        return 1
    except (DiagnosticException, PassFailedException) as error:
        print(f"{main.get_input_name()}: error: {str(error).rstrip()}", file=sys.stderr)
        for note in getattr(error, "__notes__", ()):
            print(note, file=sys.stderr)
        return 1
    except FileNotFoundError as error:
        return _fail(f"cannot open '{error.filename}': {error.strerror}")
    except ValueError as error:
        return _fail(str(error))
    except Exception as error:  # a bug in mlxir, not in the input
        if os.environ.get("MLXIR_TRACEBACK"):
            raise
        return _fail(
            f"internal error: {type(error).__name__}: {error} "
            "(set MLXIR_TRACEBACK=1 for the traceback and please report it)"
        )
    return 0


def main() -> None:
    sys.exit(run())


def make_context() -> Context:
    """A context with every dialect `mlx-opt` knows, for library users and tests."""
    ctx = Context()
    register_dialects(ctx)
    return ctx


PassFactory = Callable[[], type[ModulePass]]
