"""`mlx-opt`: mlxir's modular optimizer driver, an `xDSLOptMain` with our dialects,
passes and targets.

    mlx-opt model.mlir -p canonicalize,cse
    mlx-opt model.mlir --canonicalize -cse --quantize-weights='bits=8'
    mlx-opt tests/filecheck/x.mlir -split-input-file -verify-diagnostics

It takes mlir-opt's spellings as well as xDSL's: a long option with one dash, passes as
flags run in command-line order, MLIR's `--pass-pipeline`, `--mlir-print-ir-*`,
`--mlir-timing` and `--mlir-elide-elementsattrs-if-larger`.

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

import argparse
import contextlib
import dataclasses
import errno
import os
import sys
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from io import BytesIO, StringIO
from typing import IO, Any, NoReturn, cast

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
)
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind
from xdsl.xdsl_opt_main import xDSLOptMain

from mlxir.conversions.registry import PASSES, registered_passes
from mlxir.dialects.context import register_dialects
from mlxir.support import xdsl_fixes
from mlxir.support.gc_pause import gc_paused
from mlxir.support.locations import file_line_col, inline_location_aliases
from mlxir.support.remarks import Remark, collecting
from mlxir.tools.diagnostics import Diagnostic, check, expectations, readable
from mlxir.tools.pass_instrumentation import ElidingPrinter, IRPrinting, PassTiming
from mlxir.tools.pass_pipeline import PipelinePass, build_pass_pipeline, parse_pass_pipeline

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

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        # Nothing but whitespace and comments is an empty module, as for mlir-opt
        # (xDSL: "Could not parse entire input!").
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])
        return super().parse_module(allow_implicit_module)

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
        text = inline_location_aliases(input.read().decode())
        return LocatedParser(ctx, text, input_name).parse_module(not self.no_implicit_module)


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


class MlirStyleArgumentParser(argparse.ArgumentParser):
    """xDSL's argument parser as mlir-opt users type: a long option with one dash
    (`-split-input-file`, `-pass-pipeline=...`), passes as flags in command-line order
    (`--cse -canonicalize --quantize-weights='bits=8 group-size=32'`, collected in
    `pass_flags`), and usage mistakes on one line."""

    pass_names: frozenset[str] = frozenset()

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options)\n")

    def set_help(self, option: str, text: str) -> None:
        self._option_string_actions[option].help = text

    def parse_known_args(  # pyright: ignore[reportIncompatibleMethodOverride] (argparse's three overloads as the one call parse_args makes)
        self, args: Iterable[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        arguments, pass_flags = self.mlir_style(list(sys.argv[1:] if args is None else args))
        parsed, extras = super().parse_known_args(arguments, argparse.Namespace() if namespace is None else namespace)
        parsed.pass_flags = pass_flags
        return parsed, extras

    def mlir_style(self, arguments: list[str]) -> tuple[list[str], list[str]]:
        """`arguments` with each one-dash long option given its second dash, and the
        passes given as flags (as `-p` specs), apart. A one-dash word is a long option
        or a pass only when it names one exactly: `-p`, `-o`, `-pcse` stay short
        options; the value of an option is never read as a flag."""
        rewritten: list[str] = []
        pass_flags: list[str] = []
        value_follows = False
        for index, argument in enumerate(arguments):
            if argument == "--":
                rewritten += arguments[index:]
                break
            if value_follows or not argument.startswith("-") or argument == "-":
                rewritten.append(argument)
                value_follows = False
                continue
            word = argument[2:] if argument.startswith("--") else argument[1:]
            name, equals, value = word.partition("=")
            long_option = self._option_string_actions.get(f"--{name}")
            if long_option is not None:
                rewritten.append(f"--{word}")
                value_follows = not equals and long_option.nargs != 0
            elif name in self.pass_names:
                pass_flags.append(f"{name}{{{value}}}" if value else name)
            else:
                rewritten.append(argument)
                short_option = self._option_string_actions.get(argument)
                value_follows = short_option is not None and short_option.nargs != 0
        return rewritten, pass_flags


class InternalError(Exception):
    """A failure that is mlxir's bug, not the input's: reported as such."""


class MlxOptMain(xDSLOptMain):
    version_format = "mlx-opt (mlxir), built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        # Before the parser is built: it learns the pass names (`--my-pass` flags) then.
        from mlxir.conversions.plugins import load_dialect_plugin, load_pass_plugin

        arguments = list(sys.argv[1:] if args is None else args)
        for path in _plugin_paths(arguments, DIALECT_PLUGIN_OPTION):
            load_dialect_plugin(path)
        for path in _plugin_paths(arguments):
            load_pass_plugin(path)
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

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The input and its format: `-f`'s whatever the file's extension, else the
        extension's."""
        if self.args.frontend:
            stream, _ = super().get_input_stream()
            return stream, parse_spec(self.args.frontend).name
        extension = os.path.splitext(self.args.input_file or "")[1].removeprefix(".")
        if self.args.input_file is not None and extension not in self.available_frontends:
            raise ValueError(
                f"cannot tell the format of '{self.args.input_file}' from its extension: "
                f"give -f with one of {', '.join(self.available_frontends)}"
            )
        return super().get_input_stream()

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

    # -- MLIR's options ------------------------------------------------------------

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        # xDSL builds the parser: it becomes mlir-opt's, under this tool's name.
        arg_parser.__class__ = MlirStyleArgumentParser
        parser = cast(MlirStyleArgumentParser, arg_parser)
        parser.prog = TOOL_NAME
        parser.pass_names = frozenset(self.available_passes)
        parser.epilog = pass_help()
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        super().register_all_arguments(parser)
        parser.set_help(
            "--verify-diagnostics",
            "check the diagnostics against the input's `// expected-error {{text}}` comments "
            "(also expected-warning, -remark, -note; @+N, @-N, @above, @below name another line): "
            "exit 1 naming each diagnostic not expected and each expectation not met",
        )
        parser.add_argument(
            "--load-pass-plugin",
            action="append",
            default=[],
            metavar="FILE.py",
            help="register the passes (ModulePass subclasses with a name) this Python file defines; repeatable",
        )
        parser.add_argument(
            "--load-dialect-plugin",
            action="append",
            default=[],
            metavar="FILE.py",
            help="register the xDSL dialects (and passes) this Python file defines, so its ops parse; repeatable",
        )
        parser.add_argument(
            "--list-passes",
            action=_ListPasses,
            nargs=0,
            help="print every pass -p takes, with its summary and each option's type and default, and exit",
        )
        mlir = arg_parser.add_argument_group("mlir-opt's options")
        mlir.add_argument(
            "--pass-pipeline",
            metavar="PIPELINE",
            help="MLIR's textual pipeline, e.g. 'builtin.module(canonicalize,func.func(cse))' "
            "(instead of -p; nested pipelines run on the whole module)",
        )
        mlir.add_argument("--mlir-print-ir-before-all", action="store_true", help="print the IR before every pass (to stderr)")
        mlir.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass (to stderr)")
        mlir.add_argument(
            "--mlir-print-ir-before", metavar="PASSES", default="", help="print the IR before these passes (comma-separated)"
        )
        mlir.add_argument(
            "--mlir-print-ir-after", metavar="PASSES", default="", help="print the IR after these passes (comma-separated)"
        )
        mlir.add_argument(
            "--mlir-print-ir-after-change", action="store_true", help="print the IR after every pass that changed it"
        )
        mlir.add_argument(
            "--mlir-print-ir-after-failure", action="store_true", help="print the IR as a failing pass left it"
        )
        mlir.add_argument(
            "--mlir-timing",
            action="store_true",
            help="report the time of parsing, of each pass (nested as the pipeline is) and of printing",
        )
        mlir.add_argument(
            "--mlir-elide-elementsattrs-if-larger",
            metavar="N",
            type=_element_count,
            help="print each dense value of more than N elements as dense_resource<__elided__> "
            "(the output and the IR dumps; a splat stays)",
        )
        mlir.add_argument(
            "--mlir-print-debuginfo", dest="print_debuginfo", action="store_true", help="= --print-debuginfo"
        )
        mlir.add_argument(
            "--mlir-print-op-generic", dest="print_op_generic", action="store_true", help="= --print-op-generic"
        )

    def setup_pipeline(self) -> None:
        args = self.args
        if args.input_file == "-":
            args.input_file = None
        if args.output_file == "-":
            args.output_file = None
        self.pipeline_passes: list[PipelinePass] = []
        pass_flags: list[str] = args.pass_flags
        if sum(map(bool, (args.passes, args.pass_pipeline is not None, pass_flags))) > 1:
            raise ValueError("give the passes with -p, with --pass-pipeline or as flags (--cse), not together")
        if args.pass_pipeline is not None:
            self.pipeline_passes = parse_pass_pipeline(args.pass_pipeline)
            args.passes = ",".join(p.spec() for p in self.pipeline_passes)
        elif pass_flags:
            args.passes = ",".join(pass_flags)
        self.printing = IRPrinting.from_args(args, list(self.available_passes))
        self.pipeline = build_pass_pipeline(self.available_passes, args.passes, self._between_passes)
        if not self.pipeline_passes:
            self.pipeline_passes = [PipelinePass(p.name, "", ()) for p in self.pipeline.passes]
        self.timing = PassTiming() if args.mlir_timing or args.time_passes else None
        if self.timing is not None:
            self.timing.set_passes(self.pipeline_passes)

    def _between_passes(self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        if previous is not None:
            if self.timing is not None:
                self.timing.stop(self._pass_index)
            self._pass_index += 1
            self.printing.after(previous, module)
        else:
            self._pass_index = 0
        if not self.args.disable_verify:
            if self.timing is not None:
                with self.timing.measure(("Verifier",)):
                    module.verify()
            else:
                module.verify()
        if following is not None:
            self.printing.before(following, module)
            if self.timing is not None:
                self.timing.start()

    def apply_passes(self, prog: ModuleOp) -> None:
        self._pass_index = 0
        try:
            super().apply_passes(prog)
        except Exception:
            if self.args.mlir_print_ir_after_failure and self._pass_index < len(self.pipeline.passes):
                self.printing.failed(self.pipeline.passes[self._pass_index], prog)
            raise

    # -- the chunks of the input -------------------------------------------------------

    def run_all(self) -> int:
        """Processes every chunk of the input (one without `--split-input-file`), each
        to its end whatever the others did, and returns the exit status: 1 if any chunk
        failed or, with `--verify-diagnostics`, if any diagnostic was not expected or
        any expectation not met."""
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        failed = False
        try:
            for index, (chunk, offset) in enumerate(chunks):
                if index > 0:
                    output.write("// -----\n")
                text = ""
                if self.args.verify_diagnostics:
                    data = chunk.read()
                    chunk.close()
                    chunk = BytesIO(data)
                    text = data.decode("utf-8", errors="replace")
                emitted: list[Diagnostic] = []
                try:
                    with self._timed(("Parser",)):
                        module = self.parse_chunk(chunk, file_extension, offset)
                    if module is not None:
                        with collecting() as remarks:
                            try:
                                self.apply_passes(module)
                            finally:
                                emitted += self._remarks(remarks)
                        with self._timed(("Output",)):
                            output.write(self.output_resulting_program(module))
                    output.flush()
                except (Exception, ArgSpecParseError) as error:
                    if isinstance(error, OSError):  # the output's (a closed pipe, a full disk), not the chunk's
                        raise
                    if isinstance(error, ParseError) and not getattr(error, PARSED_AT, None):
                        error.span = dataclasses.replace(error.span, line_offset=offset)
                    diagnostic, printed = self.describe(error)
                    if self.args.verify_diagnostics and diagnostic is not None:
                        emitted.append(diagnostic)
                    elif self.args.parsing_diagnostics and isinstance(error, ParseError):
                        print(printed)
                    else:
                        print(printed, file=sys.stderr)
                        failed = True
                finally:
                    chunk.close()
                if self.args.verify_diagnostics:
                    problems = check(expectations(text, self.get_input_name(), offset + 1), emitted)
                    for problem in problems:
                        print(problem, file=sys.stderr)
                    failed = failed or bool(problems)
        finally:
            if output is not sys.stdout:
                output.close()
        if self.timing is not None:
            self.timing.report(sys.stderr)
        return 1 if failed else 0

    def _remarks(self, remarks: list[Remark]) -> list[Diagnostic]:
        """The passes' remarks as diagnostics to expect, or else printed to stderr."""
        diagnostics = [
            Diagnostic("remark", location_of(r.op, self.line_offset) or self.get_input_name(), r.message)
            for r in remarks
        ]
        if self.args.verify_diagnostics:
            return diagnostics
        for diagnostic in diagnostics:
            print(diagnostic, file=sys.stderr)
        return []

    def _timed(self, path: tuple[str, ...]) -> contextlib.AbstractContextManager[None]:
        return self.timing.measure(path) if self.timing is not None else contextlib.nullcontext()

    def describe(self, error: BaseException) -> tuple[Diagnostic | None, str]:
        """A chunk's failure as the diagnostic it is (None: not the input's fault) and
        the text that reports it. A bug of mlxir raises `InternalError`."""
        if isinstance(error, ParseError):
            return self._parse_diagnostic(readable(error))
        parse_error = self.parse_error(error)
        if parse_error is not None:
            return self._parse_diagnostic(parse_error)
        if isinstance(error, DiagnosticException | PassFailedException):
            where = None
            with contextlib.suppress(Exception):  # finding the op is best effort
                where = self.error_location(error)
            message = str(error).rstrip()
            notes = "".join(f"\n{note}" for note in getattr(error, "__notes__", ()))
            diagnostic = Diagnostic("error", where or self.get_input_name(), _verifier_message(error))
            return diagnostic, f"{diagnostic.location}: error: {message}{notes}"
        importer = sys.modules.get("mlxir.conversions.torch_to_aten")
        if importer is not None and isinstance(error, importer.ImportError_):
            # A .pt2 with ops mlxir does not support: each named with its source line.
            diagnostic = Diagnostic("error", self.get_input_name(), _first_line(error))
            return diagnostic, f"{TOOL_NAME}: error: {str(error).rstrip()}"
        if isinstance(error, ArgSpecParseError | ValueError):
            diagnostic = Diagnostic("error", self.get_input_name(), _first_line(error))
            return diagnostic, f"{TOOL_NAME}: error: {diagnostic.message}"
        raise InternalError(
            f"internal error: {type(error).__name__}: {error} "
            "(set MLXIR_TRACEBACK=1 for the traceback and please report it)"
        ) from error

    def _parse_diagnostic(self, error: ParseError) -> tuple[Diagnostic, str]:
        location = str(error.span.get_location())
        return Diagnostic("error", location, error.msg), str(error).rstrip()

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

            if self.args.output_file is not None:
                # The file is created at the first write, after the passes: fail before them.
                _check_writable(self.args.output_file)
            return cast(IO[Any], BinaryOutput(self.args.output_file))  # what xDSL writes to: write() and close()
        return super().prepare_output()

    def output_resulting_program(self, prog: ModuleOp) -> Any:
        if self._writes_mlxfb():
            return self._mlxfb().emit(prog)
        elide_larger_than = self.args.mlir_elide_elementsattrs_if_larger
        if elide_larger_than is None or parse_spec(self.args.target).name != "mlir":
            return super().output_resulting_program(prog)
        output = StringIO()
        printer = ElidingPrinter(
            output,
            elide_larger_than=elide_larger_than,
            print_generic_format=self.args.print_op_generic,
            print_properties_as_attributes=self.args.print_no_properties,
            print_debuginfo=self.args.print_debuginfo,
        )
        printer.print_op(prog)
        printer.print_metadata(self.ctx.loaded_dialects)
        output.write("\n\n")  # as xDSL's mlir target ends
        return output.getvalue()


def pass_help() -> str:
    lines = [
        "passes (use with -p 'a,b{option=value}', MLIR's --pass-pipeline='builtin.module(a,b{option=value})' "
        "or as flags: --a --b='option=value'):"
    ]
    for name, entry in PASSES.items():
        lines.append(f"  {name:<28} {entry.summary}")
    return "\n".join(lines)


PLUGIN_OPTION = "--load-pass-plugin"
DIALECT_PLUGIN_OPTION = "--load-dialect-plugin"


def _plugin_paths(arguments: list[str], option: str = PLUGIN_OPTION) -> list[str]:
    """The files of every `OPTION=FILE` or `OPTION FILE` (`--load-pass-plugin`)."""
    paths: list[str] = []
    for index, argument in enumerate(arguments):
        if argument.startswith(option + "="):
            paths.append(argument.split("=", 1)[1])
        elif argument == option and index + 1 < len(arguments):
            paths.append(arguments[index + 1])
    return paths


def list_passes() -> str:
    """Every pass `-p` takes, its one-line summary, then each option as the pipeline
    spells it (`group-size`), what it takes and its default: `mlx-opt --list-passes`."""
    from mlxir.tools.pass_pipeline import describe_option, pass_options

    lines: list[str] = []
    for name, entry in PASSES.items():
        lines.append(f"{name:<28} {entry.summary.split(' (options: ')[0]}")
        pass_class = entry.factory()
        defaults = {
            field.name.replace("_", "-"): field.default
            for field in dataclasses.fields(pass_class)
            if field.init and field.default is not dataclasses.MISSING
        }
        for option, expected in pass_options(pass_class).items():
            default = defaults.get(option, dataclasses.MISSING)
            shown = "" if default is dataclasses.MISSING or default is None else f" (default {_spelled(default)})"
            lines.append(f"    {option}: {describe_option(expected)}{shown}")
    return "\n".join(lines)


def _spelled(value: object) -> str:
    """A default as the pipeline would spell it (`true`, `0`, `affine`)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(_spelled(v) for v in cast(tuple[object, ...], value))
    return str(value)


class _ListPasses(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object, option_string: str | None = None) -> None:
        print(list_passes())
        parser.exit(0)


def _element_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"expected a number of elements (0 or more), not '{text}'")
    return count


def _check_writable(path: str) -> None:
    """Raises the OSError that writing `path` would."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)


def _fail(message: str) -> int:
    print(f"{TOOL_NAME}: error: {message}", file=sys.stderr)
    return 1


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else repr(error)


def _verifier_message(error: BaseException) -> str:
    """A verifier error's message without the module xDSL prints after it, on one
    line."""
    lines: list[str] = []
    for line in str(error).strip().splitlines():
        if line.lstrip('"').startswith("builtin.module"):
            break
        lines.append(line.strip())
    return " ".join(line for line in lines if line) or repr(error)


def _pipeline_error(error: ArgSpecParseError) -> str:
    """xDSL's multi-line report (`pass-pipeline:1:14`, the text, a caret, the
    message) as one line."""
    lines = [line for line in str(error).splitlines()[1:] if line.strip()]
    if len(lines) < 4:
        return "malformed pass pipeline: " + " ".join(" ".join(lines).split())
    column = lines[0].rsplit(":", 1)[-1]
    return f"malformed pass pipeline '{lines[1].strip()}' at column {column}: {' '.join(lines[3:]).strip()}"


def run(args: Sequence[str] | None = None) -> int:
    """mlx-opt on `args` (the command line's without): its exit status. Only a closed
    standard output (`| head`) raises: `BrokenPipeError`, for `main`."""
    argv = list(sys.argv[1:] if args is None else args)
    try:
        main = MlxOptMain(argv)
    except SystemExit as exit_:  # --help, --version, a usage error
        return exit_.code if isinstance(exit_.code, int) else 1
    except ArgSpecParseError as error:  # xDSL's pipeline grammar: a BaseException
        return _fail(_pipeline_error(error))
    except BrokenPipeError:
        raise
    except Exception as error:  # a bad pass spec or option: one line, no traceback
        return _fail(_first_line(error))
    try:
        with gc_paused():  # parse, passes and print make IR objects by the hundred thousand
            return main.run_all()
    except BrokenPipeError:
        raise
    except OSError as error:
        return _fail(_os_error(error, main.args.output_file))
    except InternalError as error:
        if os.environ.get("MLXIR_TRACEBACK") and error.__cause__ is not None:
            raise error.__cause__ from None
        return _fail(str(error))
    except ValueError as error:  # the input as a whole (its extension, a binary program)
        return _fail(str(error))


def _os_error(error: OSError, output_file: str | None) -> str:
    """An input or output file that cannot be read or written, as one line."""
    reason = "it is a directory" if isinstance(error, IsADirectoryError) else error.strerror or str(error)
    if error.filename is None:
        return f"cannot write the output: {reason}"
    verb = "write" if output_file is not None and error.filename == output_file else "open"
    return f"cannot {verb} '{error.filename}': {reason}"


def main() -> None:
    try:
        status = run()
        sys.stdout.flush()  # here, not at exit, where a closed pipe would print a traceback
    except BrokenPipeError:
        # The reader stopped reading (`mlx-opt --help | head`): stop too, quietly, with
        # nothing left for the interpreter to flush into the closed pipe at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        status = 1
    sys.exit(status)


PassFactory = Callable[[], type[ModulePass]]
