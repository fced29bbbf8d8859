"""PyTorch's OpInfo database as a differential suite (`opinfo/harness.py`): every
OpInfo in every float dtype it supports on CPU, its first samples exported, compiled
and compared with eager PyTorch. A mismatch or a crash fails; so does any outcome that
differs from the recorded table (`docs/opinfo.md`, `opinfo/outcomes.json`): regenerate
both with `.venv/bin/python tests/opinfo/sweep.py --write` and review the diff."""

from __future__ import annotations

import pytest
import torch

from opinfo.harness import configurations, dtype_name, run_configuration
from opinfo.table import TABLE, config_key, kind, recorded, render

CONFIGS = configurations()
RECORDED = recorded()
REGENERATE = "regenerate with `.venv/bin/python tests/opinfo/sweep.py --write`"


@pytest.mark.parametrize(
    "name,dtype", CONFIGS, ids=[f"{name}-{dtype_name(dtype)}" for name, dtype in CONFIGS]
)
def test_opinfo_samples_match_eager_torch(name: str, dtype: torch.dtype) -> None:
    outcomes = [str(o) for o in run_configuration(name, dtype)]
    failures = [o for o in outcomes if kind(o) in ("mismatch", "crash")]
    assert not failures, "\n".join(failures)
    expected = RECORDED.get(config_key(name, dtype_name(dtype)))
    assert outcomes == expected, f"outcomes changed from the table's {expected}: {REGENERATE}"


def test_table_lists_every_configuration_and_is_current() -> None:
    keys = {config_key(name, dtype_name(dtype)) for name, dtype in CONFIGS}
    assert set(RECORDED) == keys, REGENERATE
    assert TABLE.read_text() == render(RECORDED), REGENERATE


def test_recorded_table_has_no_mismatch_or_crash() -> None:
    bad = [
        f"{key}: {o}" for key, outcomes in RECORDED.items() for o in outcomes
        if kind(o) in ("mismatch", "crash")
    ]
    assert not bad, "\n".join(bad)
