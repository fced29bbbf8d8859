"""`mlx-opt`: mlxir's modular optimizer driver, an `xDSLOptMain` with our dialects,
passes and targets.

    mlx-opt model.mlir -p canonicalize,cse
    mlx-opt tests/filecheck/x.mlir --split-input-file --verify-diagnostics

Bad input never ends in a Python traceback: a parse error prints `file:line:col`
with the problem, a verifier error `file:line:col: error:` with the op and the broken
rule, an unknown pass or option is a one-line error; each exits with status 1.

Where xDSL raises without a location, the driver finds one: the `mlir` frontend is
a parser that remembers where each op starts, so an error raised while an op is
parsed (a type constraint of a declarative format: "f32 should be of base attribute
tensor") becomes a parse error at that op, and a verifier error names the first op
that fails to verify (or, for an op a pass created, its `loc(...)` or the nearest
parsed op that holds it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, cast

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain

from mlxir.conversions.registry import PASSES, registered_passes
from mlxir.dialects.context import register_dialects
from mlxir.support import xdsl_fixes
from mlxir.support.gc_pause import gc_paused
from mlxir.support.locations import file_line_col

xdsl_fixes.apply()

TOOL_NAME = "mlx-opt"
MLXFB_FRONTEND = "mlxfb"  # = mlxir.codegen.tooling.FRONTEND (not imported: --help stays fast)
MLXFB_TARGET = "mlx-fb"  # = mlxir.codegen.tooling.TARGET


_SPANS: weakref.WeakKeyDictionary[Operation, Span[str]] = weakref.WeakKeyDictionary()
"""Where each parsed op starts in its file (`LocatedParser`)."""


PARSED_AT = "mlxir_parsed_at"
"""The attribute `LocatedParser` sets on an error raised while an op was parsed: the
op's span."""


