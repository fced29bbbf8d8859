"""One program over several ranks, for `mlxir run` and `mlxir generate`: the flags, their
checks, and this same command started as N ranks (docs/distributed.md)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from mlxir.tools.cli.errors import CliError, UsageError


def add_rank_arguments(parser: argparse.ArgumentParser) -> None:
    ranks = parser.add_argument_group("one program over several ranks (docs/distributed.md)")
    ranks.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                       help="split the model over N ranks (shard-tensor-parallel) and start them here, on "
                       "127.0.0.1 (default 1: one process)")
    ranks.add_argument("--backend", choices=["ring", "mpi"], default="ring",
                       help="mx.distributed's backend for the ranks (default ring; mpi needs Open MPI's mpirun)")
    ranks.add_argument("--hostfile", metavar="FILE",
                       help="start the ranks on the hosts of this MLX hostfile with mlx.launch instead "
                       "(one rank per host; the program must be at the same path on each)")
    ranks.add_argument("--rank-timeout", type=float, default=3600.0, metavar="S",
                       help="end every rank after S seconds (default 3600)")


def start_ranks(args: argparse.Namespace, ranks: int) -> int:
    """Runs this same command as `ranks` ranks, rank 0 printing; returns the launch's
    status (non-zero, with the failing rank named, if any rank fails)."""
    from mlxir.tools.launch import hostfile_command, launch

    command = [sys.executable, "-c", "from mlxir.tools.cli import main; main()", *sys.argv[1:]]
    where = f"the hosts of {args.hostfile}" if args.hostfile else f"127.0.0.1 ({args.backend})"
    print(f"mlxir: running on {ranks} ranks, {where}", file=sys.stderr, flush=True)
    if args.hostfile:
        return subprocess.run(hostfile_command(args.hostfile, command, args.backend), stdin=subprocess.DEVNULL).returncode
    return launch(command, ranks, timeout=args.rank_timeout, backend=args.backend)


def check_rank_arguments(args: argparse.Namespace) -> None:
    if args.tensor_parallel < 1:
        raise UsageError(f"--tensor-parallel must be at least 1, not {args.tensor_parallel}")
    if args.rank_timeout <= 0:
        raise UsageError(f"--rank-timeout must be positive, not {args.rank_timeout}")
    if args.hostfile is not None and not Path(args.hostfile).is_file():
        raise CliError(f"'{args.hostfile}': no such hostfile")

