"""`mlxir debug`: where a compiled program stops matching eager PyTorch, the first node
(or, with `--bisect`, the first pass)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mlxir.interop.model_explorer import METRICS as OVERLAY_METRICS
from mlxir.tools.cli.common import (
    add_plugin_argument,
    check_pipeline,
    check_readable_file,
    check_writable_file,
    check_writable_folder,
    load_exported,
    read_inputs,
)
from mlxir.tools.cli.errors import CliError, UsageError


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "debug", help="find where a compiled program stops matching PyTorch: the first node (--bisect: pass)"
    )
    parser.add_argument("input_program", metavar="model.pt2", help="a saved ExportedProgram to compare node by node")
    parser.add_argument("--input", action="append", default=[], help="a .npy file or an integer")
    parser.add_argument("--bisect", action="store_true",
                        help="run the pipeline pass by pass; name the first that changes the outputs")
    parser.add_argument("--all", action="store_true", help="print every compared node's errors")
    parser.add_argument("--repro", metavar="DIR",
                        help="write the diverging node alone as a program, its inputs and the expected value")
    parser.add_argument("-p", "--pipeline", help="mlx-opt pass pipeline (default lower-to-mlx)")
    add_plugin_argument(parser)
    parser.add_argument("--module", metavar="M.mlir",
                        help="compare this mlx-level module (as `compile --emit mlx` prints it, edited or "
                        "made by your passes) instead of compiling; globals without a value are bound "
                        "from the .pt2 compiled with --pipeline")
    parser.add_argument("--atol", type=float,
                        help="absolute tolerance for every float dtype (default: by dtype, docs in debug/divergence.py)")
    parser.add_argument("--rtol", type=float, help="relative tolerance for every float dtype")
    parser.add_argument("--overlay", metavar="FILE",
                        help="write each node's error as Model Explorer node data (JSON)")
    parser.add_argument("--overlay-metric", default="max_abs_error",
                        choices=OVERLAY_METRICS, help="the error the --overlay colours nodes by")
    parser.set_defaults(run=run)


def _check_arguments(args: argparse.Namespace) -> None:
    """Every path and flag `debug` is given, checked before the `.pt2` is read."""
    if args.bisect and args.overlay:
        raise UsageError("--overlay needs per-node errors, which --bisect does not compute")
    if args.bisect and args.module:
        raise UsageError("--bisect runs the pipeline's passes, so it takes no --module")
    for flag, tolerance in (("--atol", args.atol), ("--rtol", args.rtol)):
        if tolerance is not None and not tolerance >= 0:  # NaN too
            raise UsageError(f"{flag} must be 0 or positive, not {tolerance}")
    check_readable_file(args.input_program, "a saved ExportedProgram (.pt2)")
    if args.module is not None:
        check_readable_file(args.module, "an mlx-level module (.mlir, as `mlxir compile --emit mlx` prints it)")
    check_writable_file(args.overlay, "--overlay")
    check_writable_folder(args.repro, "--repro")
    check_pipeline(args.pipeline, args.pass_plugins)


def run(args: argparse.Namespace) -> int:
    """`mlxir debug`: the first graph node whose compiled value leaves eager PyTorch's
    while its inputs agree (`--all`: every node's errors); `--bisect`: the first pass
    of the pipeline that takes the outputs beyond tolerance, with the IR it changed.
    Exit status 1 when something diverges, 0 when nothing does."""
    import numpy as np
    import torch

    from mlxir.debug.divergence import (
        BisectReport,
        bisect_passes,
        compare,
        diff_excerpt,
        pipeline_passes,
        write_repro,
    )
    from mlxir.debug.inputs import check_input_kinds
    from mlxir.support.progress import progress_shown

    _check_arguments(args)
    inputs = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in read_inputs(args.input)]  # pyright: ignore[reportUnknownMemberType] (torch leaves from_numpy's parameter unannotated)
    with progress_shown():
        ep = load_exported(Path(args.input_program))
    try:
        check_input_kinds(ep, inputs)
    except ValueError as error:
        raise CliError(str(error)) from None
    try:
        if not args.bisect:
            with progress_shown():  # the import and the lowering show their progress
                report = compare(
                    ep, *inputs, module=args.module, pipeline=args.pipeline, atol=args.atol, rtol=args.rtol
                )
            print(report.table(every_node=args.all))
            if args.overlay:
                from mlxir.interop.model_explorer import write_overlay

                write_overlay(report, args.overlay, args.overlay_metric)
                print(
                    f"overlay: {args.overlay} (python -m mlxir.interop.model_explorer "
                    f"{args.input_program} --node-data {args.overlay})"
                )
            if report.first_divergence is None:
                return 0
            if args.repro:
                *files, command = write_repro(report, args.repro, args.pipeline)
                print(f"reproducer: {', '.join(files)}\nrun it: {command}")
            return 1
        # The table row by row, as each pass is measured (a pass can take seconds).
        width = BisectReport.width(pipeline_passes(args.pipeline))
        print(BisectReport.header(width), flush=True)
        bisected = bisect_passes(
            ep, *inputs, pipeline=args.pipeline, atol=args.atol, rtol=args.rtol,
            on_pass=lambda outcome: print(outcome.row(width), flush=True),
        )
    except ValueError as error:
        raise CliError(str(error)) from None
    print(bisected.summary())
    found = bisected.first_divergent
    if found is None:
        return 0
    print(f"\nthe IR {found.name} changed:\n{diff_excerpt(found.diff)}")
    return 1

