"""The native quantized product (`native/kernels/quantized.cpp`): `x @ dequantize(w).T` on
MLX's affine format, against float64 (the codes unpacked and dequantized in float64)
and `mx.quantized_matmul`, for every code width, group size and dtype, over ragged
shapes (one row, odd N, a row's last block of codes partly filled, long rows) on both
of its paths (few rows: decoded per row; many: dequantized tiles), strided and
transposed operands, every instruction-set path this CPU runs, and 1 and 2 threads
(the same bits whatever the thread count); then the CPU backend's choice of it and of
the native matvec (`runtime/cpu/products.py`).

`python tests/test_native_quantized.py` times it against `mx.quantized_matmul` and the
CPU backend's other ways (`products.py`'s measurements)."""

from __future__ import annotations

import mlxir  # isort: skip  (before mlx.core: the timings' MLX products run on the machine's BLAS)
import functools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
from native_support import bits_equal, float64, host_isas, isa, kernels, relative_error, threads

DTYPES = [mx.float32, mx.float16, mx.bfloat16]
BITS = [2, 3, 4, 6, 8]
GROUPS = [32, 64, 128]
# rows of x, rows of w, groups per row: one group; odd N under one 8-row block; a
# row's last block of codes partly filled (2 and 3 bits in groups of 32); the tile
# path (4 rows and more) with ragged tiles; a long weight past the prefetch distance;
# panels of 32 rows (AVX-512, 32 rows and more) with a last panel of one row, and x's
# rows cut into two chunks of the pool (256 rows each) with a last panel of 12.
SHAPES = [(1, 9, 1), (3, 37, 3), (2, 70, 5), (5, 13, 2), (9, 50, 4), (1, 777, 8), (33, 20, 3), (300, 29, 2)]
# Each output rounded once to the element type, relative to the largest output.
UNIT_ROUNDOFF = {mx.float32: 0.0, mx.float16: 2.0**-11, mx.bfloat16: 2.0**-8}


def codes_of(w: mx.array, bits: int, depth: int) -> np.ndarray:
    """The codes of each row of a packed matrix: MLX's formats (words of 32 / bits codes,
    or runs of 3 bytes holding 8 three-bit or 4 six-bit codes) are all the row's bytes
    read as one little-endian bit string, code j at bits [j * bits, (j + 1) * bits)."""
    rows = np.array(w).view(np.uint8).reshape(w.shape[0], -1)
    stream = np.unpackbits(rows, axis=1, bitorder="little")[:, : depth * bits]
    return stream.reshape(w.shape[0], depth, bits).astype(np.int64) @ (1 << np.arange(bits))


def dequantized64(w: mx.array, scales: mx.array, biases: mx.array, bits: int, group_size: int) -> np.ndarray:
    depth = scales.shape[1] * group_size
    codes = codes_of(w, bits, depth).reshape(w.shape[0], -1, group_size)
    matrix = codes * float64(scales)[..., None] + float64(biases)[..., None]
    return matrix.reshape(w.shape[0], depth)


