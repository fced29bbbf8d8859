"""Every verifier rule of the dialects has a `--verify-diagnostics` FileCheck case.

A rule is a `raise VerifyException(...)` in `dialects/`; the FileCheck files that run
with `--verify-diagnostics` are run in this process and each rule must be raised by
at least one of their chunks. A new rule without a case fails here, naming it."""

from __future__ import annotations

import ast
import contextlib
import io
import shlex
import sys
from pathlib import Path

import pytest
from xdsl.utils import exceptions

from mlxir.tools.mlx_opt import run

ROOT = Path(__file__).resolve().parents[1]
DIALECTS = ROOT / "dialects"
FILECHECK = ROOT / "tests" / "filecheck"


def verifier_rules() -> dict[tuple[str, int], tuple[int, str]]:
    """(file, first line) -> (last line, source) of every `raise VerifyException(...)`."""
    rules = {}
    for path in sorted(DIALECTS.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Raise)
                and isinstance(node.exc, ast.Call)
                and isinstance(node.exc.func, ast.Name)
                and node.exc.func.id == "VerifyException"
            ):
                source = ast.get_source_segment(path.read_text(), node) or ""
                rules[(str(path), node.lineno)] = (node.end_lineno or node.lineno, " ".join(source.split()))
    return rules


def _run_line_arguments(path: Path) -> list[str]:
    """mlx-opt's arguments on the file's `RUN:` line (its own passes included)."""
    line = next(line for line in path.read_text().splitlines() if "RUN: mlx-opt" in line)
    command = shlex.split(line.split("RUN:", 1)[1].split("|", 1)[0])
    return [str(path) if argument == "%s" else argument for argument in command[1:]]


def test_every_verifier_rule_has_a_diagnostic_case(monkeypatch: pytest.MonkeyPatch) -> None:
    raised: set[tuple[str, int]] = set()
    init = exceptions.VerifyException.__init__

    def record(self: Exception, *args: object, **kwargs: object) -> None:
        frame = sys._getframe(1)
        while frame is not None and not frame.f_code.co_filename.startswith(str(DIALECTS)):
            frame = frame.f_back
        if frame is not None:
            raised.add((frame.f_code.co_filename, frame.f_lineno))
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(exceptions.VerifyException, "__init__", record)
    files = [
        p for p in sorted(FILECHECK.rglob("*.mlir")) if "Output" not in p.parts and "--verify-diagnostics" in p.read_text()
    ]
    assert len(files) > 10
    for path in files:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert run(_run_line_arguments(path)) == 0, path

    rules = verifier_rules()
    assert len(rules) > 100
    missing = [
        f"{Path(file).relative_to(ROOT)}:{first}: {source[:120]}"
        for (file, first), (last, source) in sorted(rules.items())
        if not any(f == file and first <= line <= last for f, line in raised)
    ]
    assert not missing, "verifier rules without a --verify-diagnostics case:\n" + "\n".join(missing)
