"""Loading: a program read from a path is mapped, its weights read from the file into
MLX by `mx.load` (`runtime/payloads.py`) and the mapping's pages dropped, so the
weights are held once; bytes are used in place and a writable buffer is copied. Every
way in gives the same program. A program verified once on this machine is not
verified again, and loading it does not import xDSL (`codegen/verification.py`)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from torch import nn
from torch.export import export

import mlxir
from mlxir.codegen import serialize
from mlxir.codegen.reader import read_program
from mlxir.codegen.verification import cache_dir, is_verified, key_of
from mlxir.dialects.context import make_context
from mlxir.runtime.program import Program
from mlxir.support import dtypes


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


# -- the weights come in through mx.load ---------------------------------------------

_IR_TYPES = {d.name: d.ir_spelling for d in dtypes.DTYPES if d.name != "index"}
_SHAPES = {"scalar": (), "empty": (0, 4), "matrix": (3, 5)}


def _every_dtype_program() -> tuple[bytes, dict[str, np.ndarray]]:
    """A program returning one global per element type and shape (float64 is read
    through NumPy: MLX's safetensors reader lacks it), with its payloads."""
    from xdsl.parser import Parser

    rng = np.random.default_rng(0)
    payloads: dict[str, np.ndarray] = {}
    lines, reads, types = [], [], []
    for name, spelling in _IR_TYPES.items():
        for label, shape in _SHAPES.items():
            global_name = f"{name}_{label}"
            type_ = f"tensor<{''.join(f'{d}x' for d in shape)}{spelling}>"
            values = rng.standard_normal(shape) * 50
            if name == "bool":
                array = np.asarray(values > 0)
            elif name == "bfloat16":
                array = torch.from_numpy(np.asarray(values, dtype=np.float32)).to(torch.bfloat16)
            else:
                array = np.asarray(values).astype(dtypes.BY_NAME[name].numpy.newbyteorder("="))
            payloads[global_name] = array  # type: ignore[assignment]
            lines.append(f'mlx.global @{global_name} "parameter" : {type_}')
            reads.append(f"  %{global_name} = mlx.weight @{global_name} : {type_}")
            types.append(type_)
    returns = ", ".join(f"%{n}" for n in payloads)
    text = "\n".join(
        [*lines, f"func.func @forward() -> ({', '.join(types)}) {{", *reads,
         f"  func.return {returns} : {', '.join(types)}", "}"]
    )
    module = Parser(make_context(), text).parse_module()
    return serialize(module, payloads), payloads  # type: ignore[arg-type]


def _as_mx(value: object) -> mx.array:
    if isinstance(value, torch.Tensor):  # bfloat16: its bits, viewed as MLX's bfloat16
        return mx.array(value.view(torch.int16).numpy()).view(mx.bfloat16)
    array = np.asarray(value)
    return mx.array(array, dtype=getattr(mx, "bool_" if array.dtype == np.bool_ else str(array.dtype)))


@pytest.mark.parametrize("through", ["mx.load", "numpy"])
def test_every_dtype_and_shape_loads_exactly(through: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlxir.runtime import payloads as payloads_module

    monkeypatch.setattr(payloads_module, "THROUGH_MLX_FROM", 0 if through == "mx.load" else 2**62)
    data, payloads = _every_dtype_program()
    (tmp_path / "all.mlxfb").write_bytes(data)
    for source in (tmp_path / "all.mlxfb", data, bytearray(data)):
        outputs = _load(source).call_flat()
        assert len(outputs) == len(payloads)
        for (name, expected), got in zip(payloads.items(), outputs, strict=True):
            want = _as_mx(expected)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            assert mx.array_equal(got, want).item(), f"{name} from {type(source).__name__}"


# -- verification verdicts ------------------------------------------------------------

_CHILD = """
import sys
import mlx.core as mx
import mlxir
program = mlxir.load(sys.argv[1])
x = mx.array([[float(i % 7) - 3 for i in range(256)]] * 2)
print(float(mx.sum(program(x)).item()))
print(any(name == "xdsl" or name.startswith("xdsl.") for name in sys.modules))
"""


def _load_in_child(path: Path, cache: Path | str) -> tuple[float, bool]:
    env = dict(os.environ, MLXIR_CACHE_DIR=str(cache))
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    total, imported = run.stdout.split()
    return float(total), imported == "True"


def test_a_verified_program_loads_without_xdsl(program_file: tuple[Path, bytes], tmp_path: Path) -> None:
    """Verified on first load (xDSL imported, the verdict recorded), then loaded by
    later processes without rebuilding the IR or importing xDSL, with the same
    results; with the cache off, every load verifies."""
    path, data = program_file
    cache = tmp_path / "cache"
    first, imported_first = _load_in_child(path, cache)
    assert imported_first, "an unknown program is verified"
    key = key_of(read_program(data), data)
    assert (cache / "verified" / key[:2] / key).is_file()
    second, imported_second = _load_in_child(path, cache)
    assert not imported_second, "a program verified here is not verified again"
    assert second == first
    _, imported_uncached = _load_in_child(path, "none")
    assert imported_uncached


def test_serialize_records_its_verdict(program_file: tuple[Path, bytes]) -> None:
    _, data = program_file  # compiled in this process: serialize verified its IR
    assert cache_dir() is not None and is_verified(key_of(read_program(data), data))


def test_a_verdict_covers_the_structure_not_the_weights(program_file: tuple[Path, bytes]) -> None:
    _, data = program_file
    info = read_program(data)
    key = key_of(info, data)
    weight = next(g for g in info.globals if g.length)
    changed_weight = bytearray(data)
    changed_weight[info.segment_start + weight.offset] ^= 0xFF
    assert key_of(read_program(bytes(changed_weight)), bytes(changed_weight)) == key
    name = info.globals[0].name.encode()
    position = data.index(name)
    renamed = bytearray(data)
    renamed[position] = ord("Z")
    assert key_of(read_program(bytes(renamed)), bytes(renamed)) != key


def test_a_lying_program_is_still_caught(tmp_path: Path) -> None:
    """A program whose IR does not verify was never recorded, so loading it verifies
    and fails, naming the op."""
    from xdsl.parser import Parser

    text = """
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf16> {
  %y = mlx.exp %x : tensor<4xf32> -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}"""
    module = Parser(make_context(), text).parse_module()
    data = serialize(module, verify=False)
    assert not is_verified(key_of(read_program(data), data))
    (tmp_path / "lie.mlxfb").write_bytes(data)
    with pytest.raises(mlxir.ProgramError, match="mlx.exp"):
        mlxir.load(tmp_path / "lie.mlxfb")


def test_weights_that_cannot_be_read_are_a_program_error(program_file: tuple[Path, bytes], tmp_path: Path) -> None:
    """A file cut short after it was validated (truncated while loading) fails with
    `ProgramError`, not with MLX's error."""
    from mlxir.runtime.payloads import bind_payloads

    _, data = program_file
    info = read_program(data)
    short = tmp_path / "short.mlxfb"
    short.write_bytes(data[: info.segment_start + 4096])
    with short.open("rb") as file, pytest.raises(mlxir.ProgramError, match="cannot read the weights"):
        bind_payloads(info, memoryview(data), file.fileno())


class _Projections(nn.Module):
    """Large weights (held by reference, so views among the parts), one transposed
    linear weight returned as it is (an output that is a constant's view) and a
    bfloat16 buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(512, 1024, bias=False)
        self.k = nn.Linear(512, 512, bias=False)
        self.o = nn.Linear(1536, 512)
        self.halves: torch.Tensor
        self.register_buffer("halves", torch.randn(600, 1024).to(torch.bfloat16))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = self.o(torch.cat([self.q(x), torch.relu(self.k(x))], dim=-1))
        return y, self.k.weight.t(), self.halves[:2] * 2


def _exported(model: nn.Module) -> torch.export.ExportedProgram:
    batch = torch.export.Dim("batch", min=1, max=64)
    return export(model, (torch.randn(4, 512),), dynamic_shapes=({0: batch},))


def test_a_program_compiled_from_parts_is_the_program_of_its_bytes(tmp_path: Path) -> None:
    """`mlxir.compile` loads the serializer's pieces without joining them: same
    outputs, same bytes back (the weights taken from MLX), and no view of the user's
    tensors left behind."""
    torch.manual_seed(0)
    model = _Projections().eval()
    ep = _exported(model)
    parts, _ = mlxir.compiled_parts(ep)
    assert any(isinstance(chunk, memoryview) for chunk in parts.chunks), "no weight was held by reference"
    data = bytes(parts)
    assert data == mlxir.compiled_bytes(ep)[0]
    assert all(parts[a:b] == data[a:b] for a, b in [(0, 10), (5, len(data)), (len(parts.head) - 3, len(data) - 7), (9, 9)])
    written = tmp_path / "parts.mlxfb"
    with written.open("wb") as file:
        parts.write(file)
    assert written.read_bytes() == data

    from_parts, from_bytes = Program(parts), Program(data)
    x = torch.randn(7, 512)
    with torch.no_grad():
        expected = [t.clone() for t in model(x)]
        for before in model.parameters():
            before.mul_(3)  # the user's tensors change after the compile: the program does not
    for got, want in zip(from_parts(x), from_bytes(x), strict=True):
        assert torch.equal(got, want)
    for got, want in zip(from_parts(x), expected, strict=True):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    assert from_parts.to_bytes() == data
    from_parts.save(tmp_path / "again.mlxfb")
    assert (tmp_path / "again.mlxfb").read_bytes() == data


def test_a_linear_weights_transpose_runs_once_at_load() -> None:
    """`w.T` of a constant is a view MLX makes without a copy: it is computed at load,
    and no call runs it again."""
    torch.manual_seed(0)
    model = _Projections().eval()
    program = mlxir.compile(_exported(model))
    assert isinstance(program, Program)
    transposes = [i for i in program.info.instructions if i.op == "mlx.transpose"]
    assert transposes, "the program reads its linear weights through transposes"
    assert not [s for s in program._loaded.steps if s.op == "mlx.transpose"]
    x = torch.randn(3, 512)
    with torch.no_grad():
        expected = [t.clone() for t in model(x)]
    for got, want in zip(program(x), expected, strict=True):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


class _WideHead(nn.Module):
    """A wide linear layer (4000 outputs: four blocks for one row) and a product by
    an input, which no block may cut."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(512, 4000)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.head(x), x @ y


def test_a_few_rows_product_by_a_weight_runs_in_blocks() -> None:
    """A product by a linear weight's `w.T` runs as products of blocks of `w`'s rows
    for a few float32 rows (`weight_blocked_product`, a decode step's shape), whole for
    more; a product by an input never is cut, and with the transposes folded into
    the weights (`fold-weight-transposes`) nothing is. Interpreted, compiled and
    unblocked (the steps `.mlxfn` exports) agree with eager torch within f32 rounding
    (1e-4); interpreted, compiled, and compiled in another thread (its own CPU streams
    and trace) have the same bits."""
    torch.manual_seed(0)
    model = _WideHead().eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = export(model, (torch.randn(4, 512), torch.randn(512, 700)), dynamic_shapes=({0: batch}, None))
    interpreted = mlxir.compile(ep, compile=False)
    compiled = mlxir.compile(ep, compile=True)
    folded = mlxir.compile(ep, pipeline="lower-to-mlx,fold-weight-transposes", compile=False)
    for program, blocked_ops in ((interpreted, ["mlx.addmm"]), (folded, [])):
        assert isinstance(program, Program)
        cut = [s.op for s, w in zip(program._loaded.steps, program._loaded.whole_steps) if s is not w]
        assert cut == blocked_ops, cut
    assert isinstance(interpreted, Program)
    y = torch.randn(512, 700)
    for rows in (1, 3, 16):
        x = torch.randn(rows, 512)
        with torch.no_grad():
            expected = model(x, y)
        got = interpreted(x, y)
        for output, want in zip(got, expected, strict=True):
            torch.testing.assert_close(output, want, atol=1e-4, rtol=1e-4)
        for output, again in zip(got, compiled(x, y), strict=True):
            assert torch.equal(output, again)
        elsewhere: list[Any] = []
        worker = threading.Thread(target=lambda out=elsewhere, x=x: out.extend(compiled(x, y)))
        worker.start()
        worker.join()
        assert len(elsewhere) == 2 and all(torch.equal(a, b) for a, b in zip(got, elsewhere))
        for output, want in zip(folded(x, y), expected, strict=True):
            torch.testing.assert_close(output, want, atol=1e-4, rtol=1e-4)
        whole, _ = interpreted._executor.interpret([mx.array(x.numpy()), mx.array(y.numpy())], {}, views=True)
        torch.testing.assert_close(torch.from_numpy(np.array(whole[0])), expected[0], atol=1e-4, rtol=1e-4)


def test_a_lying_transpose_of_a_weight_fails_at_load_naming_it() -> None:
    """Run at load, the transpose of a constant is checked there as a call checks it:
    even unverified, a program that lies about its result is refused, not run."""
    from xdsl.parser import Parser

    text = """
mlx.global @w "parameter" : tensor<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
func.func @forward(%x: tensor<1x2xf32>) -> tensor<1x3xf32> {
  %w = mlx.weight @w : tensor<2x3xf32>
  %t = mlx.transpose %w [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %y = mlx.matmul %x, %t : tensor<1x2xf32>, tensor<2x3xf32> -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}"""
    data = serialize(Parser(make_context(), text).parse_module(), verify=False)
    with pytest.raises(mlxir.ProgramError, match=r"mlx\.transpose"):
        Program(data, verify=False)


def test_a_float64_weight_loads_from_parts_around_mlxs_loader() -> None:
    """MLX's safetensors reader has no float64: such a payload is read from the parts
    into its own buffer, then into MLX."""
    from xdsl.dialects.builtin import TensorType
    from xdsl.parser import Parser

    from mlxir.codegen import serialize_parts
    from mlxir.dialects.mlx import GlobalOp
    from mlxir.dialects.weights import dense_of

    text = """
mlx.global @d "parameter" : tensor<256x1024xf64>
func.func @forward(%x: tensor<1x1024xf64>) -> tensor<1x1024xf64> {
  %d = mlx.weight @d : tensor<256x1024xf64>
  %y = mlx.add %d, %x : tensor<256x1024xf64>, tensor<1x1024xf64> -> tensor<256x1024xf64>
  %s = mlx.sum %y axes [0] keepdims : tensor<256x1024xf64> -> tensor<1x1024xf64>
  func.return %s : tensor<1x1024xf64>
}"""
    module = Parser(make_context(), text).parse_module()
    values = np.random.default_rng(0).standard_normal((256, 1024))
    target = next(op for op in module.ops if isinstance(op, GlobalOp))
    assert isinstance(target.type, TensorType)
    target.properties["value"] = dense_of(values, target.type, "@d")
    parts = serialize_parts(module)
    assert any(isinstance(chunk, memoryview) for chunk in parts.chunks)
    x = np.random.default_rng(1).standard_normal((1, 1024))
    got = Program(parts)(x)  # numpy in, numpy out
    assert np.array_equal(got, Program(bytes(parts))(x))
    np.testing.assert_allclose(got, (values + x).sum(0, keepdims=True), rtol=1e-12)
    assert Program(parts).to_bytes() == bytes(parts)
