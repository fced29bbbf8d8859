"""The differential suite: every op family exported with static and dynamic shapes,
compiled, run on MLX at other sizes and compared with eager PyTorch (see
`differential/harness.py` for the tolerances)."""

from __future__ import annotations

import pytest

from differential.cases import CASES
from differential.harness import config_id, configurations, run_case

CONFIGS = configurations(CASES)


@pytest.mark.parametrize("config", CONFIGS, ids=[config_id(c) for c in CONFIGS])
def test_op_matches_eager_torch(config) -> None:
    case, dtype, dynamic = config
    run_case(case, dtype, dynamic)


def test_suite_size() -> None:
    assert len(CONFIGS) >= 300


def test_case_names_are_unique() -> None:
    """A name is a case's test ids and its coverage record (`tools/coverage.py`)."""
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
