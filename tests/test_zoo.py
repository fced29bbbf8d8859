"""The model zoo (`tests/zoo/`): every architecture exported, compiled with
`mlxir.compile` and compared with eager PyTorch on inputs whose dynamic dims differ
from the export's. A mismatch fails; so does an outcome that differs from the recorded
table (`docs/models.md`, `tests/zoo/outcomes.json`): regenerate both with
`.venv/bin/python tests/zoo/run.py --write` and review the diff."""

from __future__ import annotations

import pytest
from zoo.harness import TABLE, TOLERANCE, recorded, render, run
from zoo.models import ARCHITECTURES

RECORDED = recorded()
REGENERATE = "regenerate with `.venv/bin/python tests/zoo/run.py --write`"


@pytest.mark.parametrize("architecture", ARCHITECTURES, ids=[a.name for a in ARCHITECTURES])
def test_architecture_matches_eager_torch(architecture: object) -> None:
    from zoo.models import Architecture

    assert isinstance(architecture, Architecture)
    outcome = run(architecture)
    assert outcome.status != "mismatch", f"max error {outcome.max_error} > {TOLERANCE}"
    expected = RECORDED.get(architecture.name, {})
    assert (outcome.status, outcome.detail) == (expected.get("status"), expected.get("detail")), REGENERATE


def test_table_lists_every_architecture_and_is_current() -> None:
    assert list(RECORDED) == [a.name for a in ARCHITECTURES], REGENERATE
    assert TABLE.read_text() == render(RECORDED), REGENERATE
    assert all(o["status"] != "mismatch" for o in RECORDED.values())


def test_the_venv_itself_has_no_torchvision_and_imports_transformers() -> None:
    """torchvision and timm live in `build/zoo-packages`, on the path of the zoo's
    processes only: the venv's `import transformers` (which would import a torchvision
    it can see, and fail with it) works, and finds none."""
    import subprocess
    import sys

    check = (
        "import importlib.util, transformers, transformers.models.resnet;"
        "assert importlib.util.find_spec('torchvision') is None, 'torchvision is in the venv';"
        "assert importlib.util.find_spec('timm') is None, 'timm is in the venv'"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
