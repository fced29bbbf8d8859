"""mlx-opt's command line, as mlir-opt users type it: MLIR's pipeline grammar read into
the passes it runs, and a fuzz over argument strings (malformed pipelines, options,
flags) that must each end in an exit status and at most a few lines on stderr, never a
traceback or an escaping exception."""

from __future__ import annotations

import contextlib
import io
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mlxir.tools.mlx_opt import run
from mlxir.tools.pass_pipeline import PipelinePass, PipelineSyntaxError, parse_pass_pipeline

MODULE = """func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = mlx.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = mlx.multiply %0, %1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""


def test_mlir_pipelines_flatten_in_order_with_their_anchors() -> None:
    passes = parse_pass_pipeline(
        "builtin.module( canonicalize , func.func(cse, any(dce)), lower-to-mlx{target=cpu}, "
        'quantize-weights{bits=4 mode="affine"})'
    )
    assert passes == [
        PipelinePass("canonicalize", "", ("builtin.module",)),
        PipelinePass("cse", "", ("builtin.module", "func.func")),
        PipelinePass("dce", "", ("builtin.module", "func.func", "any")),
        PipelinePass("lower-to-mlx", "target=cpu", ("builtin.module",)),
        PipelinePass("quantize-weights", 'bits=4 mode="affine"', ("builtin.module",)),
    ]
    assert [p.spec() for p in passes][-2:] == ["lower-to-mlx{target=cpu}", 'quantize-weights{bits=4 mode="affine"}']
    assert parse_pass_pipeline("builtin.module()") == []
    assert parse_pass_pipeline("cse,dce") == [PipelinePass("cse", "", ()), PipelinePass("dce", "", ())]
    for malformed in ("builtin.module(cse", "cse)", "func.func{x=1}(cse)", "(cse)", "cse,", "cse{a=1", "gpu.module(cse)"):
        with pytest.raises(PipelineSyntaxError):
            parse_pass_pipeline(malformed)


def test_the_timing_report_nests_passes_under_their_anchor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "m.mlir"
    source.write_text(MODULE)
    pipeline = "builtin.module(func.func(cse,dce),canonicalize,func.func(cse))"
    assert run([str(source), "--pass-pipeline", pipeline, "--mlir-timing", "-o", str(tmp_path / "out.mlir")]) == 0
    names = [line.split("%)", 1)[1] for line in capsys.readouterr().err.splitlines() if "%)" in line]
    assert names == [
        "  Parser",
        "  'func.func' Pipeline",
        "    cse",
        "    dce",
        "  canonicalize",
        "  'func.func' Pipeline",
        "    cse",
        "  Verifier",
        "  Output",
        "  Total",
    ]


_PIECES = [
    "cse", "dce", "canonicalize", "lower-to-mlx", "quantize-weights", "no-such-pass", "builtin.module",
    "func.func", "any", "gpu.module", "(", ")", "{", "}", ",", "=", " ", '"', "target=cpu", "bits=4",
    "bits=", "=4", "\\", "'", "target", "{}", "()", ",,", "\u00e9", "\x00", "-", "--", "#", "%",
]
_FLAGS = [
    ["-p"], ["--pass-pipeline"], ["--mlir-print-ir-after"], ["--mlir-print-ir-before"], ["-t"], ["-f"],
    ["--mlir-timing", "-p"], ["--verify-diagnostics", "--split-input-file", "-p"], ["-o", "-", "-p"],
    ["-pass-pipeline"], ["-cse", "-p"], ["--quantize-weights"], ["--mlir-elide-elementsattrs-if-larger"],
]


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 8)))


def test_no_argument_string_ends_in_a_traceback(tmp_path: Path) -> None:
    """400 command lines built from pipeline tokens (seeded): each returns 0, 1 or 2,
    none with a traceback or an "internal error"; a failure says so in at most two
    lines."""
    source = tmp_path / "m.mlir"
    source.write_text(MODULE)
    rng = random.Random(41)
    for _ in range(400):
        argv = [str(source), *rng.choice(_FLAGS), _random_text(rng)]
        if rng.random() < 0.3:
            argv.insert(rng.randint(0, len(argv)), _random_text(rng))
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                status = run(argv)
            except BaseException as error:  # noqa: BLE001 (what the test is about)
                pytest.fail(f"{argv!r} raised {type(error).__name__}: {error}")
        text = err.getvalue()
        assert status in (0, 1, 2), (argv, status)
        assert "Traceback" not in text and "internal error" not in text, (argv, text)
        if status != 0:
            assert len(text.splitlines()) <= 2, (argv, text)


def test_help_says_what_verify_diagnostics_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--verify-diagnostics check the diagnostics against the input's `// expected-error {{text}}` comments" in text
    assert "exit 1 naming each diagnostic not expected and each expectation not met" in text
    assert "exits with code 0" not in text.split("--verify-diagnostics", 1)[1].split("--", 1)[0]


@pytest.mark.parametrize(
    ("arguments", "statuses"),
    [
        (["--help"], {0, 1}),  # argparse itself gives up writing its help, quietly, with status 0
        (["MODULE", "-p", "cse"], {1}),
    ],
)
def test_a_reader_that_stops_reading_ends_mlx_opt_quietly(arguments: list[str], statuses: set[int], tmp_path: Path) -> None:
    """`mlx-opt ... | head`: standard output closed before mlx-opt writes (its read
    end closed first, so every write fails) ends with nothing on stderr; a module not
    written ends with status 1."""
    source = tmp_path / "m.mlir"
    source.write_text(MODULE)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from mlxir.tools.mlx_opt import main; main()",
             *(str(source) if a == "MODULE" else a for a in arguments)],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode in statuses


def test_an_unwritable_binary_output_is_one_line_before_the_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """-t mlx-fb creates its file at the first write, after the passes: a folder that
    cannot be written is reported before them, as the user's error. (The folder is
    made unwritable by `os.access`: a test run as root may write anywhere.)"""
    source = tmp_path / "m.mlir"
    source.write_text(MODULE)
    output = tmp_path / "out.mlxfb"
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert run([str(source), "-p", "cse", "-t", "mlx-fb", "-o", str(output)]) == 1
    assert capsys.readouterr().err == f"mlx-opt: error: cannot write '{output}': Permission denied\n"
    assert not output.exists()


def test_list_passes_names_every_pass_with_options_a_pipeline_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    """`--list-passes`: every registered pass once, with its summary; each option as a
    pipeline spells it, what it takes and its default, and every printed default is
    accepted back in `-p` (so the listing cannot drift from what the parser takes)."""
    from mlxir.conversions.registry import PASSES, registered_passes
    from mlxir.tools.pass_pipeline import build_pass_pipeline

    assert run(["--list-passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert listed == list(PASSES)
    assert "    group-size: an integer (default 64)" in lines
    assert "    embeddings: true or false (default false)" in lines
    name = ""
    for line in lines:
        if not line.startswith(" "):
            name = line.split()[0]
        elif "(default " in line:
            option = line.split(":")[0].strip()
            default = line.rsplit("(default ", 1)[1].rstrip(")")
            pipeline = build_pass_pipeline(registered_passes(), f"{name}{{{option}={default}}}")
            assert [p.name for p in pipeline.passes] == [name], line
