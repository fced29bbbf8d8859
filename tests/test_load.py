"""Loading: a program read from a path is mapped, its constants copied once into MLX
and their pages dropped from the process, so the weights are held once; bytes are used
in place and a writable buffer is copied. Every way in gives the same program."""

from __future__ import annotations

import sys
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
import torch
from torch import nn
from torch.export import export

import mlxir
from mlxir.runtime.program import Program


@pytest.fixture(scope="module")
def program_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).eval()
    data = mlxir.compile(export(model, (torch.randn(2, 256),))).to_bytes()
    path = tmp_path_factory.mktemp("load") / "mlp.mlxfb"
    path.write_bytes(data)
    return path, data


def _load(source: object) -> Program:
    program = mlxir.load(source)  # type: ignore[arg-type]
    assert isinstance(program, Program)
    return program


def test_every_source_gives_the_same_program(program_file: tuple[Path, bytes], tmp_path: Path) -> None:
    path, data = program_file
    x = mx.array(np.random.default_rng(0).standard_normal((2, 256)).astype(np.float32))
    from_path, from_bytes = _load(path), _load(data)
    buffer = bytearray(data)
    from_buffer = _load(buffer)
    buffer[-64:] = bytes(64)  # the caller's buffer changes after the load: the program does not
    results = [p(x) for p in (from_path, from_bytes, from_buffer)]
    assert all(mx.array_equal(r, results[0]).item() for r in results)
    assert from_path.to_bytes() == data and from_buffer.to_bytes() == data
    assert from_bytes.to_bytes() is data, "bytes are used in place"
    from_path.save(tmp_path / "again.mlxfb")
    assert (tmp_path / "again.mlxfb").read_bytes() == data


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/smaps")
def test_a_loaded_file_holds_no_weight_pages(program_file: tuple[Path, bytes]) -> None:
    """The weights (2 MB here) live in MLX only: the file's mapping keeps no resident
    pages once the constants are bound."""
    path, data = program_file
    program = _load(path)
    resident = _resident_kb(path)
    assert resident is not None, "the program file is not mapped"
    assert resident * 1024 < len(data) // 8, f"{resident} kB of the {len(data)}-byte file stay resident"
    assert program.to_bytes() == data  # the file is still read through the mapping


def test_an_empty_file_is_a_program_error(tmp_path: Path) -> None:
    (tmp_path / "empty.mlxfb").write_bytes(b"")
    with pytest.raises(mlxir.ProgramError, match="too short"):
        mlxir.load(tmp_path / "empty.mlxfb")


def _resident_kb(path: Path) -> int | None:
    """The resident size of `path`'s mappings in this process (smaps' `Rss`)."""
    total, inside = None, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            inside = fields[-1] == str(path)
        elif inside and fields and fields[0] == "Rss:":
            total = (total or 0) + int(fields[1])
    return total
