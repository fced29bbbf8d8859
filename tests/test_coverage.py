"""docs/coverage.md is generated from the code: it must match what the importer,
the lowering and the differential suite register now."""

from __future__ import annotations

from mlxir.tools import coverage


def test_coverage_table_is_current() -> None:
    """The table renders from every differential case's record and the registered
    importers and patterns; each record is checked against a real export and import
    by its case's own differential test (`differential.harness.run_case`)."""
    from differential.cases import CASES

    records = coverage.recorded()
    assert set(records) == {case.name for case in CASES}, (
        "tests/differential/coverage.json must hold every differential case: "
        "run `.venv/bin/python -m mlxir.tools.coverage --write`"
    )
    actual = coverage.TABLE.read_text() if coverage.TABLE.exists() else ""
    assert actual == coverage.table(records), (
        "docs/coverage.md is out of date: run `.venv/bin/python -m mlxir.tools.coverage --write`"
    )


def test_every_imported_op_is_lowered() -> None:
    from mlxir.conversions.torch_to_aten import IMPORTERS

    lowered = coverage.lowered_ops()
    imported = {coverage._aten_op_of(packet) for packet in IMPORTERS} - {None}
    assert imported <= lowered, sorted(imported - lowered)


def test_every_op_of_executorchs_mlx_backend_is_covered() -> None:
    """The ATen overloads ExecuTorch's MLX backend names in its op handlers: each one
    mlxir imports, or decomposes into ops it imports. In-place forms are exempt:
    `torch.export` functionalizes them away before any backend sees the graph."""
    import importlib.util
    import re
    from pathlib import Path

    import torch

    from mlxir.conversions.torch_to_aten import IMPORTERS, decomposition_table

    # Read, not imported: the package needs generated files the wheel lacks.
    backends = importlib.util.find_spec("executorch.backends")
    assert backends is not None and backends.submodule_search_locations
    source = (Path(next(iter(backends.submodule_search_locations))) / "mlx" / "ops.py").read_text()
    named = set(re.findall(r"torch\.ops\.aten\.([a-z_0-9]+)\.([A-Za-z_0-9]+)", source))
    assert len(named) > 150, "executorch's MLX backend moved its op table"
    decomposed = decomposition_table()
    missing = [
        f"{name}.{overload}"
        for name, overload in sorted(named)
        if not name.endswith("_")
        and f"aten.{name}" not in IMPORTERS
        and getattr(getattr(torch.ops.aten, name), overload) not in decomposed
    ]
    assert not missing, missing
