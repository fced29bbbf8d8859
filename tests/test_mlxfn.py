"""`export_mlxfn` and `mlxir export-mlxfn`: programs as MLX's own function files.

Each exported file is run in a fresh process that imports only `mlx.core` and numpy
(`run_imported`), as a consumer without mlxir or torch would, and its outputs must be
the program's own (`Program.call_flat`, interpreted, on MLX's own kernels: an export
suspends the native CPU kernels, so the file names only MLX's primitives) bit for bit,
and eager torch's within 1e-5. That process binds MLX to the BLAS this one uses (mlxir chose it at
import): with MLX's bundled BLAS instead, the MLP's outputs differ in the last bit
(measured), which is no fault of the export.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
import torch
from small_models import INTEGER_OUTPUT_PROGRAM, Mlp
from stateful_models import StaticCache
from torch import nn
from torch.export import Dim, export
from xdsl.parser import Parser

import mlxir
from mlxir.codegen import serialize
from mlxir.dialects.context import make_context
from mlxir.runtime.cpu import blas, native
from mlxir.runtime.mlxfn import FORMAT, ExportError, export_mlxfn, parse_signature
from mlxir.runtime.program import InputError, Program
from mlxir.tools.cli import main_with

TOLERANCE = 1e-5


class Gated(nn.Module):
    """Two tensor inputs, one of them with a dynamic batch."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.proj(x) * torch.sigmoid(gate)
        return h, h.sum(dim=-1)


# The imported function run as a consumer runs it: inputs from .npy files, the state
# from the safetensors export-mlxfn wrote, threaded from call to call as the
# convention says, outputs to .npy files.
RUNNER = textwrap.dedent("""
    import ctypes, json, sys
    from pathlib import Path
    if sys.argv[3]:
        ctypes.CDLL(sys.argv[3], mode=ctypes.RTLD_GLOBAL)  # before mlx.core binds its BLAS
    import mlx.core as mx
    import numpy as np
    folder, calls = Path(sys.argv[1]), int(sys.argv[2])
    fn, metadata = mx.import_function(str(folder / "f.mlxfn"), return_metadata=True)
    metadata = json.loads(metadata)
    state = mx.load(str(folder / "state.safetensors")) if metadata["state"] else {}
    values = [state[s["name"]] for s in metadata["state"]]
    for call in range(calls):
        inputs = [mx.array(np.load(folder / f"in_{call}_{i}.npy")) for i in range(len(metadata["inputs"]))]
        results = fn(*inputs, *values)
        outputs, values = results[: len(metadata["outputs"])], results[len(metadata["outputs"]) :]
        for i, value in enumerate([*outputs, *values]):
            np.save(folder / f"out_{call}_{i}.npy", np.array(value))
    assert "mlxir" not in sys.modules and "torch" not in sys.modules, "imported more than MLX"
""")


def run_imported(folder: Path, calls: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
    """Runs `folder/f.mlxfn` on `calls` in a fresh process that imports only mlx.core and
    numpy; each call's outputs, then its new state values."""
    for call, inputs in enumerate(calls):
        for i, value in enumerate(inputs):
            np.save(folder / f"in_{call}_{i}.npy", value)
    library = "" if blas.is_bundled(blas.blas_in_use()) else blas.blas_in_use()
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(folder), str(len(calls)), library],
        capture_output=True, text=True, cwd=folder, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [
        [np.load(path) for path in sorted(folder.glob(f"out_{call}_*.npy"), key=lambda p: int(p.stem.split("_")[2]))]
        for call in range(len(calls))
    ]


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), f"differs by up to {np.abs(got - want).max()}"


@pytest.fixture(scope="module")
def mlp() -> tuple[nn.Module, bytes]:
    torch.manual_seed(0)
    model = Mlp().eval()
    with torch.no_grad():
        ep = export(model, (torch.randn(2, 16),), dynamic_shapes=({0: Dim("batch", max=64)},))
    return model, mlxir.compile(ep).to_bytes()


@pytest.fixture(scope="module")
def cache_program(tmp_path_factory: pytest.TempPathFactory) -> tuple[StaticCache, Path]:
    torch.manual_seed(0)
    model = StaticCache().eval()
    ep = export(model, (torch.randn(1, 1, 4), torch.tensor([0])))
    path = tmp_path_factory.mktemp("cache") / "cache.mlxfb"
    mlxir.compile(ep).save(path)
    return model, path


@pytest.fixture(scope="module")
def gated_program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Gated, Path]:
    torch.manual_seed(0)
    model = Gated().eval()
    with torch.no_grad():
        ep = export(model, (torch.randn(3, 8), torch.randn(8)), dynamic_shapes=({0: Dim("batch", max=16)}, None))
    path = tmp_path_factory.mktemp("gated") / "gated.mlxfb"
    mlxir.compile(ep).save(path)
    return model, path