@functools.cache
def case(bits: int, group_size: int, dtype: mx.Dtype, shape: tuple[int, int, int]) -> tuple[Any, ...]:
    """x, w, scales, biases, the float64 product and MLX's, made once for every path."""
    rows, outputs, groups = shape
    depth = groups * group_size
    kx, kw = mx.random.split(mx.random.key(bits * 1000 + group_size + rows * 7 + outputs))
    x = mx.random.normal((rows, depth), key=kx).astype(dtype)
    w, scales, biases = mx.quantize(mx.random.normal((outputs, depth), key=kw).astype(dtype), group_size=group_size, bits=bits)
    reference = float64(x) @ dequantized64(w, scales, biases, bits, group_size).T
    theirs = mx.quantized_matmul(x, w, scales, biases, group_size=group_size, bits=bits)
    return x, w, scales, biases, reference, theirs


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("group_size", GROUPS)
@pytest.mark.parametrize("bits", BITS)
def test_quantized_matmul_matches_float64_and_mlx(path: str, bits: int, group_size: int, dtype: mx.Dtype) -> None:
    module = kernels()
    for shape in SHAPES:
        x, w, scales, biases, reference, theirs = case(bits, group_size, dtype, shape)
        with isa(path):
            one = module.quantized_matmul(x, w, scales, biases, group_size=group_size, bits=bits)
            mx.eval(one)
            with threads(2):
                two = module.quantized_matmul(x, w, scales, biases, group_size=group_size, bits=bits)
                mx.eval(two)
        assert one.dtype == theirs.dtype and one.shape == theirs.shape
        assert bits_equal(one, two), f"{shape}: the result depends on the thread count"
        error, mlx_error = relative_error(one, reference), relative_error(theirs, reference)
        # float32 sums: 1e-5 of the largest output, and no worse than MLX's own op (which
        # sums the same products in another order) beyond a few float32 roundings.
        limit = 1e-5 + UNIT_ROUNDOFF[dtype]
        assert error <= limit, f"{shape}: {error:.3g} against float64 (MLX's own: {mlx_error:.3g})"
        assert error <= max(2 * mlx_error, 1e-6) + UNIT_ROUNDOFF[dtype], f"{shape}: {error:.3g}, MLX {mlx_error:.3g}"


@pytest.mark.parametrize("path", host_isas())
def test_quantized_matmul_long_rows_and_both_paths_per_row_count(path: str) -> None:
    """K = 8192 (many blocks of the layout's positions), and row counts on each side of
    every path's threshold: decoding (up to 3 rows), dot products of the tile (4 to 31)
    and panels (32 on, AVX-512), each row within float32 rounding of float64."""
    module = kernels()
    for bits, group_size in ((4, 64), (3, 32), (6, 128)):
        kx, kw = mx.random.split(mx.random.key(bits))
        x = mx.random.normal((40, 8192), key=kx)
        w, scales, biases = mx.quantize(mx.random.normal((67, 8192), key=kw), group_size=group_size, bits=bits)
        reference = float64(x) @ dequantized64(w, scales, biases, bits, group_size).T
        with isa(path):
            for rows in (1, 3, 4, 9, 31, 32, 40):
                result = module.quantized_matmul(x[:rows], w, scales, biases, group_size=group_size, bits=bits)
                assert relative_error(result, reference[:rows]) <= 1e-5, (bits, rows)


@pytest.mark.parametrize("path", host_isas())
def test_quantized_matmul_reads_strided_operands_and_mixed_dtypes(path: str) -> None:
    """x as every other row of a shifted view and as a transposed view, the scales and
    biases as transposed views, a 1-D x, and the dtypes MLX mixes (x float16 with
    float32 scales: a float32 result; x bfloat16 with float16 scales: float32)."""
    module = kernels()
    kx, kw = mx.random.split(mx.random.key(11))
    wide = mx.random.normal((8, 300), key=kx)
    w, scales, biases = mx.quantize(mx.random.normal((45, 256), key=kw), group_size=64, bits=4)
    matrix = dequantized64(w, scales, biases, 4, 64)
    scales_t, biases_t = (mx.array(np.ascontiguousarray(np.array(a).T)).T for a in (scales, biases))
    transposed = mx.array(np.ascontiguousarray(np.array(wide[:3, :256]).T)).T
    with isa(path):
        for x in (wide[::2, 7:263], transposed, wide[0, :256]):
            result = module.quantized_matmul(x, w, scales_t, biases_t, group_size=64, bits=4)
            assert relative_error(result, float64(x) @ matrix.T) <= 1e-5
        for x_dtype, s_dtype in ((mx.float16, mx.float32), (mx.bfloat16, mx.float16), (mx.float32, mx.bfloat16)):
            x = wide[:2, :256].astype(x_dtype)
            s, b = scales.astype(s_dtype), biases.astype(s_dtype)
            result = module.quantized_matmul(x, w, s, b, group_size=64, bits=4)
            theirs = mx.quantized_matmul(x, w, s, b, group_size=64, bits=4)
            reference = float64(x) @ dequantized64(w, s, b, 4, 64).T
            assert result.dtype == theirs.dtype
            assert relative_error(result, reference) <= 1e-5 + UNIT_ROUNDOFF[result.dtype]


