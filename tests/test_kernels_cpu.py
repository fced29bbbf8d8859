"""Runtime kernels' CPU-specific paths: products spread over CPU streams
(`MLXIR_CPU_STREAMS`) and cut into blocks of the weight's rows (and the size
thresholds that choose them), quantized products dequantized in blocks or spread over
streams, and the CPU composition of attention: each bit for bit against MLX's own
product or composition (the CPU target's rope is a pass: `tests/test_cpu_target.py`), and
`exp`, `sigmoid` and `erf` of many values by a polynomial, against the exact values.

These are the CPU backend's paths without its native kernels, as a machine that cannot
build them runs (every test here suspends them: `runtime/cpu/native.suspended()`); the
native kernels' own tests, and which path the backend takes with them, are in
`tests/test_native_*.py`."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
from kernel_helpers import MX_OF, check_relative_to_max

from mlxir.evaluator import KERNELS
from mlxir.evaluator import arrays as dtypes
from mlxir.runtime.cpu import fast, native, polynomial, products, streams
from mlxir.runtime.cpu.backend import CPU


@pytest.fixture(autouse=True)
def _without_native_kernels() -> Iterator[None]:
    with native.suspended():
        yield

# --------------------------------------------------------------------------- CPU streams


def test_cpu_streams_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """`MLXIR_CPU_STREAMS` sets the count (1, or a malformed value, turns spreading
    off), `fewer_cpu_streams` lowers it in a block, and the default CPU stream comes
    first; small weights stay whole (`CPU_STREAM_MIN_ELEMENTS` per block)."""

    monkeypatch.setenv("MLXIR_CPU_STREAMS", "4")
    four = streams.cpu_streams()
    assert len(four) == 4 and four[0] == mx.default_stream(mx.cpu) and len(set(map(str, four))) == 4
    with streams.fewer_cpu_streams(2):
        assert streams.cpu_streams() == four[:2]
        with streams.fewer_cpu_streams(1):
            assert streams.cpu_streams() == ()
    assert streams.cpu_streams() == four
    for text in ("1", "0", "-2", "two", ""):
        monkeypatch.setenv("MLXIR_CPU_STREAMS", text)
        assert streams.cpu_streams() == ()
    monkeypatch.delenv("MLXIR_CPU_STREAMS")
    assert 1 <= streams.configured_count() <= streams.MAX_CPU_STREAMS
    least = products.CPU_STREAM_MIN_ELEMENTS
    assert products._row_blocks(100, 2 * least - 1, 4) == [slice(0, 100)]
    assert products._row_blocks(100, 2 * least, 4) == [slice(0, 50), slice(50, 100)]
    assert products._row_blocks(3, 100 * least, 8) == [slice(0, 1), slice(1, 2), slice(2, 3)]
    assert products._row_blocks(0, 0, 8) == [slice(0, 0)]


def test_output_blocks_fit_the_small_kernels() -> None:
    """The weight's rows cut into the fewest near-equal blocks of at most
    `CPU_SMALL_PRODUCT_OUTPUTS` outputs and `CPU_SMALL_PRODUCT_MACS` multiply-adds."""
    blocks = products._output_blocks(1, 32000, 512)
    assert len(blocks) == 27 and blocks[0].start == 0 and blocks[-1].stop == 32000
    assert all(a.stop == b.start for a, b in zip(blocks, blocks[1:]))
    assert max(b.stop - b.start for b in blocks) <= 1200
    assert products._output_blocks(1, 1408, 512) == [slice(0, 704), slice(704, 1408)]
    assert products._output_blocks(1, 512, 512) == [slice(0, 512)]
    for rows, columns, depth in ((4, 16384, 512), (2, 1024, 2048), (7, 300, 4096)):
        sizes = [b.stop - b.start for b in products._output_blocks(rows, columns, depth)]
        assert sum(sizes) == columns and max(sizes) - min(sizes) <= 1
        assert max(sizes) * rows <= 1200 and max(sizes) * rows * depth <= 10**6


@pytest.mark.parametrize("op", ["mlx.matmul", "mlx.addmm"])
def test_weight_blocked_product_is_the_blocks_products(op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A float32 product of few rows by `w.T` (4000 x 512) runs as products of blocks
    of `w`'s rows, each run of consecutive blocks on its own CPU stream (3 here,
    `MLXIR_CPU_STREAMS=3`), concatenated: the same bits as those blocks' products
    computed one by one on one stream, and on 1 stream; within f32 rounding (1e-5
    relative, 1e-4 absolute on outputs of size about 20) of the one product. addmm's
    `c` is cut with the weight unless it broadcasts. A small product keeps its blocks
    on fewer streams. float16, 8 rows, or a depth under 32 stay one product."""
    mx.random.seed(3)
    w = mx.random.normal((4000, 512))
    bias = mx.random.normal((4000,))
    props: dict[str, object] = {} if op == "mlx.matmul" else {"alpha": 0.5, "beta": 2.0}
    whole = KERNELS[op](props, [mx.float32])
    blocked = products.weight_blocked_product(op, whole)
    calls: list[str] = []
    original = mx.matmul if op == "mlx.matmul" else mx.addmm

    def recording(*args: Any, **kwargs: Any) -> mx.array:
        calls.append(str(mx.default_stream(mx.cpu)))
        return original(*args, **kwargs)

    def operands(x: mx.array, weight: mx.array, c: mx.array) -> list[mx.array]:
        return [x, weight] if op == "mlx.matmul" else [c, x, weight]

    for shape, c in (((1, 512), bias), ((3, 512), bias), ((2, 3, 512), mx.array([0.25]))):
        x = mx.random.normal(shape)
        rows = x.size // 512
        blocks = products._output_blocks(rows, 4000, 512)
        expected = mx.concatenate(
            [
                whole(operands(x, w[b].T, c if c.size == 1 else c[b]))[0]
                for b in blocks
            ],
            axis=-1,
        )
        monkeypatch.setattr(mx, op.removeprefix("mlx."), recording)
        calls.clear()
        monkeypatch.setenv("MLXIR_CPU_STREAMS", "3")
        (spread,) = blocked(operands(x, w.T, c))
        assert len(calls) == len(blocks) > 3 and len(set(calls)) == 3, calls
        assert calls == sorted(calls, key=calls.index)  # each stream's blocks in a run
        monkeypatch.setenv("MLXIR_CPU_STREAMS", "1")
        (single,) = blocked(operands(x, w.T, c))
        monkeypatch.setattr(mx, op.removeprefix("mlx."), original)
        assert mx.array_equal(spread, expected).item() and mx.array_equal(single, expected).item()
        (reference,) = whole(operands(x, w.T, c))
        assert spread.shape == reference.shape
        assert mx.allclose(spread, reference, rtol=1e-5, atol=1e-4).item()
    monkeypatch.setattr(mx, op.removeprefix("mlx."), recording)
    # Under CPU_SPREAD_PRODUCT_MACS a stream each: 1 row by 1408 x 256 runs its two
    # blocks on one stream; 4 rows (1.4 million multiply-adds) on two.
    small = mx.random.normal((1408, 256))
    monkeypatch.setenv("MLXIR_CPU_STREAMS", "3")
    for rows, stream_count in ((1, 1), (4, 2)):
        calls.clear()
        blocked(operands(mx.random.normal((rows, 256)), small.T, bias[:1408]))
        assert len(calls) == len(products._output_blocks(rows, 1408, 256)) > 1
        assert len(set(calls)) == stream_count, calls
    for x, weight in (
        (mx.random.normal((1, 512)).astype(mx.float16), w.T.astype(mx.float16)),
        (mx.random.normal((8, 512)), w.T),
        (mx.random.normal((1, 16)), mx.random.normal((4000, 16)).T),
    ):
        calls.clear()
        blocked(operands(x, weight, bias.astype(x.dtype)))
        assert len(calls) == 1


