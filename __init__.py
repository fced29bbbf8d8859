"""mlxir: a multi-level IR compiler from `torch.export` programs to MLX.

    import mlxir
    program = mlxir.compile(torch.export.export(model, args))
    outputs = program(*args)        # called like the module: nested inputs, kwargs

The pieces, each usable alone:

- `mlxir.import_program(ep) -> ModuleOp`: the aten-level IR of an ExportedProgram
  each weight the `dense<...>` value of its `mlx.global` (`mlxir.weights_of(module)`);
- `mlxir.lower(module, pipeline=None)`: lowers it in place to the mlx level with the
  default pipeline for this device, `lower-to-mlx{target=cpu}` on MLX's CPU (the
  CPU target's passes, `transforms/cpu/`) and `lower-to-mlx` elsewhere (or any
  `mlx-opt -p` pipeline string; `target="generic"` or `"cpu"` picks another target).
  The compiler never asks MLX for the device: these functions pass it
  `mlxir.runtime.backend.host_target()`;
- `mlxir.compile(ep, pipeline=None, quantize=None) -> Program`: import, lower,
  quantize the matmul weights if asked (`quantize=mlxir.Quantize(bits=4)`), serialize
  and load (`mlxir.compiled_parts`: the same, without the load, as the pieces a file
  is written from; `mlxir.compiled_bytes` joins them);
- `mlxir.load_pass_plugin("my_pass.py")`: registers the passes a file defines, for
  `pipeline=` (`conversions/plugins.py`; installed packages register theirs through
  the `mlxir.passes` entry points).

Attributes are imported lazily so `import mlxir` does not import torch or MLX. On
Linux it loads the system OpenBLAS (or MKL, or `MLXIR_BLAS=<path>`) for MLX's CPU
matmuls when MLX is first imported, just before: see `mlxir.runtime.cpu.blas`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from mlxir.runtime.cpu.blas import select_blas_before_mlx

# MLX's CPU binds its BLAS once, when mlx.core is imported, whoever imports it first: so
# the CPU backend's choice of BLAS (runtime/cpu/blas.py) is armed here, before anything.
select_blas_before_mlx()

if TYPE_CHECKING:
    from torch.export import ExportedProgram
    from xdsl.dialects.builtin import ModuleOp

    from mlxir.codegen import ProgramParts, deserialize, serialize, serialize_parts
    from mlxir.codegen.errors import ProgramError
    from mlxir.conversions.plugins import PluginError, load_pass_plugin
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.conversions.torch_to_aten.importer import Decomposition
    from mlxir.dialects.weights import weights_of
    from mlxir.interop.executorch import PteProgram
    from mlxir.runtime.program import CompileMode, InputError, Program
    from mlxir.transforms.quantize import Quantize

__all__ = [
    "InputError",
    "PluginError",
    "Program",
    "ProgramError",
    "Quantize",
    "compile",
    "compiled_bytes",
    "compiled_parts",
    "deserialize",
    "import_program",
    "load",
    "load_pass_plugin",
    "lower",
    "serialize",
    "serialize_parts",
    "weights_of",
]


def compile(
    ep: ExportedProgram,
    pipeline: str | None = None,
    *,
    quantize: Quantize | None = None,
    compile: CompileMode = "auto",
    decompose: Decomposition = "nodes",
    tensor_parallel: int = 1,
) -> Program:
    """Compiles an ExportedProgram into a program that runs on MLX: import, lower
    (default pipeline: `lower-to-mlx` for this device, see `lower`), quantize the matmul weights if asked
    (`quantize=mlxir.Quantize(bits=4, group_size=64)`), serialize to `.mlxfb` bytes and
    load them. `compile` says when the program runs as an `mx.compile`d function
    (`"auto"`: once an input signature repeats; see `mlxir.runtime.program`).
    `decompose="program"` has torch re-trace the whole program to decompose what
    mlxir has no importer for, instead of those nodes alone (`import_program`)."""
    from mlxir.runtime.program import Program

    parts, _ = compiled_parts(
        ep, pipeline, quantize=quantize, decompose=decompose, tensor_parallel=tensor_parallel
    )
    return Program(parts, verify=False, compile=compile)  # serialize verified it


def lower(
    module: ModuleOp,
    pipeline: str | None = None,
    *,
    verify: bool = True,
    target: str | None = None,
) -> ModuleOp:
    """Lowers an aten-level module in place with `pipeline`, by default `lower-to-mlx`
    for `target`, itself by default this process's device's
    (`mlxir.runtime.backend.host_target()`: the CPU's passes on MLX's CPU), and verifies
    the result unless `verify=False`."""
    from mlxir.conversions.pipelines import lower as lower_for

    if pipeline is None and target is None:
        from mlxir.runtime.backend import host_target

        target = host_target()
    return lower_for(module, pipeline, verify=verify, target=target)


def compiled_bytes(
    ep: ExportedProgram,
    pipeline: str | None = None,
    *,
    quantize: Quantize | None = None,
    decompose: Decomposition = "nodes",
    tensor_parallel: int = 1,
) -> tuple[bytes, str | None]:
    """The `.mlxfb` bytes `compile` loads, and what the quantizer did (one line, None
    without `quantize`): `compiled_parts`, joined."""
    parts, quantized = compiled_parts(
        ep, pipeline, quantize=quantize, decompose=decompose, tensor_parallel=tensor_parallel
    )
    return bytes(parts), quantized


def compiled_parts(
    ep: ExportedProgram,
    pipeline: str | None = None,
    *,
    quantize: Quantize | None = None,
    decompose: Decomposition = "nodes",
    seconds: dict[str, float] | None = None,
    tensor_parallel: int = 1,
) -> tuple[ProgramParts, str | None]:
    """The `.mlxfb` program `compile` loads, in the serializer's pieces
    (`serialize_parts`), and what the quantizer did (one line, None without
    `quantize`). The IR is verified once, by the serializer. `seconds`, when given,
    gets the seconds of `import`, `lower` (quantizing and splitting included) and
    `serialize`. `tensor_parallel=N` splits the program over N ranks, last
    (`shard-tensor-parallel`, docs/distributed.md)."""
    import time

    from mlxir.codegen import serialize_parts
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.dialects.weights import release_weights
    from mlxir.support.progress import progress_shown
    from mlxir.transforms.quantize import quantize_weights

    times = [time.perf_counter()]
    with progress_shown():
        module = import_program(ep, decompose=decompose)
        times.append(time.perf_counter())
        lower(module, pipeline, verify=False)  # serialize verifies
        quantized = quantize_weights(module, quantize) if quantize is not None else None
        if tensor_parallel > 1:
            from mlxir.transforms.shard_tensor_parallel import shard_tensor_parallel

            shard_tensor_parallel(module, tensor_parallel)
        times.append(time.perf_counter())
        parts = serialize_parts(module)
        # The module is freed by the cyclic collector, later: its weights, which the
        # parts still view, are let go at once.
        release_weights(module)
        times.append(time.perf_counter())
    if seconds is not None:
        for stage, start, end in zip(("import", "lower", "serialize"), times, times[1:]):
            seconds[stage] = end - start
    return parts, quantized


def load(
    source: str | Path | bytes | bytearray | memoryview,
    *,
    verify: bool = True,
    method: str = "forward",
    compile: CompileMode = "auto",
) -> Program | PteProgram:
    """Loads a program from a path or from its bytes: an `.mlxfb` as a `Program` (see
    it for `verify` and `compile`), or method `method` of an ExecuTorch `.pte` that
    runs on mlxir delegates as a `PteProgram` (needs the `executorch` extra). Every
    failure to load is a `ProgramError`."""
    import mmap

    from mlxir.runtime.loading import is_pte, opened
    from mlxir.runtime.program import Program

    def program_of(data: bytes | bytearray | memoryview | mmap.mmap, file: BinaryIO | None) -> Program | PteProgram:
        if is_pte(data):
            try:
                from mlxir.interop.executorch import PteProgram
            except ImportError as error:
                raise ProgramError(f"an ExecuTorch .pte file: {error}") from None
            return PteProgram(bytes(data) if isinstance(data, mmap.mmap) else data, method=method, verify=verify)
        return Program(data, verify=verify, compile=compile, _file=file)

    from mlxir.codegen.errors import ProgramError

    if isinstance(source, str | Path):
        with opened(source) as (data, file):
            return program_of(data, file)
    return program_of(source, None)


_LAZY = {
    "import_program": "mlxir.conversions.torch_to_aten",
    "Program": "mlxir.runtime.program",
    "InputError": "mlxir.runtime.program",
    "ProgramError": "mlxir.codegen.errors",
    "serialize": "mlxir.codegen",
    "serialize_parts": "mlxir.codegen",
    "deserialize": "mlxir.codegen",
    "weights_of": "mlxir.dialects.weights",
    "Quantize": "mlxir.transforms.quantize",
    "load_pass_plugin": "mlxir.conversions.plugins",
    "PluginError": "mlxir.conversions.plugins",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mlxir' has no attribute '{name}'")