def test_quantized_matmul_keeps_leading_dimensions_and_traces_in_compile() -> None:
    module = kernels()
    x = mx.random.normal((2, 3, 128), key=mx.random.key(3))
    w, scales, biases = mx.quantize(mx.random.normal((10, 128), key=mx.random.key(4)), group_size=32, bits=2)
    compiled = mx.compile(lambda a: module.quantized_matmul(a, w, scales, biases, group_size=32, bits=2) * 2)
    result = compiled(x)
    assert result.shape == (2, 3, 10)
    reference = 2 * (float64(x) @ dequantized64(w, scales, biases, 2, 32).T)
    assert relative_error(result, reference) <= 1e-5
    empty = module.quantized_matmul(mx.zeros((0, 128)), w, scales, biases, group_size=32, bits=2)
    assert empty.shape == (0, 10)


def _operands(bits: int = 4, group_size: int = 64, outputs: int = 4, depth: int = 128) -> list[mx.array]:
    return list(mx.quantize(mx.ones((outputs, depth)), group_size=group_size, bits=bits))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bits": 5}, "bits must be"),
        ({"group_size": 16}, "group_size must be"),
        ({"x": mx.zeros((1, 128), dtype=mx.int32)}, "x must be float32"),
        ({"x": mx.zeros((1, 64))}, "K = w.shape"),
        ({"w": mx.zeros((2, 4, 16), dtype=mx.uint32)}, "2-D uint32"),
        ({"w": mx.zeros((4, 16), dtype=mx.int32)}, "2-D uint32"),
        ({"scales": mx.zeros((4, 3))}, "scales and biases must be \\[N"),
        ({"biases": mx.zeros((4, 2), dtype=mx.int32)}, "scales and biases must be float32"),
    ],
)
def test_quantized_matmul_refuses_what_it_cannot_compute(change: dict[str, Any], message: str) -> None:
    module = kernels()
    w, scales, biases = _operands()
    arguments: dict[str, Any] = {"x": mx.zeros((1, 128)), "w": w, "scales": scales, "biases": biases,
                                 "group_size": 64, "bits": 4, **change}
    with pytest.raises(ValueError, match=message):
        module.quantized_matmul(
            arguments["x"], arguments["w"], arguments["scales"], arguments["biases"],
            group_size=arguments["group_size"], bits=arguments["bits"],
        )


# --------------------------------------------------------------------------- integer activations


def int8_paths() -> list[str]:
    """Every integer path this CPU runs: AVX-512 with VNNI, and without it (on a CPU
    with it, `avx512-novnni`), AVX2, portable."""
    paths = host_isas()
    return [*paths, "avx512-novnni"] if "avx512" in paths else paths


def fake_quantized64(x: mx.array, group_size: int, activation_bits: int) -> np.ndarray:
    """x' of `mlx.quantized_matmul`'s `activation_bits` (the generic kernel's), in float64."""
    from mlxir.evaluator.linalg import quantized_activations

    return float64(quantized_activations(x, group_size, activation_bits))


