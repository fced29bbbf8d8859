"""Where the native kernels cannot run, every program still runs, on MLX's own
kernels, with one line saying why (never a traceback); where they are turned off, with
no line; `mlxir info` names the kernels in use. Each case is a fresh process: the
loader decides once per process."""

from __future__ import annotations

import os
import subprocess
import sys

import mlx.core as mx
import pytest

from mlxir import native

PROGRAM = """
import torch, mlxir
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.SiLU(), torch.nn.Linear(96, 32)).eval()
ep = torch.export.export(model, (torch.randn(1, 64),))
program = mlxir.compile(ep)
x = torch.randn(1, 64)
error = (program(x) - model(x)).abs().max().item()
assert error < 1e-5, error
print("ran", error)
"""


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM], env={**os.environ, **env}, capture_output=True, text=True, timeout=300
    )


def _lines_about_native(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "native CPU kernels" in line]


@pytest.mark.whole_program
def test_a_program_runs_with_one_line_where_the_library_cannot_load() -> None:
    done = _run({native.LIBRARY: "/nonexistent/_kernels.so"})
    assert done.returncode == 0, done.stderr
    assert "ran" in done.stdout
    lines = _lines_about_native(done.stderr)
    assert len(lines) == 1, done.stderr
    assert "running on MLX's own CPU kernels" in lines[0] and "/nonexistent/_kernels.so" in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.whole_program
def test_a_program_runs_silently_with_the_kernels_turned_off() -> None:
    done = _run({native.SWITCH: "0"})
    assert done.returncode == 0, done.stderr
    assert "ran" in done.stdout
    assert _lines_about_native(done.stderr) == []


def test_a_library_built_for_another_mlx_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    if native.load() is None:
        pytest.fail(f"native kernels unavailable: {native.unavailable_reason()}")
    monkeypatch.setattr(mx, "__version__", "0.31.0", raising=False)
    native._loaded.cache_clear()  # pyright: ignore[reportPrivateUsage]
    try:
        assert native.load() is None
        reason = native.unavailable_reason() or ""
        assert "built for MLX 0.32" in reason and "running MLX 0.31.0" in reason and "reinstall" in reason
    finally:
        monkeypatch.undo()
        native._loaded.cache_clear()  # pyright: ignore[reportPrivateUsage]
    assert native.load() is not None


def test_mlxir_info_names_the_kernels_in_use() -> None:
    done = subprocess.run([sys.executable, "-m", "mlxir.tools.cli", "info"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("native CPU kernels:"))
    module = native.load()
    assert module is not None
    for name, _ in module.families():
        assert name in line
    assert module.isa() in line
    off = subprocess.run(
        [sys.executable, "-m", "mlxir.tools.cli", "info"],
        env={**os.environ, native.SWITCH: "0"}, capture_output=True, text=True, timeout=120,
    )
    assert f"native CPU kernels: none: turned off by {native.SWITCH}=0" in off.stdout


LLM_PROGRAMS = """
import sys
sys.path.insert(0, {tests!r})
import torch
import mlxir
from llm_models import build_model
from test_quantize import _assert_generates_like, _dequantized_reference
from mlxir.tools import llm

torch.manual_seed(0)
model = build_model("llama")
model.generation_config.eos_token_id = None
_assert_generates_like(llm.compile_llm(model), model, seed=1)
quantize = mlxir.Quantize(bits=4, group_size=64)
_assert_generates_like(llm.compile_llm(model, quantize=quantize), _dequantized_reference(model, quantize), seed=1)
print("generated")
"""


@pytest.mark.whole_program
def test_llm_programs_generate_like_transformers_without_the_native_kernels() -> None:
    """The other way round from the LLM suites (which run with the native kernels): a
    Llama's f32 and 4-bit programs on MLX's own kernels give transformers' greedy
    tokens and first logits (4 bits: against the dequantized model)."""
    from pathlib import Path

    script = LLM_PROGRAMS.format(tests=str(Path(__file__).resolve().parent))
    done = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, native.SWITCH: "0"},
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "generated" in done.stdout
