"""The `mlxir` command: compile, run and inspect on a saved `.pt2`, and its errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from small_models import Embed  # noqa: E402
from torch.export import Dim, export

from mlxir.tools.cli import main_with

# Its tests share compiled programs (module fixtures, caches): one worker compiles them once.
pytestmark = pytest.mark.xdist_group("test_cli")


class Affine(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.linear(x))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Affine]:
    torch.manual_seed(0)
    model = Affine().eval()
    ep = export(model, (torch.randn(2, 4),), dynamic_shapes={"x": {0: Dim("batch", min=1, max=16)}})
    path = tmp_path_factory.mktemp("cli") / "affine.pt2"
    torch.export.save(ep, str(path))
    return path, model


def test_compile_run_inspect(saved: tuple[Path, Affine], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pt2, model = saved
    program = tmp_path / "affine.mlxfb"
    assert main_with(["compile", str(pt2), "-o", str(program)]) == 0
    assert program.stat().st_size > 0

    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    assert main_with(["run", str(program), "--input", str(tmp_path / "x.npy"), "--output-dir", str(out_dir)]) == 0
    got = np.load(out_dir / "output_0.npy")
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)

    capsys.readouterr()
    assert main_with(["inspect", str(program)]) == 0
    text = capsys.readouterr().out
    assert "mlx.addmm 1" in text and "mlx.tanh 1" in text  # a biased linear
    assert "input  x: float32[s" in text
    assert "output: float32[?, 3]" in text
    assert "constants: 2 globals, 60 bytes" in text


def test_torch_can_be_asked_to_decompose_the_whole_program(
    saved: tuple[Path, Affine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--decompose program` is torch's whole-program re-trace (the default decomposes
    nodes alone, silently): the same program, and a note that says so."""
    pt2, _ = saved
    by_nodes, by_torch = tmp_path / "nodes.mlxfb", tmp_path / "torch.mlxfb"
    assert main_with(["compile", str(pt2), "-o", str(by_nodes)]) == 0
    assert "note:" not in capsys.readouterr().err
    assert main_with(["compile", str(pt2), "-o", str(by_torch), "--decompose", "program"]) == 0
    assert "note: torch re-traced the whole program" in capsys.readouterr().err
    assert by_nodes.read_bytes() == by_torch.read_bytes()