@pytest.mark.parametrize("path", int8_paths())
@pytest.mark.parametrize("activation_bits", [8, 16])
@pytest.mark.parametrize("bits", BITS)
def test_quantized_activations_are_the_exact_product_of_the_generic_x(path: str, bits: int, activation_bits: int) -> None:
    """`activation_bits`: the product equals float64's of the generic kernel's x' (the
    same q and scales) within float32 rounding, on the integer paths (2, 4, 8 bits,
    fewer than 4 rows) and the exact kernel on x' (the rest), every group size, dtype
    and instruction set, the same bits on 1 and 2 threads."""
    module = kernels()
    for group_size in GROUPS:
        for dtype in DTYPES:
            for shape in SHAPES:
                x, w, scales, biases, _, _ = case(bits, group_size, dtype, shape)
                reference = fake_quantized64(x, group_size, activation_bits) @ dequantized64(w, scales, biases, bits, group_size).T
                arguments = {"group_size": group_size, "bits": bits, "activation_bits": activation_bits}
                with isa(path):
                    one = module.quantized_matmul(x, w, scales, biases, **arguments)
                    mx.eval(one)
                    with threads(2):
                        two = module.quantized_matmul(x, w, scales, biases, **arguments)
                        mx.eval(two)
                assert one.dtype == dtype and bits_equal(one, two), (group_size, dtype, shape)
                error = relative_error(one, reference)
                assert error <= 5e-6 + UNIT_ROUNDOFF[dtype], f"{group_size} {dtype} {shape}: {error:.3g}"


def test_int8_activations_error_against_the_exact_product() -> None:
    """The approximation's own error: one row by 3072 x 1024, 4 bits, groups of 64, x
    normal, against float64 of the exact x (`products.NATIVE_INT8_ERROR`)."""
    from mlxir.runtime.cpu import products

    module = kernels()
    kx, kw = mx.random.split(mx.random.key(21))
    x = mx.random.normal((8, 1024), key=kx)
    w, scales, biases = mx.quantize(mx.random.normal((3072, 1024), key=kw) * 0.02, group_size=64, bits=4)
    reference = float64(x) @ dequantized64(w, scales, biases, 4, 64).T
    for rows in (1, 8):  # the integer path, and the exact kernel on x'
        error = relative_error(
            module.quantized_matmul(x[:rows], w, scales, biases, group_size=64, bits=4, activation_bits=8), reference[:rows]
        )
        print(f"int8 activations, {rows} rows: {error:.3g} of the largest output")
        assert 1e-4 < error <= products.NATIVE_INT8_ERROR


def test_cpu_backend_runs_the_approximate_product() -> None:
    """The CPU's kernel for `activation_bits 8` is the native op's (its bits); with the
    native kernels suspended, the generic composition (the evaluator's kernel, its bits)."""
    from mlxir.evaluator import KERNELS
    from mlxir.runtime.cpu import native, products

    module = kernels()
    w, scales, biases = mx.quantize(mx.random.normal((96, 256), key=mx.random.key(5)), group_size=64, bits=4)
    props: dict[str, object] = {"group_size": 64, "bits": 4, "mode": "affine", "transpose": True, "activation_bits": 8}
    kernel = products.KERNELS["mlx.quantized_matmul"](props, [mx.float32])
    generic = KERNELS["mlx.quantized_matmul"](props, [mx.float32])
    x = mx.random.normal((1, 256), key=mx.random.key(1))
    (result,) = kernel([x, w, scales, biases])
    assert bits_equal(result, module.quantized_matmul(x, w, scales, biases, group_size=64, bits=4, activation_bits=8))
    with native.suspended():
        (suspended,) = kernel([x, w, scales, biases])
    assert bits_equal(suspended, generic([x, w, scales, biases])[0])
    assert relative_error(result, float64(suspended)) <= 1e-5


