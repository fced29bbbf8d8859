"""`mlxir compile`: a saved ExportedProgram (.pt2) to a program (.mlxfb), or its IR at
the aten or mlx level (`--emit`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from mlxir.tools.cli.common import (
    add_plugin_argument,
    add_quantize_arguments,
    check_pipeline,
    check_readable_file,
    check_writable_file,
    load_exported,
    quantize_option,
)
from mlxir.tools.cli.errors import CliError, UsageError


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("compile", help="compile a saved ExportedProgram (.pt2)")
    parser.add_argument("input", help="a saved ExportedProgram (torch.export.save), .pt2")
    parser.add_argument("-o", "--output", help="the file to write (the program, or IR with --emit; default: stdout for IR)")
    parser.add_argument("--emit", choices=["aten", "mlx", "program"], default="program",
                        help="aten|mlx: print the IR at that level, each op with its loc(\"node\"(file:line))")
    parser.add_argument("--elide-weights", action="store_true",
                        help="with --emit: print each mlx.global without its value "
                        "(mlxir debug --module binds it from the .pt2)")
    parser.add_argument("-p", "--pipeline", help="mlx-opt pass pipeline (default lower-to-mlx)")
    add_plugin_argument(parser)
    add_quantize_arguments(parser)
    parser.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                        help="split the program over N ranks, after lowering and quantizing "
                        "(shard-tensor-parallel; run it with `mlxir run` or mlx.launch)")
    parser.add_argument("--time", action="store_true", help="print the seconds each stage took")
    parser.add_argument(
        "--decompose", choices=["nodes", "program"], default="nodes",
        help="what mlxir has no importer for: decompose those nodes alone (default), or have "
        "torch re-trace and decompose the whole program (seconds; docs/compile-time.md)",
    )
    parser.set_defaults(run=run)


class StageTimer:
    """Wall seconds per compile stage, printed as a table by `--time` (as
    `mlx-opt --time-passes` prints them per pass)."""

    def __init__(self) -> None:
        self.stages: list[tuple[str, float]] = []
        self._last = time.perf_counter()

    def done(self, stage: str) -> None:
        now = time.perf_counter()
        self.stages.append((stage, now - self._last))
        self._last = now

    def report(self) -> str:
        total = sum(seconds for _, seconds in self.stages)
        width = max(len(name) for name, _ in [*self.stages, ("total", 0.0)])
        lines = [f"{name:<{width}}  {seconds:8.3f} s  {seconds / total if total else 0:6.1%}" for name, seconds in self.stages]
        return "\n".join(["compile stages:", *lines, f"{'total':<{width}}  {total:8.3f} s"])


def run(args: argparse.Namespace) -> int:
    from mlxir.support.progress import progress_shown

    _check_arguments(args)
    timer = StageTimer()
    try:
        with progress_shown():
            return _compile_stages(args, timer)
    finally:
        if args.time and timer.stages:
            print(timer.report(), file=sys.stderr)


def _check_arguments(args: argparse.Namespace) -> None:
    """Every path and value `compile` is given, checked before the `.pt2` is read."""
    check_readable_file(args.input, "a saved ExportedProgram (.pt2)")
    check_writable_file(args.output, "-o")
    if args.emit == "program" and not args.output:
        raise UsageError("compile needs -o FILE.mlxfb (or --emit aten|mlx to print IR)")
    if args.tensor_parallel < 1:
        raise UsageError(f"--tensor-parallel must be at least 1, not {args.tensor_parallel}")
    quantize_option(args)
    check_pipeline(args.pipeline, args.pass_plugins)


def _compile_stages(args: argparse.Namespace, timer: StageTimer) -> int:
    from xdsl.dialects.builtin import StringAttr

    import mlxir
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    ep = load_exported(Path(args.input))
    timer.done("read .pt2")
    module = mlxir.import_program(ep, decompose=args.decompose)
    because = module.attributes.get(DECOMPOSED_BY_TORCH_ATTR)
    if isinstance(because, StringAttr):  # seconds more than node by node: say why
        print(f"note: torch re-traced the whole program to decompose it: {because.data}", file=sys.stderr)
    timer.done("import (aten)" if because is None else "import (aten, torch's re-trace)")
    if args.emit == "aten":
        return _write_text(_ir_text(module, args.elide_weights), args.output)
    mlxir.lower(module, args.pipeline, verify=args.emit == "mlx")  # else serialize verifies
    timer.done(f"lower ({args.pipeline or 'lower-to-mlx'})")
    quantize = quantize_option(args)
    if quantize is not None:
        from mlxir.transforms.quantize import quantize_weights

        try:
            print(quantize_weights(module, quantize), file=sys.stderr)
        except ValueError as error:
            raise CliError(str(error)) from None
        timer.done("quantize")
    if args.tensor_parallel > 1:
        from mlxir.transforms.shard_tensor_parallel import shard_tensor_parallel

        pairs = shard_tensor_parallel(module, args.tensor_parallel)
        print(f"split {pairs} pairs over {args.tensor_parallel} ranks (shard-tensor-parallel)", file=sys.stderr)
        timer.done("shard-tensor-parallel")
    if args.emit == "mlx":
        return _write_text(_ir_text(module, args.elide_weights), args.output)
    parts = mlxir.serialize_parts(module)
    timer.done("serialize (verify)")
    with Path(args.output).open("wb") as file:
        parts.write(file)
    timer.done("write file")
    print(f"wrote {args.output} ({len(parts):,} bytes)")
    return 0


def _ir_text(module: Any, elide_weights: bool) -> str:
    """The module as text with each op's location, `loc("node"("file.py":line:col))`:
    the provenance `mlxir debug --module` maps an edited module back to nodes by.
    `elide_weights`: each mlx.global without its value (debug binds it from the .pt2)."""
    from io import StringIO

    from xdsl.printer import Printer

    from mlxir.dialects import mlx

    if elide_weights:
        for op in module.ops:
            if isinstance(op, mlx.GlobalOp):
                op.properties.pop("value", None)
    text = StringIO()
    Printer(stream=text, print_debuginfo=True).print_op(module)
    return text.getvalue()


def _write_text(text: str, output: str | None) -> int:
    if output:
        Path(output).write_text(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0

