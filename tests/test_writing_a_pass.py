"""docs/writing-a-pass.md as written: its blocks, in order, in an empty folder. The
first Python block is the plugin (`swap_add.py`), the MLIR block `add.mlir`, the
second Python block `model.py` (run), the third a script run last; the shell blocks
run as a user types them, with this environment's commands on the PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-a-pass.md"


def _blocks() -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in re.finditer(r"```(\w+)\n(.*?)```", DOC.read_text(), re.S)]


def test_the_guide_runs_as_written(tmp_path: Path) -> None:
    blocks = _blocks()
    python = [text for kind, text in blocks if kind == "python"]
    shell = [text.strip() for kind, text in blocks if kind == "sh"]
    mlir = [text for kind, text in blocks if kind == "mlir"]
    assert len(python) == 3 and len(shell) == 2 and len(mlir) == 1, [kind for kind, _ in blocks]
    (tmp_path / "swap_add.py").write_text(python[0])
    (tmp_path / "add.mlir").write_text(mlir[0])
    (tmp_path / "model.py").write_text(python[1])
    (tmp_path / "check.py").write_text(python[2])
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}

    def run(command: list[str]) -> str:
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr[-3000:])
        return done.stdout

    assert "mlx.add %b, %a : tensor<1xf32>, tensor<4xf32> -> tensor<4xf32>" in run(["bash", "-c", shell[0]])
    run([sys.executable, "model.py"])
    run(["bash", "-c", shell[1]])
    assert (tmp_path / "residual.mlxfb").is_file()
    run([sys.executable, "check.py"])
