"""The CPU backend: MLX's CPU device, with this machine's BLAS and cores.

Its run-time choices compute what the generic kernels mean (the same values):
- `runtime/cpu/fast.py`: attention composed in fewer graph nodes;
- `runtime/cpu/polynomial.py`: `exp`, `sigmoid` and `erf` of many values as one fused
  polynomial loop (MLX's CPU kernels for them are slow), within 2 ulp;
- `runtime/cpu/products.py`: quantized products dequantized or spread over the CPU
  streams, float products by a `linear` weight cut into blocks OpenBLAS computes
  without packing (both chosen per call, by the rows of `x`);
- `runtime/cpu/streams.py`: the extra CPU streams those spread over;
- `runtime/cpu/blas.py`: which BLAS MLX's CPU matmuls call (chosen at import).
The CPU's program rewrites (rope as rotated pairs, half-precision attention in
float32) are compile-time passes of its target, `transforms/cpu/`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, cast

import mlx.core as mx

from mlxir.codegen.errors import BackendError
from mlxir.evaluator import KernelFactory
from mlxir.evaluator.registry import Kernel
from mlxir.runtime.backend import WEIGHT_PRODUCT_OPERAND, Backend
from mlxir.runtime.cpu import (
    convolution,
    fast,
    native,
    normalization,
    polynomial,
    products,
    streams,
)

if TYPE_CHECKING:
    from mlxir.codegen.reader import ProgramInfo


class CpuBackend(Backend):
    name = "cpu"

    def __init__(self) -> None:
        self._kernels: dict[str, KernelFactory] = {
            **fast.KERNELS, **polynomial.KERNELS, **products.KERNELS,
            **normalization.KERNELS, **convolution.KERNELS,
        }

    def kernel_factory(self, op: str) -> KernelFactory | None:
        return self._kernels.get(op) or super().kernel_factory(op)

    def product_by_weight(self, op: str, run: Kernel, weight_t: mx.array) -> Kernel:
        if op not in WEIGHT_PRODUCT_OPERAND or not (
            products.is_cut_at_one_row(weight_t) or products.native_matvec_pays(weight_t)
        ):
            return run
        return products.weight_blocked_product(op, run)

    def loading(self) -> None:
        native.kernels()  # sizes their pool, or says once that they cannot run here

    def what_it_lacks(self, info: ProgramInfo) -> BackendError | None:
        slots = info.slots
        for instruction in info.instructions:
            if (
                instruction.op in ("mlx.conv_general", "mlx.conv_bias_activation")
                and slots[instruction.results[0]].dtype == "float64"
                and any(d != 1 for d in cast(Sequence[int], instruction.kernel_props().get("input_dilation", ())))
            ):
                location = f" ({instruction.location})" if instruction.location else ""
                return BackendError(
                    "a transposed convolution in float64, which MLX's CPU backend lacks (0.32)",
                    f"instruction #{instruction.index} ({instruction.op}{location})",
                )
        return None

    def spreads(self, op: str) -> bool:
        return op in products.CPU_STREAM_OPS

    def thread_token(self) -> int:
        return streams.thread_token()

    @contextlib.contextmanager
    def exporting(self) -> Generator[None, None, None]:
        with streams.fewer_cpu_streams(1), native.suspended():
            yield


CPU = CpuBackend()