def test_emit_levels(saved: tuple[Path, Affine], capsys: pytest.CaptureFixture[str]) -> None:
    pt2, _ = saved
    assert main_with(["compile", str(pt2), "--emit", "aten"]) == 0
    assert "aten.linear" in capsys.readouterr().out
    assert main_with(["compile", str(pt2), "--emit", "mlx"]) == 0
    out = capsys.readouterr().out
    assert "mlx.addmm" in out and "aten." not in out  # a biased linear


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compile", "missing.pt2", "-o", "x.mlxfb"], "cannot read 'missing.pt2': no such file"),
        (["run", "missing.mlxfb"], "cannot read 'missing.mlxfb'"),
        (["inspect", "README.md"], "README.md"),
    ],
)
def test_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_with(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("mlxir: error: ") and message in err
    assert "Traceback" not in err


def test_run_with_wrong_input_names_it(saved: tuple[Path, Affine], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pt2, _ = saved
    program = tmp_path / "affine.mlxfb"
    main_with(["compile", str(pt2), "-o", str(program)])
    np.save(tmp_path / "bad.npy", np.zeros((2, 5), dtype=np.float32))
    capsys.readouterr()
    assert main_with(["run", str(program), "--input", str(tmp_path / "bad.npy")]) == 1
    assert "input 'x': dim 1 must be 4" in capsys.readouterr().err


def test_mlx_opt_reads_pt2_and_writes_programs(
    saved: tuple[Path, Affine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlxir.tools.mlx_opt import run as mlx_opt

    pt2, model = saved
    assert mlx_opt([str(pt2)]) == 0
    assert "aten.linear" in capsys.readouterr().out
    program = tmp_path / "affine.mlxfb"
    assert mlx_opt([str(pt2), "-p", "lower-to-mlx", "-t", "mlx-fb", "-o", str(program)]) == 0
    assert mlx_opt([str(program)]) == 0
    assert "mlx.tanh" in capsys.readouterr().out
    import mlxir

    x = torch.randn(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(mlxir.load(program)(x), model(x))


def test_mlx_opt_rejects_a_non_archive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mlxir.tools.mlx_opt import run as mlx_opt

    bogus = tmp_path / "bogus.pt2"
    bogus.write_text("not a zip")
    assert mlx_opt([str(bogus)]) == 1
    err = capsys.readouterr().err
    assert "is not a torch.export archive" in err and "Traceback" not in err


def _mlxir(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The `mlxir` command in a fresh process, as a user runs it (warnings and logging
    as Python sets them up by default)."""
    code = "import sys; from mlxir.tools.cli import main; sys.argv[0] = 'mlxir'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def test_demo_matches_transformers_on_one_quiet_screen() -> None:
    """The README's main command: export, compile and generate, checked against
    transformers inside the demo itself (it exits 1 on a mismatch). It prints mlxir's
    own output only (no third-party warnings or logs on stderr), on one screen."""
    result = _mlxir("demo", "--new-tokens", "4")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) <= 24 and max(len(line) for line in lines) <= 100, result.stdout
    assert "convert-aten-to-mlx" in result.stdout
    assert "==> identical tokens: yes" in lines
    assert any(line.startswith("==> time for the whole generation: mlxir ") for line in lines)
    # what a first run's seconds are (MLX's kernel builds, cached across processes)
    assert "kernels it has not cached yet (once per machine)" in result.stdout


def test_compile_prints_no_third_party_noise(saved: tuple[Path, Affine], tmp_path: Path) -> None:
    pt2, _ = saved
    result = _mlxir("compile", str(pt2), "-o", str(tmp_path / "a.mlxfb"))
    assert result.returncode == 0 and result.stderr == ""


def test_a_users_own_warnings_still_show() -> None:
    """The filters are precise: a user's warnings, deprecations and pytree notices around
    mlxir calls still reach stderr."""
    code = """
import warnings, torch
import mlxir
from torch.export import export
warnings.warn("mine")
ep = export(torch.nn.Linear(2, 2), (torch.randn(1, 2),))
mlxir.compile(ep)
warnings.warn("deprecated by me", DeprecationWarning)
warnings.warn("still mine", FutureWarning)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    for message in ("UserWarning: mine", "DeprecationWarning: deprecated by me", "FutureWarning: still mine"):
        assert message in result.stderr


def test_a_closed_pipe_is_not_an_error() -> None:
    """`mlxir info | head -0`: the reader is gone before mlxir writes; mlxir stops
    quietly with the SIGPIPE status, as shell tools do."""
    code = "import sys; from mlxir.tools.cli import main; sys.argv[0] = 'mlxir'; main()"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # long before the child has imported anything
    err = process.stderr.read()
    assert process.wait(timeout=120) == 141, err
    assert err == ""


def test_compile_time_prints_each_stage(saved: tuple[Path, Affine], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pt2, _ = saved
    program = tmp_path / "timed.mlxfb"
    capsys.readouterr()
    assert main_with(["compile", str(pt2), "-o", str(program), "--time"]) == 0
    report = capsys.readouterr().err
    stages = ["read .pt2", "import (aten)", "lower (lower-to-mlx)", "serialize (verify)", "write file"]
    lines = report[report.index("compile stages:") :].splitlines()[1:]
    assert [line.split("  ")[0].strip() for line in lines[:-1]] == stages
    seconds = [float(line.split()[-3]) if line.endswith("%") else float(line.split()[-2]) for line in lines]
    assert all(s >= 0 for s in seconds) and abs(sum(seconds[:-1]) - seconds[-1]) < 0.01
    assert program.stat().st_size > 0
    assert main_with(["compile", str(pt2), "-o", str(program)]) == 0
    assert "compile stages" not in capsys.readouterr().err


def test_compile_into_a_missing_folder_fails_before_compiling(
    saved: tuple[Path, Affine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pt2, _ = saved
    target = tmp_path / "no-such-folder" / "m.mlxfb"
    assert main_with(["compile", str(pt2), "-o", str(target), "--time"]) == 1
    err = capsys.readouterr().err
    assert f"the folder '{target.parent}' does not exist" in err
    assert "compile stages" not in err and "internal error" not in err


def test_mlx_opt_names_unsupported_ops_as_the_inputs_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mlxir.tools.mlx_opt import run as mlx_opt

    class Eigenvalues(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.linalg.eigvals(x).real

    path = tmp_path / "eig.pt2"
    torch.export.save(torch.export.export(Eigenvalues(), (torch.randn(3, 3),)), path)
    assert mlx_opt([str(path), "-p", "lower-to-mlx"]) == 1
    err = capsys.readouterr().err
    assert "unsupported op(s)" in err and "aten.linalg_eig" in err and "test_cli.py:" in err
    assert "internal error" not in err and "Traceback" not in err


@pytest.fixture(scope="module")
def compiled(saved: tuple[Path, Affine]) -> Path:
    pt2, _ = saved
    program = pt2.with_suffix(".mlxfb")
    assert main_with(["compile", str(pt2), "-o", str(program)]) == 0
    return program


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a `.pt2` or a program fails the test: a mistake in the arguments must be
    found before either (a compile, or a run, costs seconds to minutes)."""
    import mlxir
    from mlxir.conversions.torch_to_aten import archive

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("the command read its input before checking its arguments")

    monkeypatch.setattr(archive, "load_archive", refused)
    monkeypatch.setattr(mlxir, "load", refused)


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder no file can be made in: read-only, or, for root (whom permissions do
    not stop), /proc."""
    if os.geteuid() == 0:
        return Path("/proc")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compile", "{pt2}", "-o", "{folder}"], "-o '{folder}' is a folder: give the file to write"),
        (["compile", "{folder}"], "'{folder}' is a folder: give a saved ExportedProgram (.pt2)"),
        (["compile", "{pt2}", "--emit", "mlx", "-o", "{folder}"], "-o '{folder}' is a folder"),
        (["debug", "{pt2}", "--input", "{x}", "--overlay", "{folder}"], "--overlay '{folder}' is a folder"),
        (["debug", "{pt2}", "--input", "{x}", "--repro", "{notes}"], "--repro '{notes}' is a file: give a folder"),
        (["debug", "{pt2}", "--input", "{x}", "--module", "{folder}"], "'{folder}' is a folder: give an mlx-level module"),
        (["debug", "{pt2}", "--input", "{folder}/missing.npy"], "cannot read input '{folder}/missing.npy': No such file"),
        (["run", "{program}", "--input", "{x}", "--output-dir", "{notes}"], "--output-dir '{notes}' is a file"),
        (["run", "{program}", "--input", "{x}", "--output-dir", "{notes}/out"], "cannot make the folder '{notes}/out'"),
        (["run", "{program}", "--input", "{x}", "--output-dir", "{unwritable}/out"], "the folder '{unwritable}/out'"),
        (["run", "{folder}"], "'{folder}' is a folder: give a compiled program"),
        (["inspect", "{folder}"], "'{folder}' is a folder: give a compiled program"),
        (["export-mlxfn", "{program}", "-o", "{folder}"], "-o '{folder}' is a folder"),
        (["export-mlxfn", "{program}", "-o", "{folder}/f.mlxfn", "--state", "{folder}"], "--state '{folder}' is a folder"),
        (["demo", "-o", "{folder}"], "-o '{folder}' is a folder"),
    ],
)
def test_a_mistake_is_one_line_found_before_any_work(
    saved: tuple[Path, Affine], compiled: Path, tmp_path: Path, argv: list[str], message: str,
    no_work: None, capsys: pytest.CaptureFixture[str],
) -> None:
    pt2, _ = saved
    (tmp_path / "notes.txt").write_text("not a folder\n")
    np.save(tmp_path / "x.npy", np.zeros((2, 4), dtype=np.float32))
    names = {"pt2": pt2, "program": compiled, "folder": tmp_path, "notes": tmp_path / "notes.txt",
             "x": tmp_path / "x.npy", "unwritable": _unwritable_folder(tmp_path)}
    assert main_with([arg.format(**names) for arg in argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mlxir: error: ") and message.format(**names) in err, err
    assert err.count("\n") == 1 and "internal error" not in err


@pytest.mark.parametrize(
    ("command", "pipeline", "message"),
    [
        ("compile", "no-such-pass", "-p 'no-such-pass': unknown pass 'no-such-pass'"),
        ("compile", "cse,dce,no-such-pass", "unknown pass 'no-such-pass'"),
        ("compile", "lower-to-mlx{no-such-option=1}", "not found in expected arguments"),
        ("compile", "lower-to-mlx{target", "-p 'lower-to-mlx{target': Expected"),
        ("debug", "no-such-pass", "unknown pass 'no-such-pass'"),
    ],
)
def test_a_pipeline_that_names_no_pass_is_a_usage_error(
    saved: tuple[Path, Affine], tmp_path: Path, command: str, pipeline: str, message: str,
    no_work: None, capsys: pytest.CaptureFixture[str],
) -> None:
    pt2, _ = saved
    inputs = ["--input", "1"] if command == "debug" else ["-o", str(tmp_path / "m.mlxfb")]
    assert main_with([command, str(pt2), *inputs, "-p", pipeline]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mlxir {command}: error: ") and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compile", "m.pt2", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["compile"], "the following arguments are required: input"),
        (["run", "m.mlxfb", "--tensor-parallel", "two"], "argument --tensor-parallel: invalid int value"),
        (["debug", "m.pt2", "--overlay-metric", "no-such-metric"], "argument --overlay-metric: invalid choice"),
    ],
)
def test_a_usage_error_shows_the_commands_usage(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main_with(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: mlxir {argv[0]} ") and f"mlxir {argv[0]}: error: {message}" in err, err


def test_a_flag_combination_refused_is_a_usage_error(
    saved: tuple[Path, Affine], no_work: None, capsys: pytest.CaptureFixture[str]
) -> None:
    pt2, _ = saved
    assert main_with(["debug", "--bisect", str(pt2), "--input", "1", "--overlay", "o.json"]) == 2
    assert "--overlay needs per-node errors" in capsys.readouterr().err
    assert main_with(["compile", str(pt2), "-o", "m.mlxfb", "--tensor-parallel", "0"]) == 2
    assert "--tensor-parallel must be at least 1" in capsys.readouterr().err
    assert main_with(["compile", str(pt2)]) == 2
    assert "compile needs -o FILE.mlxfb (or --emit aten|mlx to print IR)" in capsys.readouterr().err
    assert main_with(["debug", str(pt2), "--input", "1", "--rtol", "nan"]) == 2
    assert "mlxir debug: error: --rtol must be 0 or positive, not nan" in capsys.readouterr().err
    assert main_with(["demo", "--new-tokens", "0"]) == 2
    assert "--new-tokens must be at least 1, not 0" in capsys.readouterr().err


def test_the_command_line_imports_nothing_heavy() -> None:
    """Parsing a command line imports neither torch, xDSL, transformers nor MLX: each
    command imports what it uses (`mlxir generate` from a cached program never needs
    torch or xDSL)."""
    code = (
        "import sys; from mlxir.tools.cli import build_parser; "
        "build_parser().parse_args(['generate', 'm.mlxfb', '--ids', '1']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'xdsl', 'transformers', 'mlx'}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    as_module = subprocess.run(
        [sys.executable, "-m", "mlxir.tools.cli", "--version"], capture_output=True, text=True, timeout=120
    )
    assert as_module.returncode == 0 and as_module.stdout.startswith("mlxir "), as_module.stderr


def test_float_token_ids_are_one_line_naming_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Float token ids for an embedding: eager PyTorch fails inside aten.embedding with
    a multi-line traceback; `mlxir debug` names the input in one line, in both modes."""
    path = tmp_path / "embed.pt2"
    torch.export.save(export(Embed(), (torch.tensor([[1, 2, 3]]),)), str(path))
    np.save(tmp_path / "tokens.npy", np.array([[1.0, 2.0, 3.0]], dtype=np.float32))
    for mode in ([], ["--bisect"]):
        assert main_with(["debug", *mode, str(path), "--input", str(tmp_path / "tokens.npy")]) == 1
        err = capsys.readouterr().err
        assert err == "mlxir: error: input 'tokens' is float32, where the program was exported with int64 (integer values)\n", err
