"""Hostile input to the runtime: programs that lie about their types, ask for more
memory than exists or carry code in their dim expressions; calls with unreadable
inputs; calls that fail half way (the state must not move); one program called from
many threads; and compiling the same ExportedProgram twice (byte-identical output)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from small_models import LYING_PROGRAM
from stateful_models import StaticCache
from torch import nn
from torch.export import Dim, export
from xdsl.parser import Parser

import mlxir
from mlxir.codegen import serialize
from mlxir.dialects.context import make_context
from mlxir.runtime.inputs import evaluate_size, parse_size
from mlxir.runtime.program import Program

ROOT = Path(__file__).resolve().parents[1]


def program_of(text: str, payloads: dict | None = None) -> bytes:
    """A program from mlx IR that need not verify (a lying program)."""
    return serialize(Parser(make_context(), text).parse_module(), payloads, verify=False)


# --------------------------------------------------------------------------- lying programs


def test_a_result_type_that_lies_fails_naming_the_op() -> None:
    data = program_of(LYING_PROGRAM)
    with pytest.raises(mlxir.ProgramError, match=r"not valid mlx IR: 'mlx.exp' op result shape \[3\]"):
        mlxir.load(data)
    # Unverified (trusted bytes only), the runtime's own check still catches the lie.
    program = mlxir.load(data, verify=False)
    with pytest.raises(
        RuntimeError,
        match=r"^mlx.exp \(m.py:4:2\) failed: gave float32\[2\], the program declares float32\[3\]",
    ):
        program(mx.zeros(2))


def test_a_huge_result_fails_instead_of_crashing() -> None:
    """MLX crashes the process when an allocation fails: no step may ask for more
    than `Program.max_array_bytes`."""
    program = mlxir.load(
        program_of("""
        func.func @forward(%n: index) -> tensor<?x1048576xf32> {
          %z = mlx.zeros [%n, 1048576] : tensor<?x1048576xf32>
          func.return %z : tensor<?x1048576xf32>
        }""")
    )
    assert program(2).shape == (2, 1048576)
    with pytest.raises(RuntimeError, match=r"^mlx.zeros failed: .* over the limit of"):
        program(1 << 20)


def test_a_static_huge_result_fails_too() -> None:
    program = mlxir.load(
        program_of("""
        func.func @forward() -> tensor<1048576x1048576xf32> {
          %z = mlx.zeros [1048576, 1048576] : tensor<1048576x1048576xf32>
          func.return %z : tensor<1048576x1048576xf32>
        }""")
    )
    with pytest.raises(RuntimeError, match=r"^mlx.zeros failed: .* over the limit"):
        program()


def test_dims_beyond_mlx_are_rejected_at_load() -> None:
    data = program_of("""
        func.func @forward(%x: tensor<4294967296xf32>) -> tensor<4294967296xf32> {
          func.return %x : tensor<4294967296xf32>
        }""")
    with pytest.raises(mlxir.ProgramError, match="over MLX's limit"):
        mlxir.load(data)


def test_runtime_integers_stay_in_int64() -> None:
    """Index arithmetic has no wrap-around: squaring 64 times would take forever."""
    body = "\n".join(f"  %v{i + 1} = arith.muli %v{i}, %v{i} : index" for i in range(64))
    program = mlxir.load(
        program_of(f"""
        func.func @forward(%v0: index) -> index {{
        {body}
          func.return %v64 : index
        }}""")
    )
    assert program(1) == 1
    with pytest.raises(RuntimeError, match=r"^arith.muli failed: gave an integer beyond int64"):
        program(3)


def test_properties_a_kernel_cannot_take_are_a_program_error() -> None:
    data = program_of("""
        func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
          %y:2 = "mlx.split"(%x) <{axis = 0 : i64, indices = true}> : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
          func.return %x : tensor<4xf32>
        }""")
    with pytest.raises(mlxir.ProgramError, match="not valid mlx IR"):
        mlxir.load(data)
    with pytest.raises(mlxir.ProgramError, match=r"instruction #0 \(mlx.split\): invalid properties"):
        mlxir.load(data, verify=False)


@pytest.mark.parametrize(
    "op",
    [
        # Each crashed the process (SIGFPE, std::terminate) before programs were verified.
        '%y = mlx.conv_general %x, %w stride [1] padding [0] [0] kernel_dilation [1] '
        'input_dilation [1] groups 0 : tensor<1x5x2xf32>, tensor<3x3x2xf32> -> tensor<1x3x3xf32>',
        '%y:2 = mlx.split %x at [140737488355336] axis 1 : tensor<1x5x2xf32> -> tensor<1x4x2xf32>, '
        'tensor<1x1x2xf32>',
    ],
)
def test_properties_mlx_crashes_on_are_rejected_at_load(op: str) -> None:
    text = f"""
        func.func @forward(%x: tensor<1x5x2xf32>, %w: tensor<3x3x2xf32>) -> tensor<1x5x2xf32> {{
          {op}
          func.return %x : tensor<1x5x2xf32>
        }}"""
    with pytest.raises(mlxir.ProgramError, match="not valid mlx IR"):
        mlxir.load(program_of(text))


def test_state_written_with_another_type_is_a_program_error() -> None:
    data = program_of(
        """
        mlx.global @s "state" : tensor<2xf32>
        func.func @forward(%x: tensor<3xf32>) -> tensor<3xf32> {
          mlx.store_state %x to @s : tensor<3xf32>
          func.return %x : tensor<3xf32>
        }""",
        {"s": np.zeros(2, np.float32)},
    )
    with pytest.raises(mlxir.ProgramError, match="not valid mlx IR"):
        mlxir.load(data)
    with pytest.raises(mlxir.ProgramError, match=r"@s is float32\[2\], the value is float32\[3\]"):
        mlxir.load(data, verify=False)


def _with_input_dims(expr: str) -> bytes:
    return program_of(f"""
        func.func @forward(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> attributes {{
            mlxir.input_dims = [["s0"], ["{expr}"]], mlxir.symbol_ranges = {{s0 = array<i64: 1, 8>}}}} {{
          func.return %x : tensor<?xf32>
        }}""")


def test_dim_expressions_are_never_evaluated_as_code(tmp_path: Path) -> None:
    """`mlxir.input_dims` comes from the file: it is parsed as a size expression, never
    handed to eval (sympy.sympify would run it)."""
    marker = tmp_path / "ran"
    expr = f"__import__('pathlib').Path('{marker}').touch()".replace("'", "\\'")
    with pytest.raises(mlxir.ProgramError, match=r"program.input_dims\[1\]\[0\]: .* not allowed"):
        mlxir.load(_with_input_dims(expr.replace("\\'", "'")))
    assert not marker.exists()


def test_derived_dims_are_checked() -> None:
    program = mlxir.load(_with_input_dims("2*s0 + 1"))
    program(mx.zeros(3), mx.zeros(7))
    with pytest.raises(mlxir.InputError, match=r"dim 0 must be 2\*\[input 'x' dim 0\] \+ 1 = 7, got 6"):
        program(mx.zeros(3), mx.zeros(6))


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("s0", 5),
        ("2*s0", 10),
        ("s0 + 1", 6),
        ("s0 - 1", 4),
        ("(s0 - 1)//2 + 1", 3),
        ("Max(1, s0 - 7)", 1),
        ("Min(s0, 3)", 3),
        ("FloorDiv(s0, 2)", 2),
        ("Mod(s0, 3)", 2),
        ("s0*s1", None),  # unbound symbol: not checked
        ("s0 // 0", None),
        ("2**s0", None),  # no powers
    ],
)
def test_size_expressions(expr: str, value: int | None) -> None:
    assert evaluate_size(expr, {"s0": 5}) == value


@pytest.mark.parametrize(
    "expr",
    ["__import__('os')", "s0.real", "lambda: 1", "s0[0]", "'a'", "1.5", "f(s0)", "s0; s1", "x" * 300],
)
def test_bad_size_expressions(expr: str) -> None:
    with pytest.raises(mlxir.ProgramError):
        parse_size(expr)


# --------------------------------------------------------------------------- inputs


def test_unreadable_inputs_are_input_errors() -> None:
    program = mlxir.compile(export(nn.Linear(4, 3), (torch.randn(2, 4),)))
    for bad in (torch.randn(2, 4, device="meta"), torch.randn(2, 4).to_sparse()):
        with pytest.raises(mlxir.InputError, match="input 'input': cannot read it as a tensor"):
            program(bad)
    # Views and tensors that require grad are fine.
    x = torch.randn(4, 2).t()
    torch.testing.assert_close(program(x.requires_grad_()), program(x.contiguous().detach()))


def test_integer_inputs_must_fit_int64() -> None:
    program = mlxir.load(
        program_of("""
        func.func @forward(%n: index) -> index {
          func.return %n : index
        }""")
    )
    assert program(7) == 7
    with pytest.raises(mlxir.InputError, match="does not fit in int64"):
        program(2**64)


def test_bad_program_sources() -> None:
    for bad in (None, 3, "not bytes", [1, 2]):
        with pytest.raises(mlxir.ProgramError):
            Program(bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- state




@pytest.fixture(scope="module")
def cache_program() -> tuple[StaticCache, bytes]:
    torch.manual_seed(0)
    model = StaticCache().eval()
    with torch.no_grad():
        ep = export(model, (torch.randn(1, 1, 4), torch.tensor([0])))
    return model, mlxir.compile(ep).to_bytes()


def _state(program: Program) -> dict[str, np.ndarray]:
    return {k: np.array(v) for k, v in program.state.items()}


def _fail_after_the_store(program: Program, monkeypatch: pytest.MonkeyPatch) -> None:
    """Makes `mlx.store_state` fail right after it stored the new value: an error
    after the state was written, before the call ends."""
    import dataclasses

    loaded, executor = program._loaded, program._executor
    stores = [i for i, s in enumerate(loaded.steps) if s.op == "mlx.store_state"]
    assert stores
    steps = list(loaded.steps)
    store = steps[stores[-1]].run

    def store_then_fail(operands: Sequence[Any]) -> Sequence[Any]:
        store(operands)
        raise ValueError("injected failure")

    steps[stores[-1]] = dataclasses.replace(steps[stores[-1]], run=store_then_fail)
    monkeypatch.setattr(loaded, "steps", steps)
    monkeypatch.setattr(executor, "traces", type(executor.traces)())  # traced afresh


@pytest.mark.parametrize("native", [False, True], ids=["interpreted", "compiled"])
def test_a_failed_call_leaves_the_state_as_it_was(
    cache_program: tuple[StaticCache, bytes], monkeypatch: pytest.MonkeyPatch, native: bool
) -> None:
    model, data = cache_program
    program = mlxir.load(data, compile=native)
    reference = StaticCache().eval()
    reference.load_state_dict(model.state_dict())
    with torch.no_grad():
        for step in range(3):
            x, pos = torch.randn(1, 1, 4), torch.tensor([step])
            torch.testing.assert_close(program(x, pos), reference(x, pos))
    before = _state(program)
    assert np.abs(before["cache"]).sum() > 0

    # Bad inputs: rejected before anything runs.
    for bad in ((torch.randn(1, 1, 4),), (torch.randn(1, 2, 4), torch.tensor([3])), (torch.randn(1, 1, 4), torch.tensor([3.0]))):
        with pytest.raises(mlxir.InputError):
            program(*bad)
        assert all(np.array_equal(before[k], v) for k, v in _state(program).items())

    # A kernel that fails after the new cache was stored: nothing is committed.
    with monkeypatch.context() as patch:
        _fail_after_the_store(program, patch)
        with pytest.raises(RuntimeError, match=r"^mlx.store_state .*failed: injected failure"):
            program(torch.randn(1, 1, 4), torch.tensor([5]))
    after = _state(program)
    assert after.keys() == before.keys()
    assert all(np.array_equal(before[k], after[k]) for k in before)

    # ... and the program carries on from the state it had.
    with torch.no_grad():
        x, pos = torch.randn(1, 1, 4), torch.tensor([3])
        torch.testing.assert_close(program(x, pos), reference(x, pos))


def test_a_step_over_the_memory_limit_leaves_the_state(cache_program: tuple[StaticCache, bytes]) -> None:
    _, data = cache_program

    class Small(Program):
        max_array_bytes = 64  # the cache is 128 bytes

    program = Small(data)
    before = _state(program)
    with pytest.raises(RuntimeError, match="over the limit of 64"):
        program(torch.randn(1, 1, 4), torch.tensor([1]))
    assert all(np.array_equal(before[k], v) for k, v in _state(program).items())


# --------------------------------------------------------------------------- threads


class Accumulator(nn.Module):
    """Adds each input to a buffer and returns the new total: any serial order of the
    same calls ends with the same total, and no two calls see the same total."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.total.add_(x)
        return self.total * 1.0


THREADS, CALLS = 8, 50


def _run_threads(work: object) -> list[BaseException]:
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            work(index)  # type: ignore[operator]
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_threads_give_the_serial_results() -> None:
    """One stateless program called from 8 threads x 50 calls: every call gives what the
    same call gives serially (calls are serialized by the program's lock)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)).eval()
    with torch.no_grad():
        ep = export(model, (torch.randn(2, 8),), dynamic_shapes={"input": {0: Dim("b", max=16)}})
    program = mlxir.compile(ep)
    gen = torch.Generator().manual_seed(1)
    inputs = [[torch.randn(1 + (t + c) % 5, 8, generator=gen) for c in range(CALLS)] for t in range(THREADS)]
    serial = [[program(x) for x in row] for row in inputs]
    results: list[list[torch.Tensor | None]] = [[None] * CALLS for _ in range(THREADS)]

    def work(t: int) -> None:
        for c, x in enumerate(inputs[t]):
            # Mix the input kinds: torch, numpy and mlx arrays.
            kind = c % 3
            out = program(x if kind == 0 else x.numpy() if kind == 1 else mx.array(x.numpy()))
            results[t][c] = out if kind == 0 else torch.from_numpy(np.array(out))

    assert _run_threads(work) == []
    for t in range(THREADS):
        for c in range(CALLS):
            assert torch.equal(results[t][c], serial[t][c]), (t, c)  # type: ignore[arg-type]


def test_threads_and_cpu_streams_give_the_one_stream_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 4-bit program whose products are spread over 3 CPU streams (1024 x 512
    weights, rows of 1 to 4: `runtime/cpu/streams.py`), called from 8 threads x 50 calls:
    every call gives the bits of the same call on one stream."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512)).eval()
    with torch.no_grad():
        ep = export(model, (torch.randn(2, 512),), dynamic_shapes={"input": {0: Dim("b", max=16)}})
    gen = torch.Generator().manual_seed(1)
    inputs = [[torch.randn(1 + (t + c) % 4, 512, generator=gen) for c in range(CALLS)] for t in range(THREADS)]
    monkeypatch.setenv("MLXIR_CPU_STREAMS", "1")
    program = mlxir.compile(ep, quantize=mlxir.Quantize(bits=4, group_size=64), compile=False)
    one_stream = [[program(x) for x in row] for row in inputs]
    monkeypatch.setenv("MLXIR_CPU_STREAMS", "3")
    program = mlxir.compile(ep, quantize=mlxir.Quantize(bits=4, group_size=64), compile=False)
    results: list[list[torch.Tensor | None]] = [[None] * CALLS for _ in range(THREADS)]

    def work(t: int) -> None:
        for c, x in enumerate(inputs[t]):
            results[t][c] = program(x)

    assert _run_threads(work) == []
    for t in range(THREADS):
        for c in range(CALLS):
            assert torch.equal(results[t][c], one_stream[t][c]), (t, c)  # type: ignore[arg-type]
    # Compiled: a trace holds its thread's streams, so each thread traces its own.
    program = mlxir.compile(ep, quantize=mlxir.Quantize(bits=4, group_size=64), compile=True)
    same_shape = [row[0][:1].expand(2, 512).contiguous() for row in inputs]

    def traced(t: int) -> None:
        for c in range(3):
            results[t][c] = program(same_shape[t])

    assert _run_threads(traced) == []
    assert program.traces == THREADS
    monkeypatch.setenv("MLXIR_CPU_STREAMS", "1")
    for t in range(THREADS):
        reference = mlxir.compile(ep, quantize=mlxir.Quantize(bits=4, group_size=64), compile=False)(same_shape[t])
        assert all(torch.equal(results[t][c], reference) for c in range(3)), t  # type: ignore[arg-type]


def test_threads_never_lose_a_state_update() -> None:
    program = mlxir.compile(export(Accumulator(), (torch.zeros(4),)))
    # Integer-valued float32 steps: the sums are exact in any order.
    steps = [[torch.full((4,), float(1 + t * CALLS + c)) for c in range(CALLS)] for t in range(THREADS)]
    totals: list[float] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        for x in steps[t]:
            out = program(x)
            with lock:
                totals.append(float(out[0]))

    assert _run_threads(work) == []
    n = THREADS * CALLS
    assert float(np.array(program.state["total"])[0]) == n * (n + 1) / 2
    assert len(set(totals)) == n, "two calls saw the same state"
    assert max(totals) == n * (n + 1) / 2
    program.reset_state()
    assert float(program(torch.ones(4))[0]) == 1.0


# --------------------------------------------------------------------------- index values


def test_an_out_of_range_position_does_not_crash(cache_program: tuple[StaticCache, bytes], tmp_path: Path) -> None:
    _, data = cache_program
    path = tmp_path / "cache.mlxfb"
    path.write_bytes(data)
    script = textwrap.dedent(f"""
        import torch, mlxir
        program = mlxir.load({str(path)!r})
        for pos in (8, 100, 10**6, 10**9, -(10**9)):
            try:
                program(torch.randn(1, 1, 4), torch.tensor([pos]))
            except Exception:
                pass
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_attribute_text_is_parsed_in_linear_time() -> None:
    """Attributes stored as text are parsed at load: an unterminated string literal
    (xDSL 0.75's lexer backtracks exponentially on it) or deep nesting is rejected at
    once."""
    import time

    from mlxir.codegen.attributes import parse_attribute

    for text in ('"' + "a" * 10_000, "[" * 100_000, '"' + "\\n" * 5_000 + "\\"):
        start = time.perf_counter()
        with pytest.raises(mlxir.ProgramError):
            parse_attribute(text)
        assert time.perf_counter() - start < 5, text[:20]


# --------------------------------------------------------------------------- importer


class _Nonzero(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nonzero(x)


class _BoolMask(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x > 0] * 2


class _MaskedSelect(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.masked_select(x, x > 0)


class _Unique(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.unique(x)


class _Item(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = torch.count_nonzero(x).item()
        return torch.ones(n)


class _UniqueRows(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.unique(x, dim=0)


class _ComplexRope(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rotation = torch.polar(torch.ones(3), torch.arange(3.0))
        return torch.view_as_real(torch.view_as_complex(x) * rotation)


@pytest.mark.parametrize(
    ("module", "op", "why"),
    [(_UniqueRows(), "aten.unique_dim.default", "unique along a dim")],
)
def test_data_dependent_shapes_are_explained(module: nn.Module, op: str, why: str) -> None:
    from mlxir.conversions.torch_to_aten import UnsupportedOpsError

    ep = export(module, (torch.tensor([[1.0, -2.0], [0.0, 3.0], [4.0, 0.0]]),))
    with pytest.raises(UnsupportedOpsError, match=rf"(?s){op}: 1 node\(s\), first at .*test_hostile.py:\d+.*{why}"):
        mlxir.compile(ep)


@pytest.mark.parametrize("module", [_Nonzero(), _BoolMask(), _MaskedSelect(), _Unique(), _Item()])
def test_data_dependent_shapes_run_with_a_sync_point(module: nn.Module) -> None:
    """Once refused, now run (docs/semantics.md §8): the count is found at run time."""
    x = torch.tensor([[1.0, -2.0], [0.0, 3.0], [4.0, 0.0]])
    program = mlxir.compile(export(module, (x,)))
    assert program.native_unavailable is not None and "depends on values" in program.native_unavailable
    assert torch.equal(program(x), module(x))


def test_complex_rotary_embedding_runs() -> None:
    """Once refused: rotary embeddings written with complex numbers (LLaMA's original
    `torch.polar` and `view_as_complex`) run in complex64."""
    x = torch.tensor([[1.0, -2.0], [0.0, 3.0], [4.0, 0.0]])
    module = _ComplexRope()
    torch.testing.assert_close(mlxir.compile(export(module, (x,)))(x), module(x))


def test_complex_inputs_beyond_complex64_are_explained() -> None:
    from mlxir.conversions.torch_to_aten import UnsupportedDtypeError, UnsupportedOpsError

    class Twice(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    with pytest.raises((UnsupportedOpsError, UnsupportedDtypeError), match="complex64 only"):
        mlxir.compile(export(Twice(), (torch.randn(3, dtype=torch.complex128),)))


# --------------------------------------------------------------------------- determinism

_COMPILE = """
import sys, warnings
warnings.simplefilter("ignore")
import torch, mlxir
for source in sys.argv[1:]:
    data = mlxir.compile(torch.export.load(source)).to_bytes()
    open(source.replace(".pt2", ".mlxfb"), "wb").write(data)
"""


def _saved_programs(tmp_path: Path) -> list[Path]:
    """A decoder with a dynamic sequence length, a module with a mutated buffer and an
    attention block with a bool mask, saved as .pt2."""
    from mlxir.tools import demo_model

    torch.manual_seed(0)
    programs = {
        "decoder": demo_model.export_model(demo_model.build_model()),
        "cache": export(StaticCache().eval(), (torch.randn(1, 1, 4), torch.tensor([0]))),
        "attention": export(
            nn.MultiheadAttention(8, 2, batch_first=True).eval(),
            (torch.randn(1, 5, 8),) * 3,
            {"attn_mask": torch.ones(5, 5, dtype=torch.bool).tril()},
        ),
    }
    paths = []
    for name, ep in programs.items():
        path = tmp_path / f"{name}.pt2"
        torch.export.save(ep, path)
        paths.append(path)
    return paths


def test_compiling_is_deterministic_across_processes(tmp_path: Path) -> None:
    """The same ExportedProgram compiles to the same bytes in two processes (with other
    hash seeds: no set or dict order leaks into the program) and in this one, twice."""
    sources = _saved_programs(tmp_path)
    outputs = []
    for seed in ("1", "2"):
        run_dir = tmp_path / f"run{seed}"
        run_dir.mkdir()
        copies = []
        for source in sources:
            copy = run_dir / source.name
            copy.write_bytes(source.read_bytes())
            copies.append(str(copy))
        done = subprocess.run(
            [sys.executable, "-c", _COMPILE, *copies],
            capture_output=True,
            timeout=600,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        outputs.append({Path(c).stem: Path(c.replace(".pt2", ".mlxfb")).read_bytes() for c in copies})
    assert outputs[0].keys() == outputs[1].keys() == {s.stem for s in sources}
    for name in outputs[0]:
        assert outputs[0][name] == outputs[1][name], f"{name}: two processes, two programs"
    for source in sources:
        ep = torch.export.load(source)
        first, second = mlxir.compile(ep).to_bytes(), mlxir.compile(ep).to_bytes()
        assert first == second, f"{source.stem}: compiled twice in one process"
        assert first == outputs[0][source.stem], f"{source.stem}: this process and another"


# --------------------------------------------------------------------------- hand-made programs

F32, INPUT, TEMPORARY, CONSTANT = 12, 1, 0, 2  # DType.Float32, SlotKind values


def raw_program(
    slots: Sequence[tuple[int, Sequence[int]]],
    op_names: Sequence[str] = (),
    instructions: Sequence[dict[str, Any]] = (),
    inputs: Sequence[int] = (),
    outputs: Sequence[int] = (),
    globals_: Sequence[tuple[str, int]] = (),
    input_dims: Sequence[Sequence[str]] = (),
) -> bytes:
    """A `.mlxfb` written field by field with the flatc bindings: programs the serializer
    refuses to write, for the loader's own checks. Slots are (kind, shape) of float32;
    globals are (name, slot) constants with zero payloads."""
    import flatbuffers

    from mlxir.codegen.fb import Global, InputDims, Instruction, Program, Slot
    from mlxir.codegen.ops import FILE_IDENTIFIER, SCHEMA_VERSION

    b = flatbuffers.Builder(1024)

    def uints(values: Sequence[int]) -> int:
        return b.CreateNumpyVector(np.asarray(values, dtype="<u4"))

    def offsets(items: Sequence[int]) -> int:
        b.StartVector(4, len(items), 4)
        for item in reversed(items):
            b.PrependUOffsetTRelative(item)
        return b.EndVector()

    def strings(values: Sequence[str]) -> int:
        return offsets([b.CreateString(v) for v in values])

    slot_tables = []
    for kind, shape in slots:
        vector = b.CreateNumpyVector(np.asarray(shape, dtype="<i8"))
        Slot.Start(b)
        Slot.AddKind(b, kind)
        Slot.AddDtype(b, F32)
        Slot.AddShape(b, vector)
        slot_tables.append(Slot.End(b))
    instruction_tables = []
    for ins in instructions:
        fields = {k: uints(ins.get(k, ())) for k in ("operands", "results", "free")}
        names = strings(ins["result_names"]) if "result_names" in ins else None
        Instruction.Start(b)
        Instruction.AddOp(b, ins.get("op", 0))
        Instruction.AddOperands(b, fields["operands"])
        Instruction.AddResults(b, fields["results"])
        Instruction.AddFree(b, fields["free"])
        if names is not None:
            Instruction.AddResultNames(b, names)
        instruction_tables.append(Instruction.End(b))
    global_tables = []
    segment = b""
    for name, slot in globals_:
        shape = [d for d in slots[slot][1] if d >= 0]
        length = 4 * int(np.prod(shape)) if shape else 4
        offset, segment = len(segment), segment + bytes(-(-length // 64) * 64)
        name_offset = b.CreateString(name)
        Global.Start(b)
        Global.AddName(b, name_offset)
        Global.AddKind(b, 2)  # GlobalKind.Constant
        Global.AddSlot(b, slot)
        Global.AddOffset(b, offset)
        Global.AddLength(b, length)
        global_tables.append(Global.End(b))
    dims_tables = []
    for dims in input_dims:
        vector = strings(dims)
        InputDims.Start(b)
        InputDims.AddDims(b, vector)
        dims_tables.append(InputDims.End(b))
    vectors = {
        "slots": offsets(slot_tables),
        "op_names": strings(op_names),
        "instructions": offsets(instruction_tables),
        "inputs": uints(inputs),
        "outputs": uints(outputs),
        "globals": offsets(global_tables),
        "input_dims": offsets(dims_tables),
        "state": offsets([]),
        "name": b.CreateString("forward"),
    }
    Program.Start(b)
    Program.AddVersion(b, SCHEMA_VERSION)
    Program.AddName(b, vectors["name"])
    Program.AddSlots(b, vectors["slots"])
    Program.AddOpNames(b, vectors["op_names"])
    Program.AddInstructions(b, vectors["instructions"])
    Program.AddInputs(b, vectors["inputs"])
    Program.AddOutputs(b, vectors["outputs"])
    Program.AddGlobals(b, vectors["globals"])
    Program.AddState(b, vectors["state"])
    Program.AddInputDims(b, vectors["input_dims"])
    Program.AddSegmentSize(b, len(segment))
    b.FinishSizePrefixed(Program.End(b), FILE_IDENTIFIER.encode())
    data = bytes(b.Output())
    return data + bytes(-len(data) % 64) + segment


def test_raw_programs_load() -> None:
    """The helper writes programs the loader takes (so each check below is the one
    that fails)."""
    data = raw_program(
        [(INPUT, [2]), (TEMPORARY, [2])],
        ["mlx.exp"],
        [{"operands": [0], "results": [1], "result_names": ["y"]}],
        inputs=[0],
        outputs=[1],
        input_dims=[[""]],
    )
    assert np.allclose(np.array(mlxir.load(data)(mx.zeros(2))), 1.0)
    assert mlxir.load(raw_program([(CONSTANT, [3])], globals_=[("w", 0)], outputs=[0]))().shape == (3,)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"slots": [(INPUT, [2]), (TEMPORARY, [2])], "inputs": [0], "outputs": [1]}, r"program.outputs\[0\]: slot 1 holds no value at the end"),
        ({"slots": [(CONSTANT, [-1])], "globals_": [("w", 0)]}, "a global's slot must have a static shape"),
        (
            {
                "slots": [(INPUT, [2]), (TEMPORARY, [2])],
                "op_names": ["mlx.exp"],
                "instructions": [{"operands": [0], "results": [1], "result_names": ["a", "b"]}],
                "inputs": [0],
                "outputs": [1],
            },
            r"instruction #0 \(mlx.exp\): 2 result names for 1 results",
        ),
        ({"slots": [(INPUT, [2])], "inputs": [0], "outputs": [0], "input_dims": [[""], [""]]}, "input_dims has 2 entries for 1 inputs"),
        ({"slots": [(INPUT, [2])], "inputs": [0], "outputs": [0], "input_dims": [["", ""]]}, r"input_dims\[0\] has 2 dims, the input has rank 1"),
        (
            {
                "slots": [(INPUT, [2]), (TEMPORARY, [2])],
                "op_names": ["mlx.exp"],
                "instructions": [{"operands": [0], "results": [1], "free": [0]}],
                "inputs": [0],
                "outputs": [1],
            },
            "frees slot 0, which holds no temporary value",
        ),
    ],
)
def test_loader_checks(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(mlxir.ProgramError, match=message):
        mlxir.load(raw_program(**fields))
    with pytest.raises(mlxir.ProgramError):
        mlxir.codegen.deserialize(raw_program(**fields))


def test_a_buffer_that_is_not_contiguous() -> None:
    with pytest.raises(mlxir.ProgramError, match="not contiguous"):
        mlxir.codegen.read_program(memoryview(bytes(256))[::2])


QUANTIZED = """
    func.func @forward(%x: tensor<2x64xf32>) -> tensor<2x8xf32> {{
      %w = mlx.constant dense<0> : tensor<{packed}xui32>
      %s = mlx.constant dense<1.0> : tensor<{groups}xf32>
      %b = mlx.constant dense<0.0> : tensor<{groups}xf32>
      %y = mlx.quantized_matmul %x, %w, %s, %b group_size {group} bits {bits} mode "affine" transpose : tensor<2x64xf32>, tensor<{packed}xui32>, tensor<{groups}xf32>, tensor<{groups}xf32> -> tensor<2x8xf32>
      func.return %y : tensor<2x8xf32>
    }}"""


@pytest.mark.parametrize(
    ("packed", "groups", "group", "bits", "rule"),
    [
        ("8x4", "8x2", 32, 4, "x's last dim"),  # a packed shape that holds 32 values a row, not 64
        ("8x8", "8x2", 32, 8, "x's last dim"),  # 8 bits claimed for a 4-bit payload
        ("8x8", "8x2", 64, 4, "scales"),  # a group size the scales do not have
        ("8x8", "8x2", 48, 4, "group_size"),  # a group size MLX lacks
        ("8x8", "8x2", 32, 7, "bits"),  # bits MLX lacks
    ],
)
def test_lying_quantization_metadata_is_a_program_error(
    packed: str, groups: str, group: int, bits: int, rule: str
) -> None:
    """A program whose packed weights, scales, bits or group size disagree is refused at
    load, naming the op and the rule; loaded unverified, MLX's own check is a clean error
    at run time, not a crash."""
    data = program_of(QUANTIZED.format(packed=packed, groups=groups, group=group, bits=bits))
    with pytest.raises(mlxir.ProgramError, match=rf"'mlx.quantized_matmul' op .*{rule}"):
        mlxir.load(data)
    program = mlxir.load(data, verify=False)
    with pytest.raises((RuntimeError, mlxir.ProgramError), match="quantized_matmul"):
        program(mx.zeros((2, 64)))


QUANTIZED_TAKE = """
    func.func @forward(%ids: tensor<3xi64>) -> tensor<3x64xf32> {{
      %w = mlx.constant dense<0> : tensor<{packed}xui32>
      %s = mlx.constant dense<1.0> : tensor<{groups}xf32>
      %b = mlx.constant dense<0.0> : tensor<{groups}xf32>
      %e = mlx.quantized_take %w, %s, %b indices %ids : tensor<3xi64> group_size {group} bits {bits} mode "affine" : tensor<{packed}xui32>, tensor<{groups}xf32>, tensor<{groups}xf32> -> tensor<3x64xf32>
      func.return %e : tensor<3x64xf32>
    }}"""


@pytest.mark.parametrize(
    ("packed", "groups", "group", "bits"),
    [
        ("16x4", "16x2", 32, 4),  # a packed shape that holds 32 values a row, not 64
        ("16x8", "16x2", 32, 8),  # 8 bits claimed for a 4-bit payload
        ("16x8", "16x2", 64, 4),  # a group size the scales do not have
        ("16x8", "16x2", 48, 4),  # a group size MLX lacks
    ],
)
def test_lying_quantized_embedding_metadata_is_a_program_error(packed: str, groups: str, group: int, bits: int) -> None:
    """The same for a quantized embedding table (`mlx.quantized_take`): refused at load
    naming the op; loaded unverified, a clean error at run time."""
    data = program_of(QUANTIZED_TAKE.format(packed=packed, groups=groups, group=group, bits=bits))
    with pytest.raises(mlxir.ProgramError, match=r"'mlx.quantized_take' op "):
        mlxir.load(data)
    program = mlxir.load(data, verify=False)
    with pytest.raises((RuntimeError, mlxir.ProgramError), match="quantized_take"):
        program(mx.array([0, 5, 15], dtype=mx.int64))
