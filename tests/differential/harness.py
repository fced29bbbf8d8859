"""Differential testing: export a torch function, compile it with mlxir, run it on MLX
at sizes other than the export's and compare with eager PyTorch.

The reference is eager PyTorch in the same dtype on the same inputs; values are
compared in float32 with per-dtype tolerances:

| dtype | rtol | atol | why |
|---|---|---|---|
| float32 | 1e-4 | 1e-5 | MLX and torch order reductions and use different transcendental kernels |
| float16 | 1e-2 | 1e-2 | 10-bit mantissa (eps ≈ 1e-3); MLX computes in f16 where torch upcasts |
| bfloat16 | 6e-2 | 6e-2 | 7-bit mantissa (eps ≈ 8e-3), rounding of intermediates compounds |
| complex64 | 1e-4 | 1e-5 | float32 parts, compared as complex numbers |
| integers, bool | exact | exact | |
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.export import Dim, export

TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (6e-2, 6e-2),
    # float64 at float32's tolerance: MLX (0.32, CPU) evaluates exp, sin, cos, erf,
    # erfinv, lgamma, digamma and its fused norms on float64 at about float32 accuracy
    # (mx.exp: 1.2e-7 relative error; the OpInfo sweep's largest, digamma: 6e-5).
    torch.float64: (1e-4, 1e-5),
    torch.complex64: (1e-4, 1e-5),  # float32 parts
}

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
F32 = (torch.float32,)


class Fn(torch.nn.Module):
    """Wraps a plain function (and optional parameters) as a module to export."""

    def __init__(self, fn: Callable[..., Any], params: dict[str, torch.Tensor] | None = None):
        super().__init__()
        self.fn = fn
        for name, value in (params or {}).items():
            self.register_buffer(name, value)

    def forward(self, *args: Any) -> Any:
        return self.fn(self, *args)


@dataclass(frozen=True)
class Case:
    """One op configuration. `make(n, dtype)` builds the inputs with `n` as the size of
    every dim listed in `dynamic` (input index → dims), which is dynamic when exported
    dynamically; `fn(module, *inputs)` is the computation."""

    name: str
    fn: Callable[..., Any]
    make: Callable[[int, torch.dtype], tuple[Any, ...]]
    dynamic: dict[int, tuple[int, ...]] = field(default_factory=dict)
    dtypes: Sequence[torch.dtype] = FLOATS
    params: Callable[[torch.dtype], dict[str, torch.Tensor]] | None = None
    static_only: bool = False
    min_size: int = 2
    decompose: bool = True
    """False: import the graph as exported, without torch's decompositions (as an
    ExecuTorch Edge graph or `import_program(ep, decompose=False)` does), so the ops
    torch would decompose reach their own importer entries."""


EXPORT_SIZE = 5
RUN_SIZES = (3, 7)


def _dynamic_shapes(case: Case, count: int, low: int) -> tuple[Any, ...]:
    n = Dim("n", min=low, max=64)
    return tuple(
        {d: n for d in case.dynamic[i]} if i in case.dynamic else None for i in range(count)
    )


def _compare(expected: Any, got: Any, dtype: torch.dtype, where: str) -> None:
    if isinstance(expected, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(expected), where
        for i, (e, g) in enumerate(zip(expected, got)):
            _compare(e, g, dtype, f"{where}[{i}]")
        return
    assert isinstance(got, torch.Tensor), f"{where}: got {type(got).__name__}"
    assert got.shape == expected.shape, f"{where}: shape {tuple(got.shape)} != {tuple(expected.shape)}"
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
    if expected.dtype.is_complex:
        rtol, atol = TOLERANCES[expected.dtype]
        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"{where}: {m}")
    elif expected.dtype.is_floating_point:
        rtol, atol = TOLERANCES.get(expected.dtype, TOLERANCES[torch.float32])
        torch.testing.assert_close(
            got.float(), expected.float(), rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"{where}: {m}"
        )
    else:
        assert torch.equal(got, expected), f"{where}: {got} != {expected}"


def run_case(case: Case, dtype: torch.dtype, dynamic: bool) -> None:
    from mlxir.tools import coverage

    module = Fn(case.fn, case.params(dtype) if case.params else None)
    export_inputs = case.make(EXPORT_SIZE, dtype)
    shapes = _dynamic_shapes(case, len(export_inputs), case.min_size) if dynamic else None
    with torch.no_grad():
        ep = export(module, export_inputs, dynamic_shapes=(shapes,) if shapes else None)
    if coverage.coverage_config(case) == (dtype, dynamic):
        with _imported_graph() as imported:
            program = compile_case(case, ep)
        _check_coverage_record(case, coverage.case_packets(ep.graph, imported[0], dtype))
    else:
        program = compile_case(case, ep)
    sizes = RUN_SIZES if dynamic else (EXPORT_SIZE,)
    for n in sizes:
        inputs = case.make(n, dtype)
        with torch.no_grad():
            expected = module(*inputs)
        got = program(*inputs)
        _compare(expected, got, dtype, f"{case.name}[{dtype}, n={n}]")


@contextlib.contextmanager
def _imported_graph() -> Iterator[list[Any]]:
    """Holds, once the block has run, the graph the importer received (after its node
    decompositions), the graph `tools/coverage.py` reads."""
    from mlxir.conversions.torch_to_aten import importer

    seen: list[Any] = []
    graph_to_import = importer.graph_to_import

    def recording(*args: Any, **kwargs: Any) -> Any:
        found = graph_to_import(*args, **kwargs)
        seen.append(found[1])
        return found

    importer.graph_to_import = recording
    try:
        yield seen
    finally:
        importer.graph_to_import = graph_to_import


def _check_coverage_record(case: Case, record: dict[str, Any]) -> None:
    """This case's record in `tests/differential/coverage.json` (docs/coverage.md's
    source) must be what its coverage configuration just exported and imported."""
    from mlxir.tools import coverage

    assert _recorded_coverage().get(case.name) == record, (
        f"{case.name}'s packets changed from tests/differential/coverage.json's: "
        "regenerate docs/coverage.md with `.venv/bin/python -m mlxir.tools.coverage --write`"
        if coverage.RECORDED.exists() else "tests/differential/coverage.json is missing"
    )


@functools.cache
def _recorded_coverage() -> dict[str, dict[str, Any]]:
    from mlxir.tools import coverage

    return coverage.recorded()


def compile_case(case: Case, ep: Any) -> Any:
    """`mlxir.compile(ep)`, importing without torch's decompositions when the case says so."""
    import mlxir

    if case.decompose:
        return mlxir.compile(ep)
    from mlxir import lower  # the pipeline of this device, as before the compiler took its target
    from mlxir.codegen import serialize
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.runtime.program import Program

    module = import_program(ep, decompose=False)
    lower(module)
    return Program(serialize(module))


def configurations(cases: Sequence[Case]) -> list[tuple[Case, torch.dtype, bool]]:
    configs = []
    for case in cases:
        for dtype in case.dtypes:
            configs.append((case, dtype, False))
            if case.dynamic and not case.static_only:
                configs.append((case, dtype, True))
    return configs


def config_id(config: tuple[Case, torch.dtype, bool]) -> str:
    case, dtype, dynamic = config
    return f"{case.name}-{str(dtype).removeprefix('torch.')}-{'dynamic' if dynamic else 'static'}"