class LocatedParser(Parser):
    """A parser that remembers where each op starts, and where the op being parsed
    was when an error without a location was raised (a type constraint checked by a
    declarative format raises a bare `VerifyException`, an integer out of its type's
    range a `ValueError`): `error.mlxir_parsed_at`."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except (DiagnosticException, ValueError, OverflowError, AssertionError) as error:
            # A ValueError or OverflowError: a value out of its type's range (an f16
            # literal over 65504 fails to pack). An AssertionError counts
            # only from xDSL's own parser, which asserts on some malformed input (a
            # dense literal's complex element): elsewhere it is a bug of mlxir.
            if not hasattr(error, PARSED_AT) and (
                not isinstance(error, AssertionError) or _raised_in_xdsl_parser(error)
            ):
                setattr(error, PARSED_AT, start)
            raise
        _SPANS[op] = start
        return op


def _raised_in_xdsl_parser(error: BaseException) -> bool:
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    path = tb.tb_frame.f_code.co_filename.replace(os.sep, "/") if tb is not None else ""
    return "/xdsl/parser/" in path


@dataclasses.dataclass(frozen=True)
class LocatedMLIRFrontend(MLIRFrontend):
    """The `mlir` frontend with `LocatedParser`."""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str = "input") -> ModuleOp:
        return LocatedParser(ctx, input.read(), input_name).parse_module(not self.no_implicit_module)


def _post_order(op: Operation) -> Iterator[Operation]:
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                yield from _post_order(child)
    yield op


def failing_op(module: Operation) -> Operation | None:
    """The op whose verification fails first, in the order `Operation.verify` visits
    them (nested ops first); an op whose regions fail with every nested op verifying
    (dominance, terminators) counts as failing itself."""
    for op in _post_order(module):
        try:
            op.verify(verify_nested_ops=False)
            for region in op.regions:
                region.verify()
        except Exception:
            return op
    return None


def _rewritten_op(error: BaseException) -> Operation | None:
    """The op of the innermost `match_and_rewrite(self, op, rewriter)` frame on the
    way to `error` (or its cause): the op a pattern-based pass was rewriting."""
    found = None
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        tb = current.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_name == "match_and_rewrite":
                op = frame.f_locals.get("op")
                if isinstance(op, Operation):
                    found = op
            tb = tb.tb_next
        current = current.__cause__ or current.__context__
    return found


def location_of(op: Operation, line_offset: int = 0) -> str | None:
    """`file:line:col` of `op`: where it was parsed, else its `loc(...)`, else the
    nearest enclosing op that was parsed."""
    current: Operation | None = op
    while current is not None:
        span = _SPANS.get(current)
        if span is not None:
            return str(dataclasses.replace(span, line_offset=line_offset).get_location())
        where = file_line_col(current.location)
        if where is not None:
            return where
        current = current.parent_op()
    return None


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
        self.available_frontends["mlir"] = lambda: LocatedMLIRFrontend
        self.available_frontends[MLXFB_FRONTEND] = self._parse_mlxfb
        self.available_frontends["pt2"] = self._import_pt2

    def _import_pt2(self, stream: IO[bytes]) -> ModuleOp:
        """A saved ExportedProgram, imported to the aten level, weights in the IR."""
        from mlxir.conversions.torch_to_aten import import_program
        from mlxir.conversions.torch_to_aten.archive import load_archive

        return import_program(load_archive(stream, self.get_input_name()))  # an ArchiveError is a ValueError

    # -- .mlxfb programs: binary in and out, weights in the IR --

    # -- where an error happened ---------------------------------------------------

    module: ModuleOp | None = None
    """The module of the chunk being processed."""
    line_offset: int = 0
    """The first line of that chunk in its file (`--split-input-file`)."""

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self.module, self.line_offset = None, start_offset
        self.module = super().parse_chunk(chunk, file_extension, start_offset)
        return self.module

    def parse_error(self, error: BaseException) -> ParseError | None:
        """A diagnostic raised while an op was parsed, as a parse error at that op."""
        span = getattr(error, PARSED_AT, None)
        if not isinstance(span, Span):
            return None
        message = (str(error).strip().splitlines() or [""])[0]
        if isinstance(error, AssertionError):
            message = f"cannot parse this op (xDSL's parser failed: {message or 'AssertionError'})"
        return ParseError(dataclasses.replace(cast(Span[str], span), line_offset=self.line_offset), message)

    def error_location(self, error: BaseException) -> str | None:
        """`file:line:col` of the op at fault: the first that fails to verify in the
        current module, else the op a rewrite pattern was rewriting when it raised."""
        if self.module is None:
            return None
        op = failing_op(self.module) or _rewritten_op(error)
        return None if op is None else location_of(op, self.line_offset)

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

            return cast(IO[Any], BinaryOutput(self.args.output_file))  # what xDSL writes to: write() and close()
        return super().prepare_output()

    def output_resulting_program(self, prog: ModuleOp) -> Any:
        if self._writes_mlxfb():
            return self._mlxfb().emit(prog)
        return super().output_resulting_program(prog)


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
        with gc_paused():  # parse, passes and print make IR objects by the hundred thousand
            main.run()
    except ParseError as error:
        print(str(error).rstrip(), file=sys.stderr)
        return 1
    except (DiagnosticException, PassFailedException) as error:
        parse_error = main.parse_error(error)
        if parse_error is not None:
            print(str(parse_error).rstrip(), file=sys.stderr)
            return 1
        where = None
        with contextlib.suppress(Exception):  # finding the op is best effort
            where = main.error_location(error)
        print(f"{where or main.get_input_name()}: error: {str(error).rstrip()}", file=sys.stderr)
        for note in getattr(error, "__notes__", ()):
            print(note, file=sys.stderr)
        return 1
    except FileNotFoundError as error:
        return _fail(f"cannot open '{error.filename}': {error.strerror}")
    except ValueError as error:
        parse_error = main.parse_error(error)
        if parse_error is not None:
            print(str(parse_error).rstrip(), file=sys.stderr)
            return 1
        return _fail(str(error))
    except Exception as error:  # a bug in mlxir, not in the input
        parse_error = main.parse_error(error)
        if parse_error is not None and not os.environ.get("MLXIR_TRACEBACK"):
            print(str(parse_error).rstrip(), file=sys.stderr)
            return 1
        if os.environ.get("MLXIR_TRACEBACK"):
            raise
        return _fail(
            f"internal error: {type(error).__name__}: {error} "
            "(set MLXIR_TRACEBACK=1 for the traceback and please report it)"
        )
    return 0


def main() -> None:
    sys.exit(run())


PassFactory = Callable[[], type[ModulePass]]