def test_two_shapes_in_one_file(mlp: tuple[nn.Module, bytes], tmp_path: Path) -> None:
    model, data = mlp
    program = Program(data, compile=False)
    metadata = export_mlxfn(program, tmp_path / "f.mlxfn", [[(1, 16)], [(4, 16)]])
    assert [s["shapes"] for s in metadata["signatures"]] == [[[1, 16]], [[4, 16]]]

    generator = np.random.default_rng(0)
    inputs = [generator.standard_normal((batch, 16)).astype(np.float32) for batch in (1, 4)]
    got = run_imported(tmp_path, [[x] for x in inputs])
    for x, (output,) in zip(inputs, got):
        with native.suspended():
            assert_same_bits(output, np.asarray(program.call_flat(x)[0]))
        np.testing.assert_allclose(output, np.asarray(program.call_flat(x)[0]), rtol=TOLERANCE, atol=TOLERANCE)
        with torch.no_grad():
            reference = model(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(output, reference, rtol=TOLERANCE, atol=TOLERANCE)

    imported = mx.import_function(str(tmp_path / "f.mlxfn"), return_metadata=True)
    assert isinstance(imported, tuple)
    fn, text = imported
    assert json.loads(text) == metadata and metadata["format"] == FORMAT
    with pytest.raises(ValueError, match="No imported function found"):
        fn(mx.zeros((3, 16)))  # a shape not exported


def test_state_in_state_out_through_the_cli(
    cache_program: tuple[StaticCache, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A static KV cache written in place: the caller threads the state through the
    calls, starting from the initial values `--state` wrote."""
    model, path = cache_program
    argv = ["export-mlxfn", str(path), "-o", str(tmp_path / "f.mlxfn"), "--state", str(tmp_path / "state.safetensors")]
    assert main_with(argv) == 0
    out = capsys.readouterr().out
    assert "calling convention: fn(x, pos, cache) -> (output, cache)" in out

    generator = np.random.default_rng(1)
    calls = [
        [generator.standard_normal((1, 1, 4)).astype(np.float32), np.array([position], dtype=np.int64)]
        for position in (0, 3, 3, 7)
    ]
    got = run_imported(tmp_path, calls)
    program = Program(path.read_bytes(), compile=False)
    reference = StaticCache().eval()
    reference.load_state_dict(model.state_dict())
    for (x, position), (output, cache) in zip(calls, got):
        with native.suspended():
            assert_same_bits(output, np.asarray(program.call_flat(x, position)[0]))
        assert_same_bits(cache, np.asarray(program.state["cache"]))
        with torch.no_grad():
            expected = reference(torch.from_numpy(x), torch.from_numpy(position)).numpy()
        np.testing.assert_allclose(output, expected, rtol=TOLERANCE, atol=TOLERANCE)
        np.testing.assert_allclose(cache, reference.state_dict()["cache"].numpy(), rtol=TOLERANCE, atol=TOLERANCE)


def test_several_inputs_through_the_cli(
    gated_program: tuple[Gated, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, path = gated_program
    argv = ["export-mlxfn", str(path), "-o", str(tmp_path / "f.mlxfn"), "--shape", "2x8,8", "--shape", "5x8,8"]
    assert main_with(argv) == 0
    out = capsys.readouterr().out
    assert "2 signature(s): 2x8,8; 5x8,8" in out
    assert "calling convention: fn(x, gate) -> (output[0], output[1])" in out

    generator = np.random.default_rng(2)
    calls = [[generator.standard_normal(shape).astype(np.float32) for shape in ((b, 8), (8,))] for b in (5, 2)]
    got = run_imported(tmp_path, calls)
    program = Program(path.read_bytes(), compile=False)
    for inputs, outputs in zip(calls, got):
        assert len(outputs) == 2
        with native.suspended():
            wanted = program.call_flat(*inputs)
        for output, want in zip(outputs, wanted):
            assert_same_bits(output, np.asarray(want))
        with torch.no_grad():
            expected = model(*(torch.from_numpy(v) for v in inputs))
        for output, want in zip(outputs, expected):
            np.testing.assert_allclose(output, want.numpy(), rtol=TOLERANCE, atol=TOLERANCE)


def test_a_static_program_needs_no_shape(cache_program: tuple[StaticCache, Path], tmp_path: Path) -> None:
    _, path = cache_program
    metadata = export_mlxfn(Program(path.read_bytes()), tmp_path / "f.mlxfn")
    assert metadata["signatures"] == [{"shapes": [[1, 1, 4], [1]], "integers": {}}]
    assert metadata["state"] == [{"name": "cache", "dtype": "float32", "shape": [1, 8, 4]}]


def _program_of(text: str) -> Program:
    return Program(serialize(Parser(make_context(), text).parse_module(), verify=False))


BROADCAST = """
    func.func @forward(%x: tensor<3xf32>, %n: index) -> tensor<?x3xf32> {
      %c = arith.constant 2 : index
      %m = arith.muli %n, %c : index
      %y = mlx.broadcast_to %x [%m, 3] : tensor<3xf32> -> tensor<?x3xf32>
      func.return %y : tensor<?x3xf32>
    }"""


def test_integer_inputs_are_held_constant(tmp_path: Path) -> None:
    program = _program_of(BROADCAST)
    metadata = export_mlxfn(program, tmp_path / "f.mlxfn", [parse_signature("3,2", program)])
    assert metadata["integers"] == ["n"]
    assert metadata["signatures"] == [{"shapes": [[3]], "integers": {"n": 2}}]
    fn = mx.import_function(str(tmp_path / "f.mlxfn"))
    assert callable(fn)
    x = mx.array([1.0, 2.0, 3.0])
    (got,) = fn(x)  # n is not an argument: it is 2 in the trace
    with native.suspended():
        assert mx.array_equal(got, program.call_flat(x, 2)[0]).item() and got.shape == (4, 3)

    with pytest.raises(ExportError, match="signature 2 has the tensor shapes of signature 1"):
        export_mlxfn(program, tmp_path / "g.mlxfn", [[(3,), 2], [(3,), 5]])
    with pytest.raises(ExportError, match="input 'n' is an integer: give its value"):
        export_mlxfn(program, tmp_path / "g.mlxfn")
    with pytest.raises(InputError, match="input 'n' is an integer: expected its value, got '2x2'"):
        parse_signature("3,2x2", program)
    assert not (tmp_path / "g.mlxfn").exists()


def test_integer_outputs_cannot_be_exported(tmp_path: Path) -> None:
    program = _program_of(INTEGER_OUTPUT_PROGRAM)
    with pytest.raises(ExportError, match="cannot be exported: output 'output 0' is an integer"):
        export_mlxfn(program, tmp_path / "f.mlxfn", [[4]])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--shape", "2x9,8"], "signature 1 (2x9,8): input 'x': dim 1 must be 8"),
        (["--shape", "2x8,8", "--shape", "99x8,8"], "signature 2 (99x8,8): input 'x': dim 0 must lie in"),
        (["--shape", "2x8"], "--shape 2x8: 1 item(s), the program takes 2 input(s): x (float32[?"),
        (["--shape", "2by8,8"], "input 'x': expected a shape like 2x16"),
        (["--shape", "2x8,8", "--shape", "2x8,8"], "signature 2 has the tensor shapes of signature 1"),
        ([], "input 'x' has a dynamic shape (float32[?"),
        (["--shape", "2x8,8", "--state", "state.npz"], "the state file must end in .safetensors"),
        (["-o", "/nonexistent/f.mlxfn", "--shape", "2x8,8"], "the folder '/nonexistent' does not exist"),
    ],
)
def test_cli_errors_are_one_line(
    gated_program: tuple[Gated, Path], tmp_path: Path, argv: list[str], message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, path = gated_program
    output = tmp_path / "f.mlxfn"
    assert main_with(["export-mlxfn", str(path), "-o", str(output), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mlxir: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not output.exists(), "a failed export leaves no file"
    assert list(tmp_path.iterdir()) == []


def test_cli_rejects_what_is_not_an_mlxfb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a program\n")
    pte = tmp_path / "model.pte"
    pte.write_bytes(b"\0\0\0\0ET12" + bytes(64))
    for argv, message in [
        ([str(tmp_path / "missing.mlxfb"), "-o", "f.mlxfn"], "cannot read '"),
        ([str(text), "-o", "f.mlxfn"], "not an .mlxfb program"),
        ([str(pte), "-o", "f.mlxfn"], "is an ExecuTorch .pte: export-mlxfn takes a compiled .mlxfb"),
        ([str(text)], "export-mlxfn needs -o FILE.mlxfn"),
    ]:
        usage = message.startswith("export-mlxfn needs")
        assert main_with(["export-mlxfn", *argv]) == (2 if usage else 1)
        err = capsys.readouterr().err
        prefix = "mlxir export-mlxfn: error: " if usage else "mlxir: error: "
        assert err.startswith(prefix) and message in err, err
