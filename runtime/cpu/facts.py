"""What the CPU backend runs on, as `mlxir info` prints it: the BLAS MLX's CPU matmuls
call and how it was chosen, the thread settings, the CPU streams, the native kernels."""

from __future__ import annotations

import os

from mlxir.runtime.cpu import blas, native, streams


def cpu_facts() -> list[tuple[str, str]]:
    """(name, value) pairs, one per line of `mlxir info`."""
    in_use = blas.blas_in_use()
    bundled = " (bundled with MLX)" if blas.is_bundled(in_use) else ""
    facts = [("BLAS (cblas_sgemm)", f"{os.path.normpath(in_use)}{bundled}")]
    details = blas.library_details(in_use)
    if details:
        facts.append(("BLAS build", details))
    choice = blas.selected()
    facts += [
        ("BLAS choice", f"{choice.source}: {choice.reason}"),
        ("MLXIR_BLAS", os.environ.get("MLXIR_BLAS", "unset")),
    ]
    others = [path for path in blas.candidates() if path != in_use]
    if others:
        facts.append(("other BLAS found", ", ".join(others)))
    facts += [(name, str(value)) for name, value in blas.thread_settings().items()]
    facts += [
        ("MLXIR_CPU_STREAMS", os.environ.get("MLXIR_CPU_STREAMS", "unset")),
        ("CPU streams for MLX's one-thread kernels", str(len(streams.cpu_streams()) or 1)),
    ]
    return facts + native.facts()
