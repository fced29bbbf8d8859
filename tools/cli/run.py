"""`mlxir run`: a compiled program (.mlxfb or .pte) on .npy inputs (integers for
SymInts), over several ranks when it was split for them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, cast

from mlxir.tools.cli.common import (
    check_readable_file,
    check_writable_folder,
    load_program,
    make_folder,
    read_inputs,
)
from mlxir.tools.cli.errors import UsageError
from mlxir.tools.cli.ranks import add_rank_arguments, check_rank_arguments, start_ranks


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("run", help="run a program on .npy inputs (ints for SymInts)")
    parser.add_argument("program", help="a compiled program (.mlxfb or .pte)")
    parser.add_argument("--input", action="append", default=[], help="a .npy file or an integer")
    parser.add_argument("--output-dir", help="write output_<i>.npy files here")
    add_rank_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from mlxir.runtime.program import Program
    from mlxir.tools.launch import in_a_rank

    check_rank_arguments(args)
    check_readable_file(args.program, "a compiled program (.mlxfb or .pte)")
    check_writable_folder(args.output_dir, "--output-dir")
    folder = make_folder(args.output_dir) if args.output_dir else None  # before the run: a mistake costs none
    ranks = _program_ranks(args.program)
    if args.tensor_parallel not in (1, ranks):
        raise UsageError(f"'{args.program}' is split over {ranks} ranks: --tensor-parallel {args.tensor_parallel} does not match")
    if ranks > 1 and not in_a_rank():
        return start_ranks(args, ranks)
    inputs = read_inputs(args.input)
    program = load_program(args.program)
    if isinstance(program, Program):
        outputs = program.call_flat(*inputs)
        names = program.output_names
    else:  # an ExecuTorch method: flat already
        outputs = program(*inputs)
        outputs = cast(tuple[Any, ...], outputs) if isinstance(outputs, tuple) else (outputs,)
        names = [f"output {i}" for i in range(len(outputs))]
    if ranks > 1:
        from mlxir.evaluator.distributed import world_group

        if world_group().rank() != 0:
            return 0  # every rank computed the outputs; rank 0 reports them
    for i, (name, value) in enumerate(zip(names, outputs)):
        array = np.asarray(value)
        if folder is not None:
            path = folder / f"output_{i}.npy"
            np.save(path, array)
            print(f"{name}: {array.dtype}{list(array.shape)} -> {path}")
        else:
            print(f"{name}: {array.dtype}{list(array.shape)}")
            print(np.array2string(array, threshold=64, precision=5))
    return 0


def _program_ranks(path: str) -> int:
    """How many ranks an `.mlxfb` is split over (1 for anything else: `_load_program`
    reports what is wrong with it)."""
    from mlxir.codegen.errors import ProgramError
    from mlxir.codegen.reader import read_program
    from mlxir.runtime.loading import is_pte

    try:
        data = Path(path).read_bytes()
        return 1 if is_pte(data) else read_program(data).ranks
    except (OSError, ProgramError):
        return 1

