"""mlxir's own launcher: N local ranks of one command over `mx.distributed`.

    from mlxir.tools.launch import launch
    status = launch(["python", "script.py"], ranks=2, timeout=120)

Why not `mlx.launch`: it exits 0 when a rank fails and crashes when stdin is closed,
and a rank left alone waits forever for its peer (docs/distributed.md). This one:

- **ring** (the default): picks free ports on 127.0.0.1, writes the hostfile MLX's
  ring backend reads (`MLX_HOSTFILE`, `MLX_RANK`), starts each rank in its own
  process group;
- **mpi**: `mpirun` with the flags that work on a single Linux host (`--mca btl
  self,vader`, loopback only), where Open MPI is installed;
- rank 0's output is the command's; the other ranks' stdout is dropped and their
  stderr kept to name why one failed;
- the first rank to fail ends the others (SIGTERM, then SIGKILL to its process
  group), and `launch` returns its status with a one-line message naming it;
- past `timeout` seconds every rank is ended and `launch` returns `TIMED_OUT`.

Across machines, `mlx.launch --hostfile` starts the ranks instead
(`hostfile_command`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

Backend = Literal["ring", "mpi"]

TIMED_OUT = 124
"""`launch`'s status when the ranks ran past the timeout (as `timeout(1)` returns)."""

RANK_ENV = "MLX_RANK"
"""Set in every rank by the ring launcher (and by `mlx.launch`)."""

_POLL_S = 0.05
_GRACE_S = 3.0


@dataclass
class _Rank:
    rank: int
    process: subprocess.Popen[bytes]
    stderr: IO[bytes] | None


def free_ports(count: int) -> list[int]:
    """Ports on 127.0.0.1 free now (bound together, so they differ, then released)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def mpi_available() -> bool:
    return shutil.which("mpirun") is not None


def in_a_rank() -> bool:
    """Whether this process is one rank of a launch (ring or MPI)."""
    return any(name in os.environ for name in (RANK_ENV, "OMPI_COMM_WORLD_RANK", "PMI_RANK"))


def launch(
    command: Sequence[str],
    ranks: int,
    *,
    timeout: float,
    backend: Backend = "ring",
    env: dict[str, str] | None = None,
    quiet: bool = False,
) -> int:
    """Runs `command` as `ranks` ranks and returns 0 when every rank exits 0, else the
    first failing rank's status (`TIMED_OUT` past `timeout`). `quiet`: no message."""
    if ranks < 1:
        raise ValueError(f"ranks must be at least 1, got {ranks}")
    base = dict(os.environ if env is None else env)
    if backend == "mpi":
        return _launch_mpi(command, ranks, timeout, base, quiet)
    with tempfile.TemporaryDirectory(prefix="mlxir-ranks-") as folder:
        hostfile = Path(folder) / "hosts.json"
        hostfile.write_text(json.dumps([[f"127.0.0.1:{port}"] for port in free_ports(ranks)]))
        started: list[_Rank] = []
        try:
            for rank in range(ranks):
                rank_env = base | {"MLX_HOSTFILE": str(hostfile), RANK_ENV: str(rank)}
                stderr = None if rank == 0 else open(Path(folder) / f"rank{rank}.err", "w+b")  # noqa: SIM115 (kept open while the rank runs)
                process = subprocess.Popen(
                    list(command),
                    env=rank_env,
                    stdin=subprocess.DEVNULL,
                    stdout=None if rank == 0 else subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,
                )
                started.append(_Rank(rank, process, stderr))
            return _wait(started, timeout, quiet)
        finally:
            _end(started)
            for r in started:
                if r.stderr is not None:
                    r.stderr.close()


def _launch_mpi(command: Sequence[str], ranks: int, timeout: float, env: dict[str, str], quiet: bool) -> int:
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise FileNotFoundError("the MPI backend needs mpirun (apt-get install openmpi-bin libopenmpi-dev)")
    argv = [mpirun, "-np", str(ranks), "--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", "lo"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    env = env | {"MLX_DISTRIBUTED_BACKEND": "mpi"}
    process = subprocess.Popen(
        [*argv, "--", *command], env=env, stdin=subprocess.DEVNULL, start_new_session=True
    )
    rank = _Rank(0, process, None)
    try:
        status = _wait([rank], timeout, quiet=True)
    finally:
        _end([rank])
    if status != 0 and not quiet:
        what = f"did not finish within {timeout:g} s" if status == TIMED_OUT else f"exited with status {status}"
        print(f"mlxir launch: mpirun ({ranks} ranks) {what}", file=sys.stderr)
    return status


def _wait(started: list[_Rank], timeout: float, quiet: bool) -> int:
    deadline = time.monotonic() + timeout
    while True:
        running = False
        for r in started:
            status = r.process.poll()
            if status is None:
                running = True
            elif status != 0:
                if not quiet:
                    print(f"mlxir launch: rank {r.rank} {_describe(status)}{_last_line(r)}", file=sys.stderr)
                return status if status > 0 else 128 - status
        if not running:
            return 0
        if time.monotonic() > deadline:
            if not quiet:
                waiting = ", ".join(str(r.rank) for r in started if r.process.poll() is None)
                print(
                    f"mlxir launch: rank {waiting} still running after {timeout:g} s: ended",
                    file=sys.stderr,
                )
            return TIMED_OUT
        time.sleep(_POLL_S)


def _describe(status: int) -> str:
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def _last_line(rank: _Rank) -> str:
    if rank.stderr is None:
        return ""
    rank.stderr.flush()
    rank.stderr.seek(0)
    lines = [line.strip() for line in rank.stderr.read().decode(errors="replace").splitlines() if line.strip()]
    return f": {lines[-1]}" if lines else ""


def _end(started: list[_Rank]) -> None:
    """Ends every rank still running: SIGTERM to its process group, SIGKILL after a
    grace period (a rank blocked in a collective ignores nothing, but a rank that
    handles SIGTERM gets to flush)."""
    alive = [r for r in started if r.process.poll() is None]
    for r in alive:
        _signal_group(r.process, signal.SIGTERM)
    deadline = time.monotonic() + _GRACE_S
    for r in alive:
        try:
            r.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(r.process, signal.SIGKILL)
            r.process.wait()


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def hostfile_command(hostfile: str, command: Sequence[str], backend: Backend = "ring") -> list[str]:
    """The `mlx.launch` command that runs `command` on the hosts of an MLX hostfile
    (one rank per host, over ssh)."""
    main = "import sys; from mlx._distributed_utils.launch import main; sys.exit(main())"
    return [sys.executable, "-c", main, "--hostfile", hostfile, "--backend", backend, "--", *command]
