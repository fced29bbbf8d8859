"""Native execution: a program run as an `mx.compile`d function per input signature
(`compile=True`) gives exactly what the interpreter gives (`compile=False`): the same
bits, in float32, float16 and bfloat16, on shapes other than the exported ones, with
state, integer inputs and lazy outputs. Eager PyTorch is the independent reference
(tolerances per dtype below); the two runtimes must agree bit for bit.

Each new fused kernel costs the CPU backend about 1 s of C++ compiling the first time
(cached on disk), so the programs here are few and small."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from small_models import INTEGER_OUTPUT_PROGRAM, LYING_PROGRAM, Mlp
from stateful_models import StaticCache
from torch import nn
from torch.export import Dim, export
from xdsl.parser import Parser

import mlxir
from mlxir.codegen import serialize
from mlxir.dialects.context import make_context
from mlxir.runtime.program import Program

TOLERANCE = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 6e-2}
"""Against eager torch, absolute and relative (half precision rounds differently in
MLX's kernels and in torch's CPU kernels)."""


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.max_pool2d(torch.relu(self.norm(self.conv(x))), 2)
        return self.head(h.mean(dim=(2, 3)))


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 2, 8).permute(2, 0, 3, 1, 4)
        out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(b, s, 16) + x


CASES: dict[str, tuple[type[nn.Module], tuple[int, ...], dict[int, Any], list[tuple[int, ...]]]] = {
    # name: (module, export shape, dynamic dims, call shapes unlike the export's)
    "mlp": (Mlp, (4, 16), {0: Dim("batch", max=64)}, [(3, 16), (7, 16)]),
    "convnet": (ConvNet, (2, 3, 8, 8), {0: Dim("batch", max=8)}, [(3, 3, 8, 8), (1, 3, 8, 8)]),
    "attention": (Attention, (2, 5, 16), {1: Dim("seq", max=32)}, [(2, 3, 16), (2, 9, 16)]),
}


def program_for(name: str, dtype: torch.dtype) -> tuple[nn.Module, bytes]:
    module_class, shape, dims, _ = CASES[name]
    torch.manual_seed(0)
    module = module_class().eval().to(dtype)
    with torch.no_grad():
        ep = export(module, (torch.randn(shape, dtype=dtype),), dynamic_shapes=(dims,))
    return module, mlxir.compile(ep).to_bytes()


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("name", list(CASES))
def test_compiled_equals_interpreted(name: str, dtype: torch.dtype) -> None:
    module, data = program_for(name, dtype)
    interpreted, native = Program(data, compile=False), Program(data, compile=True)
    generator = torch.Generator().manual_seed(1)
    for shape in CASES[name][3]:
        x = torch.randn(shape, generator=generator).to(dtype)
        want = interpreted(x)
        got = native(x)
        assert torch.equal(got, want), f"{name} {dtype} {shape}: the compiled run differs"
        with torch.no_grad():
            reference = module(x)
        tolerance = TOLERANCE[dtype]
        torch.testing.assert_close(got.float(), reference.float(), atol=tolerance, rtol=tolerance)
    assert native.traces == len(CASES[name][3]) and interpreted.traces == 0


def test_auto_traces_a_signature_once_it_repeats_in_a_row() -> None:
    _, data = program_for("mlp", torch.float32)
    program = Program(data)  # compile="auto"
    assert program.compile == "auto"
    x, y = mx.ones((3, 16)), mx.ones((5, 16))
    results = [program(x) for _ in range(Program.auto_compile_after)]
    assert program.traces == 0
    program(y)
    assert program.traces == 0, "a signature seen once is interpreted"
    for _ in range(3):  # alternating shapes (a cache that grows each call) never trace
        results.append(program(x))
        program(y)
    assert program.traces == 0
    results += [program(x) for _ in range(Program.auto_compile_after + 1)]
    assert program.traces == 1
    results.append(program(x))
    assert program.traces == 1, "one trace per signature"
    assert all(mx.array_equal(r, results[0]).item() for r in results)
    # A signature called once between runs of a traced one (an LLM's prefill before
    # each generation's decode steps) is not called in a row: it stays interpreted.
    for _ in range(Program.auto_compile_after + 2):
        program(y)
        for _ in range(3):
            program(x)
    assert program.traces == 1


def test_traces_are_kept_in_a_bounded_lru() -> None:
    _, data = program_for("mlp", torch.float32)

    class Bounded(Program):
        max_traces = 2

    program = Bounded(data, compile=True)
    for batch in (1, 2, 3, 1):
        program(mx.ones((batch, 16)))
    assert program.traces == 2
    assert [shape for (shape, _), in program._executor.traces]  # pyright: ignore[reportPrivateUsage] == [(3, 16), (1, 16)]


def test_state_programs_run_compiled() -> None:
    """A static KV cache written with index_copy: the state flows through the trace
    and is committed after the call, as interpreted."""
    torch.manual_seed(0)
    model = StaticCache().eval()
    ep = export(model, (torch.randn(1, 1, 4), torch.tensor([0])))
    data = mlxir.compile(ep).to_bytes()
    interpreted, native = Program(data, compile=False), Program(data, compile=True)
    reference = StaticCache().eval()
    reference.load_state_dict(model.state_dict())
    generator = torch.Generator().manual_seed(2)
    for step in range(6):
        x, pos = torch.randn(1, 1, 4, generator=generator), torch.tensor([step % 8])
        got = native(x, pos)
        assert torch.equal(got, interpreted(x, pos))
        with torch.no_grad():
            torch.testing.assert_close(got, reference(x, pos))
    assert native.traces == 1
    for name, value in native.state.items():
        assert mx.array_equal(value, interpreted.state[name]).item()
    native.reset_state()
    assert not mx.any(native.state["cache"]).item()


def test_integer_inputs_are_part_of_the_signature() -> None:
    data = _program_of("""
        func.func @forward(%x: tensor<3xf32>, %n: index) -> tensor<?x3xf32> {
          %c = arith.constant 2 : index
          %m = arith.muli %n, %c : index
          %y = mlx.broadcast_to %x [%m, 3] : tensor<3xf32> -> tensor<?x3xf32>
          func.return %y : tensor<?x3xf32>
        }""")
    program = _load(data, compile=True)
    assert program(mx.arange(3, dtype=mx.float32), 2).shape == (4, 3)
    assert program(mx.arange(3, dtype=mx.float32), 3).shape == (6, 3)
    assert program.traces == 2


def test_programs_with_integer_outputs_are_interpreted() -> None:
    data = _program_of(INTEGER_OUTPUT_PROGRAM)
    program = _load(data)
    assert program.native_unavailable is not None and "integer" in program.native_unavailable
    assert [program(4) for _ in range(4)] == [7] * 4
    assert program.traces == 0
    with pytest.raises(ValueError, match="cannot run compiled: output 'output 0' is an integer"):
        mlxir.load(data, compile=True)
    with pytest.raises(ValueError, match="compile must be 'auto', True or False"):
        mlxir.load(data, compile="always")  # type: ignore[arg-type]


def test_a_lying_program_still_fails_naming_the_op() -> None:
    data = _program_of(LYING_PROGRAM)
    program = _load(data, verify=False, compile=True)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"^mlx.exp \(m.py:4:2\) failed: gave float32\[2\]"):
            program(mx.zeros(2))
    assert program.traces == 0


def test_lazy_outputs_and_the_keyword_everywhere(tmp_path: Path) -> None:
    module, data = program_for("mlp", torch.float32)
    path = tmp_path / "mlp.mlxfb"
    path.write_bytes(data)
    loaded = mlxir.load(path, compile=True)
    assert isinstance(loaded, Program) and loaded.compile is True
    x = mx.array(np.random.default_rng(3).standard_normal((6, 16)).astype(np.float32))
    (lazy,) = loaded.call_flat(x, evaluate=False)
    mx.eval(lazy)
    (evaluated,) = Program(data, compile=False).call_flat(x)
    assert mx.array_equal(lazy, evaluated).item()
    with torch.no_grad():
        ep = export(module, (torch.randn(4, 16),), dynamic_shapes=({0: Dim("batch")},))
    assert mlxir.compile(ep, compile=False).compile is False


def _program_of(text: str) -> bytes:
    return serialize(Parser(make_context(), text).parse_module(), verify=False)


def _load(data: bytes, **options: Any) -> Program:
    program = mlxir.load(data, **options)
    assert isinstance(program, Program)
    return program


def test_interpreted_checks_run_until_a_signature_passed_them() -> None:
    """The interpreter checks results until a signature's call passed: a lying
    program fails at every call, an honest one is checked once per signature."""
    lying = _load(_program_of(LYING_PROGRAM), verify=False, compile=False)
    for _ in range(3):
        with pytest.raises(RuntimeError, match=r"^mlx.exp \(m.py:4:2\) failed"):
            lying(mx.zeros(2))
    assert not lying._executor.checked
    _, data = program_for("mlp", torch.float32)
    honest = Program(data, compile=False)
    x = mx.ones((3, 16))
    first, second = honest(x), honest(x)
    assert len(honest._executor.checked) == 1 and mx.array_equal(first, second).item()
