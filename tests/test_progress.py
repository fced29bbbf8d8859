"""The progress line of a long compile: drawn on a terminal only, cleared at the end,
naming each stage; nothing at all when standard error is not a terminal."""

from __future__ import annotations

import io
from pathlib import Path

import torch
from torch.export import export

import mlxir
from mlxir.support.progress import progress_shown, report


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(8, 16)
        self.down = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def test_a_compile_on_a_terminal_shows_its_stages_and_clears_the_line() -> None:
    terminal = Terminal()
    ep = export(Mlp(), (torch.randn(2, 8),))
    with progress_shown(terminal, delay=0.0):  # shown at once (a real compile waits 2 s)
        program = mlxir.compile(ep)
    shown = terminal.getvalue()
    for stage in ("mlxir: import", "lower: convert-aten-to-mlx", "lower: canonicalize", "lower: dce",
                  "serialize: weights"):
        assert stage in shown, (stage, shown)
    assert shown.endswith("\r") and shown.rsplit("\r", 2)[-2].strip() == "", "the line is cleared"
    x = torch.randn(2, 8)
    torch.testing.assert_close(program(x), ep.module()(x), rtol=1e-5, atol=1e-5)


def test_nothing_is_drawn_off_a_terminal_or_before_the_delay() -> None:
    plain = io.StringIO()
    with progress_shown(plain, delay=0.0):
        report("import", 1, 2)
    assert plain.getvalue() == ""
    terminal = Terminal()
    with progress_shown(terminal, delay=3600.0):
        report("import", 1, 2)
    assert terminal.getvalue() == ""
    report("outside", 1, 2)  # no line: a no-op


def test_the_bar_counts_the_work_done() -> None:
    terminal = Terminal()
    with progress_shown(terminal, delay=0.0):
        report("import", 6, 24)
    assert "mlxir: import [######..................] 6/24" in terminal.getvalue()


def test_a_long_silent_call_keeps_its_line_ticking() -> None:
    """A call that reports nothing itself (torch.export.load) keeps its stage on the
    line, redrawn with its seconds, while it runs."""
    import time

    from mlxir.tools.cli.common import progress_while

    terminal = Terminal()
    with progress_shown(terminal, delay=0.0), progress_while("waiting"):
        time.sleep(0.7)
    draws = terminal.getvalue().count("mlxir: waiting")
    assert draws >= 2, terminal.getvalue()


def test_reading_a_pt2_is_shown(tmp_path: Path) -> None:
    from mlxir.tools.cli.common import load_exported

    path = tmp_path / "mlp.pt2"
    torch.export.save(export(Mlp(), (torch.randn(2, 8),)), str(path))
    terminal = Terminal()
    with progress_shown(terminal, delay=0.0):
        ep = load_exported(path)
    assert "mlxir: reading mlp.pt2" in terminal.getvalue()
    assert sum(1 for n in ep.graph.nodes if n.op == "call_function") > 0