@pytest.mark.whole_program
def test_int8_llama_generates_within_the_documented_error() -> None:
    """A tiny Llama at 4 bits (groups of 64) with `cpu-int8-activations` (and with
    `mlxir.Quantize(activation_bits=8)`, which runs it after quantizing): every product
    has activation_bits 8, and the first step's logits are within the measured error
    of the exact 4-bit program's (`products.NATIVE_INT8_ERROR`, per product; a few
    layers compound it), on 12 prompt tokens."""
    import torch
    from llm_models import build_model

    from mlxir.runtime.cpu import products
    from mlxir.tools import llm

    torch.manual_seed(0)
    model = build_model("llama")
    model.generation_config.eos_token_id = None
    exact_pipeline = "lower-to-mlx{target=cpu},quantize-weights{bits=4 group-size=64}"
    exact = llm.compile_llm(model, pipeline=exact_pipeline)
    int8 = llm.compile_llm(model, pipeline=exact_pipeline + ",cpu-int8-activations")
    requested = llm.compile_llm(model, quantize=mlxir.Quantize(bits=4, group_size=64, activation_bits=8))
    for program in (int8, requested):
        products_of = [i for i in program.program.info.instructions if i.op == "mlx.quantized_matmul"]
        assert products_of and all(i.props.get("activation_bits") == 8 for i in products_of)
    ids = mx.array(torch.randint(3, 256, (1, 12), generator=torch.Generator().manual_seed(3)).numpy())
    first = [
        next(iter(llm.stream_tokens(program, ids, max_new_tokens=1)))[1] for program in (exact, int8, requested)
    ]
    reference = float64(first[0])
    error = relative_error(first[1], reference)
    print(f"first step's logits: {error:.3g} of the largest")
    assert 0 < error <= 3 * products.NATIVE_INT8_ERROR
    # `Quantize(activation_bits=8)` is the pass after quantize-weights, bit for bit
    assert bits_equal(first[2], first[1])


# --------------------------------------------------------------------------- the CPU backend's choice


def test_cpu_quantized_matmul_runs_the_native_kernel_where_it_covers_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU's `mlx.quantized_matmul` gives the native kernel's bits for a transposed
    affine weight, at one row and at many; a non-transposed weight, an mxfp4 one, and
    any call while the native kernels are suspended (an `.mlxfn` export) give MLX's."""
    from mlxir.runtime.cpu import native, products

    module = kernels()
    w, scales, biases = mx.quantize(mx.random.normal((96, 256), key=mx.random.key(5)), group_size=64, bits=3)
    calls: list[str] = []
    original = mx.quantized_matmul

    def recording(*args: Any, **kwargs: Any) -> mx.array:
        calls.append(kwargs.get("mode", "affine"))
        return original(*args, **kwargs)

    monkeypatch.setattr(mx, "quantized_matmul", recording)
    props: dict[str, object] = {"group_size": 64, "bits": 3, "mode": "affine", "transpose": True}
    kernel = products.KERNELS["mlx.quantized_matmul"](props, [mx.float32])
    for rows in (1, 33):
        x = mx.random.normal((rows, 256), key=mx.random.key(rows))
        (result,) = kernel([x, w, scales, biases])
        assert bits_equal(result, module.quantized_matmul(x, w, scales, biases, group_size=64, bits=3))
    assert calls == []
    x = mx.random.normal((1, 256), key=mx.random.key(6))
    with native.suspended():
        (suspended,) = kernel([x, w, scales, biases])
    assert calls == ["affine"] and mx.array_equal(suspended, original(x, w, scales, biases, group_size=64, bits=3)).item()
    wn, sn, bn = mx.quantize(mx.random.normal((256, 128), key=mx.random.key(7)), group_size=64, bits=4)
    plain = products.KERNELS["mlx.quantized_matmul"]({**props, "bits": 4, "transpose": False}, [mx.float32])
    calls.clear()
    plain([x, wn, sn, bn])
    assert calls == ["affine"]
    microscaled = mx.quantize(mx.random.normal((96, 256), key=mx.random.key(8)), group_size=32, bits=4, mode="mxfp4")
    wf, sf = microscaled[0], microscaled[1]  # no biases in mxfp4 (the stub says three arrays)
    fp4 = products.KERNELS["mlx.quantized_matmul"]({**props, "group_size": 32, "bits": 4, "mode": "mxfp4"}, [mx.float32])
    calls.clear()
    fp4([x, wf, sf])
    assert calls == ["mxfp4"]


