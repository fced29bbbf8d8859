"""The device seam: what a device may choose about running a program, apart from what
the program means.

A program's meaning is the generic kernels (`evaluator/`), which run on any MLX
device. A `Backend` holds one device's choices: kernels it computes another way (the
same values), products by a loaded weight it cuts differently, extra streams, and how
to keep an export independent of this machine. `backend_for` picks the backend once,
when a program loads, from MLX's default device then: the CPU gets `runtime/cpu/`,
every other device (MLX's GPU backends, Metal and CUDA) the generic kernels alone, and
imports no CPU code. A program runs correctly on either, whatever it was compiled for.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from typing import TYPE_CHECKING, cast

import mlx.core as mx

from mlxir.codegen.errors import BackendError
from mlxir.evaluator import KERNELS, KernelFactory
from mlxir.evaluator.registry import Kernel

if TYPE_CHECKING:
    from mlxir.codegen.reader import ProgramInfo

WEIGHT_PRODUCT_OPERAND = {"mlx.matmul": 1, "mlx.addmm": 2}
"""Product ops, and the operand that is `w.T` when a `linear` layer made them: the
loader offers such steps to the backend (`Backend.product_by_weight`)."""


class Backend:
    """The generic backend: every op as `evaluator/` computes it, on a device other than
    the CPU (MLX's GPU backends)."""

    name = "generic"

    def loading(self) -> None:
        """Called as each program loads on this device, before it runs: the place to
        say once what this device's backend runs with."""

    def what_it_lacks(self, info: ProgramInfo) -> BackendError | None:
        """Why this device cannot run the program, found at load rather than in the
        middle of a call (None: it can)."""
        if any(slot.dtype == "float64" for slot in info.slots):
            return BackendError(
                "the program computes in float64, which MLX runs on its CPU backend only: "
                "call mx.set_default_device(mx.cpu) before loading it"
            )
        return None

    def kernel_factory(self, op: str) -> KernelFactory | None:
        """The factory of `op`'s kernel on this device (None: no such kernel)."""
        return KERNELS.get(op)

    def product_by_weight(self, op: str, run: Kernel, weight_t: mx.array) -> Kernel:
        """The kernel of a product `op` (`mlx.matmul`, `mlx.addmm`) whose weight operand
        is `weight_t`, the transpose of a matrix the program loaded, given its generic
        kernel `run`."""
        return run

    def spreads(self, op: str) -> bool:
        """Whether `op`'s kernel may run on streams of the calling thread's own: then a
        compiled trace of the program belongs to that thread."""
        return False

    def thread_token(self) -> int:
        """A number naming the calling thread's streams, for a program whose kernels
        spread (0: nothing is spread, any thread may run a trace)."""
        return 0

    @contextlib.contextmanager
    def exporting(self) -> Generator[None, None, None]:
        """A block whose traces are written to a file (`runtime/mlxfn.py`): nothing in
        them may depend on this machine's cores."""
        yield


GENERIC = Backend()


def host_target() -> str:
    """The compiler target that suits the device this process computes on: MLX's CPU
    gets the CPU's passes (`"cpu"`), a GPU (Metal, CUDA) the generic pipeline
    (`"generic"`). The compiler itself never asks MLX which device it runs on: whoever
    calls it with a program to run here (the top-level API, the CLI, the LLM cache)
    passes this. A program compiled for one target still runs on the other, with the
    same meaning."""
    return "cpu" if mx.default_device() == mx.cpu else "generic"


def backend_for(device: mx.Device) -> Backend:
    """The backend of programs loaded while `device` is MLX's default device."""
    if device == mx.cpu:
        from mlxir.runtime.cpu.backend import CPU

        # A Backend: pyright, reaching this module both as a file and as
        # `mlxir.runtime.backend` (the .typecheck symlink), sees two classes.
        return cast(Backend, CPU)
    return GENERIC