# One rounding of each element type, relative to the largest output: what a BLAS
# summing in another order may change.
ROUNDING_OF = {"f32": 2**-20, "f16": 2**-10, "bf16": 2**-7}


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("bits", [2, 4, 8])
def test_cpu_dequantized_product_in_blocks_is_mlx_dequantize(
    bits: int, ty: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CPU path for many rows unpacks 2/4/8-bit codes as bytes and multiplies by
    blocks of output rows (`products._dequantized_product`): the same values as
    `mx.dequantize` bit for bit, and the dot products of one matmul with it, whole
    blocks (a small block size makes 192 rows three blocks) and a partial last block
    (200 rows) alike. A block of rows may go through another BLAS micro-kernel than the
    whole matrix, whose sums round differently (this machine gives the same bits, a CI
    machine's BLAS did not): within 2^-20 of the largest output in f32, and within one
    rounding of the element type (2^-10 f16, 2^-7 bf16) in the half types."""
    monkeypatch.setattr(products, "CPU_DEQUANTIZED_CHUNK", 64 * 256 * MX_OF[ty].size)
    dtype = MX_OF[ty]
    for rows in (192, 200):
        mx.random.seed(3)
        x = mx.random.normal((3, 7, 256)).astype(dtype)
        dense = mx.random.normal((rows, 256)).astype(dtype)
        w, scales, biases = mx.quantize(dense, group_size=64, bits=bits)
        whole = mx.dequantize(w, scales, biases, group_size=64, bits=bits, dtype=dtype)
        lean = products._affine_dequantize(w, scales, biases, bits, 64, dtype)
        assert mx.array_equal(lean, whole).item()
        product = products._dequantized_product(x, w, scales, biases, bits, 64)
        reference = mx.matmul(x, whole.T)
        check_relative_to_max(
            product.astype(mx.float32), dtypes.to_numpy(reference.astype(mx.float32)), ROUNDING_OF[ty]
        )


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(("mode", "bits"), [("affine", 2), ("affine", 4), ("affine", 8), ("mxfp4", 4)])
def test_quantized_matmul_over_cpu_streams_is_one_product_bitwise(
    mode: str, bits: int, ty: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Few rows of `x` by a transposed weight of 1024 x 512 on 3 CPU streams
    (`MLXIR_CPU_STREAMS=3`, whatever this machine's cores): three products of blocks of
    the weight's rows (341, 341 and 342 rows), each on its own
    stream, whose concatenation has the bits of one `mx.quantized_matmul`. A
    non-transposed weight (its rows would split the sums) stays one product."""
    group_size = 32 if mode == "mxfp4" else 64
    dtype = MX_OF[ty]
    mx.random.seed(5)
    dense = mx.random.normal((1024, 512)).astype(dtype)
    w, scales, *rest = mx.quantize(dense, group_size=group_size, bits=bits, mode=mode)
    biases = rest[0] if rest else None
    operands = [w, scales] if biases is None else [w, scales, biases]
    props = {"group_size": group_size, "bits": bits, "mode": mode, "transpose": True}
    calls: list[Any] = []
    original = mx.quantized_matmul

    def recording(*args: Any, **kwargs: Any) -> mx.array:
        calls.append(kwargs.get("stream"))
        return original(*args, **kwargs)

    monkeypatch.setattr(mx, "quantized_matmul", recording)
    for rows in ((1, 512), (3, 512), (2, 3, 512)):
        x = mx.random.normal(rows).astype(dtype)
        reference = original(x, *operands, transpose=True, group_size=group_size, bits=bits, mode=mode)
        calls.clear()
        monkeypatch.setenv("MLXIR_CPU_STREAMS", "3")
        (spread,) = CPU.kernel_factory("mlx.quantized_matmul")(props, [dtype])([x, *operands])
        assert len(calls) == 3 and len({str(stream) for stream in calls}) == 3, calls
        assert spread.shape == reference.shape and mx.array_equal(spread, reference).item()
        calls.clear()
        monkeypatch.setenv("MLXIR_CPU_STREAMS", "1")
        (single,) = CPU.kernel_factory("mlx.quantized_matmul")(props, [dtype])([x, *operands])
        assert len(calls) == 1 and mx.array_equal(single, reference).item()
    if mode == "affine":
        monkeypatch.setenv("MLXIR_CPU_STREAMS", "3")
        wn, sn, bn = mx.quantize(dense.T, group_size=group_size, bits=bits)
        x = mx.random.normal((1, 512)).astype(dtype)
        calls.clear()
        (plain,) = CPU.kernel_factory("mlx.quantized_matmul")({**props, "transpose": False}, [dtype])([x, wn, sn, bn])
        assert len(calls) == 1
        reference = original(x, wn, sn, bn, transpose=False, group_size=group_size, bits=bits)
        assert mx.array_equal(plain, reference).item()


# --------------------------------------------------------------------------- CPU compositions


def test_cpu_sdpa_is_mlx_cpu_composition() -> None:
    """The CPU attention (`fast.cpu_sdpa`, grouped queries as one matrix per K/V
    head) gives MLX's own CPU composition's values: grouped and not, one and several
    query rows, bool masks shared by the heads or per head, additive masks, none. The
    same bits with this machine's OpenBLAS; a BLAS may sum a differently shaped product
    in another order (a CI machine's did, and MKL does: 1.3e-6), so within 2^-18 of the
    largest output, a few roundings."""
    rng = np.random.default_rng(6)
    with mx.stream(mx.cpu):
        for (heads, kv_heads), rows, slots, mask_kind in itertools.product(
            [(8, 4), (4, 4), (8, 1)], [1, 5], [7, 96], ["none", "bool", "bool per head", "additive"]
        ):
            q, k, v = (
                mx.array(rng.standard_normal((2, h, n, 16)).astype(np.float32))
                for h, n in [(heads, rows), (kv_heads, slots), (kv_heads, slots)]
            )
            mask = {
                "none": None,
                "bool": mx.array(rng.random((2, 1, rows, slots)).astype(np.float32)) > 0.3,
                "bool per head": mx.array(rng.random((2, heads, rows, slots)).astype(np.float32)) > 0.3,
                "additive": mx.array(rng.standard_normal((2, 1, rows, slots)).astype(np.float32)),
            }[mask_kind]
            expected = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.25, mask=mask)
            got = fast.cpu_sdpa(q, k, v, scale=0.25, mask=mask)
            check_relative_to_max(got, np.array(expected), 2**-18)


# --------------------------------------------------------------------------- exp, sigmoid, erf

_EXACT: dict[str, Any] = {
    "mlx.exp": np.exp,
    "mlx.sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "mlx.erf": np.vectorize(math.erf),
}


@pytest.mark.parametrize("op", sorted(_EXACT))
@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
def test_cpu_transcendentals_of_many_values_are_the_polynomial(op: str, ty: str) -> None:
    """From `POLYNOMIAL_MIN_ELEMENTS` values on, the CPU's `exp`, `sigmoid` and `erf`
    are the `mx.compile`d formula of `runtime/cpu/polynomial.py` (the same bits), of a
    contiguous operand and of a transposed view; below, MLX's kernel (the same bits).
    Against the exact values (float64 of the same inputs): `exp` within 2^-22 relative
    (2 float32 ulp), `sigmoid` and `erf` within 2e-7 absolute in float32; float16 and
    bfloat16, computed through float32, within one unit of their last place (2^-10,
    2^-7 relative to the value, or to 1 for `sigmoid`/`erf`)."""
    rng = np.random.default_rng(7)
    dtype = MX_OF[ty]
    kernel = CPU.kernel_factory(op)({}, [dtype])  # type: ignore[misc]
    generic = KERNELS[op]({}, [dtype])
    span = 10.0 if ty == "f16" else 80.0  # float16's exp overflows past 11
    size = polynomial.POLYNOMIAL_MIN_ELEMENTS
    x = mx.array(rng.uniform(-span, span, (64, size // 32)).astype(np.float32)).astype(dtype)
    for operand in (x, x.T):
        (got,) = kernel([operand])
        assert got.dtype == dtype and got.shape == operand.shape
        assert mx.array_equal(got, polynomial._COMPILED[op](operand)).item()
        values = np.array(got.astype(mx.float32)).astype(np.float64)
        exact = _EXACT[op](np.array(operand.astype(mx.float32)).astype(np.float64))
        relative_to = np.abs(exact) if op == "mlx.exp" else 1.0
        bound = {"f32": 2.0**-22 if op == "mlx.exp" else 2e-7, "f16": 2.0**-10, "bf16": 2.0**-7}[ty]
        finite = np.isfinite(exact) & (exact < float(mx.finfo(dtype).max))
        assert np.all(np.abs(values - exact)[finite] <= bound * np.broadcast_to(relative_to, exact.shape)[finite])
    small = x[:1, : size // 2 - 1]
    (got,) = kernel([small])
    assert mx.array_equal(got, generic([small])[0]).item()


def test_cpu_transcendentals_keep_integer_operands_and_run_natively() -> None:
    """An integer operand keeps MLX's kernel; a program with a dynamic length computes
    the polynomial on long inputs and MLX's kernel on short ones, interpreted and as
    one `mx.compile`d trace alike (the same bits)."""
    ints = mx.arange(size := polynomial.POLYNOMIAL_MIN_ELEMENTS, dtype=mx.int32) % 5
    (got,) = CPU.kernel_factory("mlx.exp")({}, [mx.float32])([ints])  # type: ignore[misc]
    assert mx.array_equal(got, mx.exp(ints)).item()
    import torch

    import mlxir

    class SiLU(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.silu(x) + torch.erf(x)

    # Seeded: MLX's own sigmoid and erf (the short rows) differ from torch's by up to
    # 4.9e-7 on a value of about 2, past the tolerance in about 1 draw of 100.
    torch.manual_seed(0)
    exported = torch.export.export(SiLU(), (torch.randn(4, 1408),), dynamic_shapes=({0: torch.export.Dim("n")},))
    interpreted, compiled = (mlxir.compile(exported, compile=mode) for mode in (False, True))
    for rows in (1, size // 1408 + 1, 128):
        x = torch.randn(rows, 1408)
        expected = SiLU()(x)
        got = interpreted(x)
        assert torch.equal(compiled(x), got)
        torch.testing.assert_close(got, expected, atol=4e-7, rtol=4e-7)