@pytest.mark.parametrize("op", ["mlx.matmul", "mlx.addmm"])
def test_cpu_product_by_weight_runs_the_native_matvec(op: str) -> None:
    """A float32 product of few rows by a `linear` weight's `w.T` is the native matvec
    of `w` (its bits), addmm's `beta * c + alpha * product` added by MLX's addmm
    (within one float32 rounding of that sum); 8 rows stay one MLX product."""
    from mlxir.evaluator import KERNELS
    from mlxir.runtime.cpu import products

    module = kernels()
    w = mx.random.normal((3000, 256), key=mx.random.key(9))
    bias = mx.random.normal((3000,), key=mx.random.key(10))
    props: dict[str, object] = {} if op == "mlx.matmul" else {"alpha": 0.5, "beta": 2.0}
    whole = KERNELS[op](props, [mx.float32])
    blocked = products.weight_blocked_product(op, whole)

    def operands(x: mx.array, c: mx.array) -> list[mx.array]:
        return [x, w.T] if op == "mlx.matmul" else [c, x, w.T]

    for shape, c in (((1, 256), bias), ((3, 256), bias), ((2, 3, 256), mx.array([0.25])), ((2, 256), bias[None] * 0)):
        x = mx.random.normal(shape, key=mx.random.key(len(shape)))
        (result,) = blocked(operands(x, c))
        product = module.matvec(x, w)
        if op == "mlx.matmul":
            assert bits_equal(result, product)
        else:
            expected = 2.0 * float64(c) + 0.5 * float64(product)
            assert result.shape == product.shape
            np.testing.assert_allclose(float64(result), expected, rtol=2**-22, atol=2**-22 * np.abs(expected).max())
    x = mx.random.normal((8, 256), key=mx.random.key(12))
    (result,) = blocked(operands(x, bias))
    assert bits_equal(result, whole(operands(x, bias))[0])


def test_cpu_product_by_weight_takes_the_native_matvec_where_it_pays() -> None:
    """A float16/bfloat16 weight too small for OpenBLAS's blocks still gets the native
    matvec (MLX has no BLAS for it); a float32 one that small stays MLX's product."""
    from mlxir.evaluator import KERNELS
    from mlxir.runtime.cpu.backend import CPU

    module = kernels()
    w = mx.random.normal((512, 256), key=mx.random.key(13))
    for dtype in (mx.bfloat16, mx.float16):
        whole = KERNELS["mlx.matmul"]({}, [dtype])
        chosen = CPU.product_by_weight("mlx.matmul", whole, w.astype(dtype).T)
        assert chosen is not whole
        for rows in ((1, 256), (3, 256), (2, 2, 256)):
            xs = mx.random.normal(rows, key=mx.random.key(len(rows))).astype(dtype)
            (result,) = chosen([xs, w.astype(dtype).T])
            assert bits_equal(result, module.matvec(xs, w.astype(dtype)))
        many = mx.random.normal((8, 256), key=mx.random.key(16)).astype(dtype)
        assert bits_equal(chosen([many, w.astype(dtype).T])[0], whole([many, w.astype(dtype).T])[0])
    whole = KERNELS["mlx.matmul"]({}, [mx.float32])
    assert CPU.product_by_weight("mlx.matmul", whole, w.T) is whole


# --------------------------------------------------------------------------- timings


