"""mlxir: a multi-level IR compiler from `torch.export` programs to MLX.

    import mlxir
    program = mlxir.compile(torch.export.export(model, args))
    outputs = program(*inputs)

The pieces, each usable alone:

- `mlxir.import_program(ep) -> ModuleOp`: the aten-level IR of an ExportedProgram
  (weights in `mlxir.payloads_of(module)`);
- `mlxir.lower(module, pipeline=None)`: lowers it in place to the mlx level with the
  default pipeline `lower-to-mlx` (or any `mlx-opt -p` pipeline string);
- `mlxir.compile(ep, pipeline=None) -> Program`: import, lower, serialize and load.

Attributes are imported lazily so `import mlxir` does not import torch or MLX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch.export import ExportedProgram

__all__ = ["compile", "import_program", "lower", "payloads_of"]


def compile(ep: ExportedProgram, pipeline: str | None = None) -> Any:
    """Compiles an ExportedProgram into a program that runs on MLX."""
    from mlxir.conversions.aten_to_mlx import lower
    from mlxir.conversions.torch_to_aten import import_program, payloads_of
    from mlxir.runtime.ir_interpreter import Program as _InterpretedProgram
    from mlxir.runtime.dtypes import to_torch

    module = import_program(ep)
    payloads = payloads_of(module)
    lower(module, pipeline)
    interpreted = _InterpretedProgram(module, payloads)

    def run(*inputs: Any) -> Any:
        outputs = interpreted(list(inputs))
        converted = [to_torch(o) if not isinstance(o, int) else o for o in outputs]
        return converted[0] if len(converted) == 1 else tuple(converted)

    return run


def __getattr__(name: str) -> Any:
    if name in ("import_program", "payloads_of"):
        from mlxir.conversions import torch_to_aten

        return getattr(torch_to_aten, name)
    if name == "lower":
        from mlxir.conversions.aten_to_mlx import lower

        return lower
    raise AttributeError(f"module 'mlxir' has no attribute '{name}'")
