"""docs/coverage.md is generated from the code: it must match what the importer,
the lowering and the differential suite register now."""

from __future__ import annotations

from mlxir.tools import coverage


def test_coverage_table_is_current() -> None:
    expected = coverage.table()
    actual = coverage.TABLE.read_text() if coverage.TABLE.exists() else ""
    assert actual == expected, (
        "docs/coverage.md is out of date: run `.venv/bin/python -m mlxir.tools.coverage --write`"
    )


def test_every_imported_op_is_lowered() -> None:
    from mlxir.conversions.torch_to_aten import IMPORTERS

    lowered = coverage.lowered_ops()
    imported = {coverage._aten_op_of(packet) for packet in IMPORTERS} - {None}
    assert imported <= lowered, sorted(imported - lowered)