def _median_ms(runs: dict[str, Callable[[], mx.array]], native_module: Any, repeats: int) -> dict[str, float]:
    """Each system's median over `repeats` calls, the systems alternating; a name ending
    in 2 runs the native pool on 2 threads, any other on 1."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            native_module.set_threads(2 if name.endswith("2") else 1)
            start = time.perf_counter()
            mx.eval(run())
            times[name].append(time.perf_counter() - start)
    native_module.set_threads(1)
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


def _without_native(kernel: Callable[[list[mx.array]], Any], operands: tuple[mx.array, ...]) -> mx.array:
    from mlxir.runtime.cpu import native

    with native.suspended():
        return kernel(list(operands))[0]


def _quantized_weight(outputs: int, depth: int) -> tuple[mx.array, mx.array, mx.array]:
    """A random weight quantized 16384 rows at a time (an LM head's float32 weight
    would take 0.6 GB at once)."""
    parts = [
        mx.quantize(mx.random.normal((min(16384, outputs - start), depth)) * 0.02, group_size=64, bits=4)
        for start in range(0, outputs, 16384)
    ]
    w, scales, biases = (mx.concatenate([part[i] for part in parts]) for i in range(3))
    mx.eval(w, scales, biases)
    return w, scales, biases


def benchmark(repeats: int = 21, rows_measured: tuple[int, ...] = (1, 4, 64, 256)) -> None:
    """One row and many by the weights of a 56M Llama (K 512: N 1408 and a 32000 LM head)
    and of Qwen3-0.6B (K 1024: N 3072 and a 151936 LM head), 4 bits, groups of 64,
    float32: `mx.quantized_matmul`, the CPU backend's way without the native kernel
    (blocks on streams for few rows, the dequantized product for many), native, and
    native with int8 activations (`activation_bits=8`). `rows` limits the row counts
    (`python tests/test_native_quantized.py 21 1`: one row)."""
    from mlxir.runtime.cpu import blas, native, products

    print(f"BLAS: {blas.blas_in_use()}")

    module = native.kernels()
    assert module is not None, "the native kernels are not built"
    props: dict[str, object] = {"group_size": 64, "bits": 4, "mode": "affine", "transpose": True}
    kernel = products.KERNELS["mlx.quantized_matmul"](props, [mx.float32])
    print("K, N, rows: milliseconds (median), systems alternating; nat1/nat2 = native on 1/2 threads")
    print("(int8-nat: activation_bits=8; err: against float64 of the exact product, of the largest output)")
    for depth, outputs in ((512, 1408), (512, 32000), (1024, 3072), (1024, 151936)):
        w, scales, biases = _quantized_weight(outputs, depth)
        for rows in rows_measured:
            if outputs > 100000 and rows > 4:
                continue
            x = mx.random.normal((rows, depth))
            mx.eval(x)

            operands = (x, w, scales, biases)
            runs: dict[str, Callable[[], mx.array]] = {
                "mlx": functools.partial(mx.quantized_matmul, *operands, group_size=64, bits=4),
                "cpu-backend": functools.partial(_without_native, kernel, operands),
                "nat1": functools.partial(module.quantized_matmul, *operands, group_size=64, bits=4),
                "nat2": functools.partial(module.quantized_matmul, *operands, group_size=64, bits=4),
                "int8-nat1": functools.partial(module.quantized_matmul, *operands, group_size=64, bits=4, activation_bits=8),
                "int8-nat2": functools.partial(module.quantized_matmul, *operands, group_size=64, bits=4, activation_bits=8),
            }
            if rows > 4:
                del runs["mlx"]  # 30-500 ms a call: one row's times show its scaling
            medians = _median_ms(runs, module, repeats if outputs < 100000 else 5)
            reference = float64(x) @ dequantized64(w, scales, biases, 4, 64).T
            errors = {name: relative_error(runs[name](), reference) for name in ("nat1", "int8-nat1")}
            print(
                f"{depth}, {outputs}, {rows}: "
                + "  ".join(f"{n} {t:.3f}" for n, t in medians.items())
                + "  err "
                + " ".join(f"{n} {e:.2g}" for n, e in errors.items()),
                flush=True,
            )


if __name__ == "__main__":
    benchmark(
        int(sys.argv[1]) if len(sys.argv) > 1 else 21,
        tuple(int(rows) for rows in sys.argv[2:]) or (1, 4, 64, 256),
    )
