"""Runtime kernels of linear algebra: matmul and addmm, the quantized ops
(`quantized_matmul`, `dequantize`, `quantized_take`: affine and microscaling modes,
against a float64 unpacking of MLX's packed layout), convolution, the factorizations
and solvers (`linalg_*`, against NumPy's LAPACK) and FFT. The CPU-specific product
paths (blocks, streams) are tested in `test_kernels_cpu.py`."""

from __future__ import annotations

from collections.abc import Sequence
from string import Template
from typing import Any, cast

import mlx.core as mx
import numpy as np
import pytest
import torch
from kernel_helpers import (
    FLOATS,
    MX_OF,
    TOL,
    check,
    check_exact,
    check_relative_to_max,
    floats,
    ints,
    ir,
    rng,
    run_ir,
)

import mlxir
from mlxir.codegen import read_program, serialize
from mlxir.dialects import mlx as mlx_dialect
from mlxir.evaluator import arrays as dtypes
from mlxir.evaluator.linalg import ACTIVATIONS
from mlxir.runtime import ir_interpreter
from mlxir.runtime.backend import GENERIC
from mlxir.runtime.cpu import native
from mlxir.runtime.ir_interpreter import parse_module, run_module

# --------------------------------------------------------------------------- linalg


@pytest.mark.parametrize("ty", FLOATS)
def test_matmul(ty: str) -> None:
    x, w = floats((5, 16), ty, seed=1), floats((16, 8), ty, seed=2)
    a, b = floats((2, 1, 3, 16), ty, seed=3), floats((4, 16, 6), ty, seed=4)
    text = ir("""func.func @forward(%x: tensor<?x16x$T>, %w: tensor<16x8x$T>, %a: tensor<2x1x?x16x$T>, %b: tensor<4x16x6x$T>) -> (tensor<?x8x$T>, tensor<2x4x?x6x$T>) {
      %y = mlx.matmul %x, %w : tensor<?x16x$T>, tensor<16x8x$T> -> tensor<?x8x$T>
      %z = mlx.matmul %a, %b : tensor<2x1x?x16x$T>, tensor<4x16x6x$T> -> tensor<2x4x?x6x$T>
      func.return %y, %z : tensor<?x8x$T>, tensor<2x4x?x6x$T>
    }""", T=ty)
    y, z = run_ir(text, x, w, a, b)
    check(y, x @ w, TOL[ty])
    check(z, a @ b, TOL[ty])


def test_matmul_integer_is_exact() -> None:
    a, b = ints((2, 3, 5), -50, 50, np.int32, 1), ints((5, 4), -50, 50, np.int32, 2)
    text = """func.func @forward(%a: tensor<2x?x5xi32>, %b: tensor<5x4xi32>, %c: tensor<4xi32>) -> (tensor<2x?x4xi32>, tensor<2x?x4xi32>) {
      %y = mlx.matmul %a, %b : tensor<2x?x5xi32>, tensor<5x4xi32> -> tensor<2x?x4xi32>
      %z = mlx.addmm %c, %a, %b alpha 2.000000e+00 beta 3.000000e+00 : tensor<4xi32>, tensor<2x?x5xi32>, tensor<5x4xi32> -> tensor<2x?x4xi32>
      func.return %y, %z : tensor<2x?x4xi32>, tensor<2x?x4xi32>
    }"""
    c = ints((4,), seed=3)
    y, z = run_ir(text, a, b, c)
    check_exact(y, a @ b, np.int32)
    check_exact(z, 3 * c + 2 * (a @ b), np.int32)


@pytest.mark.parametrize("ty", FLOATS)
def test_addmm(ty: str) -> None:
    bias, x, w = floats((8,), ty, seed=1), floats((5, 16), ty, seed=2), floats((16, 8), ty, seed=3)
    c = floats((5, 8), ty, seed=4)
    c_nan = c.copy()
    c_nan[0, 0] = np.nan
    text = ir("""func.func @forward(%bias: tensor<8x$T>, %x: tensor<?x16x$T>, %w: tensor<16x8x$T>, %c: tensor<?x8x$T>, %cn: tensor<?x8x$T>) -> (tensor<?x8x$T>, tensor<?x8x$T>, tensor<?x8x$T>, tensor<?x8x$T>) {
      %plain = mlx.addmm %bias, %x, %w : tensor<8x$T>, tensor<?x16x$T>, tensor<16x8x$T> -> tensor<?x8x$T>
      %alpha = mlx.addmm %bias, %x, %w alpha 5.000000e-01 : tensor<8x$T>, tensor<?x16x$T>, tensor<16x8x$T> -> tensor<?x8x$T>
      %beta = mlx.addmm %c, %x, %w alpha 1.500000e+00 beta 2.000000e+00 : tensor<?x8x$T>, tensor<?x16x$T>, tensor<16x8x$T> -> tensor<?x8x$T>
      %zero = mlx.addmm %cn, %x, %w alpha 2.000000e+00 beta 0.000000e+00 : tensor<?x8x$T>, tensor<?x16x$T>, tensor<16x8x$T> -> tensor<?x8x$T>
      func.return %plain, %alpha, %beta, %zero : tensor<?x8x$T>, tensor<?x8x$T>, tensor<?x8x$T>, tensor<?x8x$T>
    }""", T=ty)
    plain, alpha, beta, zero = run_ir(text, bias, x, w, c, c_nan)
    tol = TOL[ty]
    check(plain, bias + x @ w, tol)
    check(alpha, bias + 0.5 * (x @ w), tol)
    check(beta, 2 * c + 1.5 * (x @ w), tol)
    check(zero, 2 * (x @ w), tol)  # beta 0 ignores c, NaN included (PyTorch)


QMM_BF16_BOUND = 0.08
"""max |kernel - reference| / max |reference| allowed for bf16 activations. Measured
on MLX 0.32 CPU over 20 seeds at K = 256 (bits 4/8, group 32/64, affine, mxfp4,
mxfp8, both transposes): at most 0.050. The gap is MLX's quantized_matmul's own: it
is 0.044 from a float32 reference where dequantize + bf16 matmul is 0.0055. In f32
affine mode the two are bitwise equal; mxfp4/mxfp8 with `transpose` differ by at
most 6.9e-7 of max |reference| (QMM_MXFP_F32_BOUND, with margin)."""
QMM_MXFP_F32_BOUND = 2e-6


def quantized_inputs(bits: int, group_size: int, ty: str, transpose: bool, mode: str = "affine",
                     seed: int = 0) -> tuple[mx.array, mx.array, mx.array, mx.array | None, np.ndarray]:
    """x [2, 5, 256], w quantized from [64, 256] (or [256, 64] without transpose), and
    the reference `x @ dequantize(w).T` (or `x @ dequantize(w)`) as float32 numpy."""
    mx.random.seed(seed)
    dtype = MX_OF[ty]
    x = mx.random.normal((2, 5, 256)).astype(dtype)
    dense = mx.random.normal((64, 256) if transpose else (256, 64)).astype(dtype)
    w, scales, *rest = mx.quantize(dense, group_size=group_size, bits=bits, mode=mode)
    biases = rest[0] if rest else None
    deq = mx.dequantize(w, scales, biases, group_size=group_size, bits=bits, mode=mode)
    ref = x @ (deq.T if transpose else deq)
    mx.eval(x, w, scales, ref, *rest)
    return x, w, scales, biases, dtypes.to_numpy(ref)


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("group_size", [32, 64])
@pytest.mark.parametrize("bits", [4, 8])
def test_quantized_matmul(bits: int, group_size: int, ty: str) -> None:
    """Affine mode against `x @ mx.dequantize(w, scales, biases).T`: bitwise in f32,
    within QMM_BF16_BOUND in bf16; also without `transpose` (`x @ dequantize(w)`). On
    MLX's own kernels: the native CPU kernel sums in another order
    (`tests/test_native_quantized.py` holds it to float64)."""
    packed, groups = 256 * bits // 32, 256 // group_size
    text = ir("""func.func @forward(%x: tensor<2x?x256x$T>, %w: tensor<64x${P}xui32>, %s: tensor<64x${G}x$T>, %b: tensor<64x${G}x$T>, %wn: tensor<256x${Q}xui32>, %sn: tensor<256x${H}x$T>, %bn: tensor<256x${H}x$T>) -> (tensor<2x?x64x$T>, tensor<2x?x64x$T>) {
      %y = mlx.quantized_matmul %x, %w, %s, %b group_size $GS bits $B mode "affine" transpose : tensor<2x?x256x$T>, tensor<64x${P}xui32>, tensor<64x${G}x$T>, tensor<64x${G}x$T> -> tensor<2x?x64x$T>
      %z = mlx.quantized_matmul %x, %wn, %sn, %bn group_size $GS bits $B mode "affine" : tensor<2x?x256x$T>, tensor<256x${Q}xui32>, tensor<256x${H}x$T>, tensor<256x${H}x$T> -> tensor<2x?x64x$T>
      func.return %y, %z : tensor<2x?x64x$T>, tensor<2x?x64x$T>
    }""", T=ty, P=str(packed), G=str(groups), Q=str(64 * bits // 32), H=str(64 // group_size),
              GS=str(group_size), B=str(bits))
    x, w, s, b, ref = quantized_inputs(bits, group_size, ty, True, seed=1)
    _, wn, sn, bn, ref_n = quantized_inputs(bits, group_size, ty, False, seed=1)
    with native.suspended():
        y, z = run_ir(text, x, w, s, b, wn, sn, bn)
    if ty == "f32":
        check_exact(y, ref, np.float32)
        check_exact(z, ref_n, np.float32)
    else:
        check_relative_to_max(y, ref, QMM_BF16_BOUND)
        check_relative_to_max(z, ref_n, QMM_BF16_BOUND)


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize(("mode", "bits"), [("mxfp4", 4), ("mxfp8", 8)])
def test_quantized_matmul_microscaling(mode: str, bits: int, ty: str) -> None:
    """mxfp4 / mxfp8: ui8 scales, no biases, group 32."""
    packed = 256 * bits // 32
    text = ir("""func.func @forward(%x: tensor<2x?x256x$T>, %w: tensor<64x${P}xui32>, %s: tensor<64x8xui8>) -> tensor<2x?x64x$T> {
      %y = mlx.quantized_matmul %x, %w, %s group_size 32 bits $B mode "$M" transpose : tensor<2x?x256x$T>, tensor<64x${P}xui32>, tensor<64x8xui8> -> tensor<2x?x64x$T>
      func.return %y : tensor<2x?x64x$T>
    }""", T=ty, P=str(packed), B=str(bits), M=mode)
    x, w, s, b, ref = quantized_inputs(bits, 32, ty, True, mode, seed=2)
    assert b is None
    (y,) = run_ir(text, x, w, s)
    check_relative_to_max(y, ref, QMM_MXFP_F32_BOUND if ty == "f32" else QMM_BF16_BOUND)


def unpack_quantized(w: np.ndarray, bits: int) -> np.ndarray:
    """The `bits`-bit codes a `[rows, packed]` uint32 matrix holds, as int64 `[rows,
    packed * 32 / bits]`: MLX packs each row as one little-endian bit stream, element
    `j` in bits `j * bits ...` (for 2, 4 and 8 bits: word `j * bits // 32`, shifted by
    `j * bits % 32`; for 3, 5 and 6 bits an element may straddle two words)."""
    w = np.ascontiguousarray(np.asarray(w).astype("<u4"))
    rows, packed = w.shape
    stream = np.unpackbits(w.view(np.uint8).reshape(rows, packed * 4), axis=1, bitorder="little")
    codes = stream.reshape(rows, packed * 32 // bits, bits).astype(np.int64)
    return (codes << np.arange(bits)).sum(axis=-1)


def minifloat(codes: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """OCP minifloat codes (sign, exponent with bias 2^(e-1) - 1, mantissa; subnormal
    at exponent 0) as float64: E2M1 for mxfp4, E4M3 for mxfp8 (whose NaN code 0x7f
    mx.quantize does not produce)."""
    bias = (1 << (exponent_bits - 1)) - 1
    sign = np.where((codes >> (exponent_bits + mantissa_bits)) & 1, -1.0, 1.0)
    exponent = (codes >> mantissa_bits) & ((1 << exponent_bits) - 1)
    fraction = (codes & ((1 << mantissa_bits) - 1)) / 2.0**mantissa_bits
    return sign * np.where(exponent == 0, fraction * 2.0 ** (1 - bias),
                           (1 + fraction) * 2.0 ** (exponent - bias))


MXFP_MINIFLOATS = {"mxfp4": (2, 1), "mxfp8": (4, 3)}
UNIT_ROUNDOFF = {"f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}


def dequantize_reference(w: mx.array, scales: mx.array, biases: mx.array | None, group_size: int,
                         bits: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Float64 numpy dequantization of MLX's packed layout, independent of MLX: affine
    `code * scale + bias` per group of `group_size` elements of a row; mxfp4 / mxfp8
    the element's minifloat times `2^(scale - 127)` (E8M0 shared exponents). Also
    returns the bound on an implementation's error: affine computed in the element
    type rounds `scale * code` and the sum, so it is within `u * (|scale * code| +
    |result|)` (u the type's unit roundoff); the microscaling products are exact."""
    codes = unpack_quantized(dtypes.to_numpy(w), bits)
    per_element = np.repeat(dtypes.to_numpy(scales).astype(np.float64), group_size, axis=1)
    if mode == "affine":
        assert biases is not None
        scaled = codes * per_element
        ref = scaled + np.repeat(dtypes.to_numpy(biases).astype(np.float64), group_size, axis=1)
        ty = {mx.float32: "f32", mx.float16: "f16", mx.bfloat16: "bf16"}[scales.dtype]
        return ref, UNIT_ROUNDOFF[ty] * (np.abs(scaled) + np.abs(ref))
    ref = minifloat(codes, *MXFP_MINIFLOATS[mode]) * 2.0 ** (per_element - 127)
    return ref, np.zeros_like(ref)


def check_within(got: Any, ref: np.ndarray, bound: np.ndarray) -> None:
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    excess = np.abs(got - ref) - bound
    assert excess.max() <= 0, f"error exceeds the bound by {excess.max():.3g} at {excess.argmax()}"


def quantized_matrix(rows: int, cols: int, ty: str, group_size: int, bits: int, mode: str,
                     seed: int) -> tuple[mx.array, mx.array, mx.array | None]:
    """`mx.quantize` of a random normal `[rows, cols]` matrix of type `ty`."""
    mx.random.seed(seed)
    dense = mx.random.normal((rows, cols)).astype(MX_OF[ty])
    w, scales, *rest = mx.quantize(dense, group_size=group_size, bits=bits, mode=mode)
    mx.eval(w, scales, *rest)
    return w, scales, rest[0] if rest else None


@pytest.mark.parametrize("ty", FLOATS)
@pytest.mark.parametrize("group_size", [32, 64, 128])
@pytest.mark.parametrize("bits", [2, 3, 4, 6, 8])
def test_dequantize(bits: int, group_size: int, ty: str) -> None:
    """Affine mode, scales and biases of each float type: bitwise `mx.dequantize`, and
    within the two-roundings bound of the float64 unpacking reference (measured: at
    most 0.98 of it over 10 seeds, every bits/group/type)."""
    packed, groups = 256 * bits // 32, 256 // group_size
    text = ir("""func.func @forward(%w: tensor<?x${P}xui32>, %s: tensor<?x${G}x$T>, %b: tensor<?x${G}x$T>) -> tensor<?x256x$T> {
      %y = mlx.dequantize %w, %s, %b group_size $GS bits $B mode "affine" : tensor<?x${P}xui32>, tensor<?x${G}x$T>, tensor<?x${G}x$T> -> tensor<?x256x$T>
      func.return %y : tensor<?x256x$T>
    }""", T=ty, P=str(packed), G=str(groups), GS=str(group_size), B=str(bits))
    w, s, b = quantized_matrix(24, 256, ty, group_size, bits, "affine", seed=bits + group_size)
    (y,) = run_ir(text, w, s, b)
    direct = mx.dequantize(w, s, b, group_size=group_size, bits=bits, mode="affine")
    check_exact(y, dtypes.to_numpy(direct))
    check_within(y, *dequantize_reference(w, s, b, group_size, bits, "affine"))


@pytest.mark.parametrize("ty", FLOATS)
@pytest.mark.parametrize(("mode", "bits"), [("mxfp4", 4), ("mxfp8", 8)])
def test_dequantize_microscaling(mode: str, bits: int, ty: str) -> None:
    """mxfp4 / mxfp8 (ui8 scales, no biases) into each float type, which the kernel
    passes as `dtype` (MLX's own default is bfloat16): exactly the minifloat reference."""
    packed = 256 * bits // 32
    text = ir("""func.func @forward(%w: tensor<?x${P}xui32>, %s: tensor<?x8xui8>) -> tensor<?x256x$T> {
      %y = mlx.dequantize %w, %s group_size 32 bits $B mode "$M" : tensor<?x${P}xui32>, tensor<?x8xui8> -> tensor<?x256x$T>
      func.return %y : tensor<?x256x$T>
    }""", T=ty, P=str(packed), B=str(bits), M=mode)
    w, s, b = quantized_matrix(24, 256, "f32", 32, bits, mode, seed=bits)
    assert b is None
    (array,) = run_module(parse_module(text), {}, [w, s])
    assert array.dtype == MX_OF[ty]
    y = dtypes.to_numpy(array)
    ref, _ = dequantize_reference(w, s, None, 32, bits, mode)
    check_exact(np.asarray(y, np.float64), ref)
    direct = mx.dequantize(w, s, group_size=32, bits=bits, mode=mode, dtype=MX_OF[ty])
    check_exact(y, dtypes.to_numpy(direct))


@pytest.mark.parametrize("ty", FLOATS)
@pytest.mark.parametrize(("mode", "bits", "group_size"),
                         [("affine", 4, 64), ("affine", 8, 32), ("affine", 3, 128), ("mxfp4", 4, 32)])
def test_quantized_take(mode: str, bits: int, group_size: int, ty: str) -> None:
    """Rows of a quantized [24, 256] table (an embedding) by indices of rank 1 (repeats,
    both ends), 2 and 0, against `torch.nn.functional.embedding` on the dequantized
    table: bitwise on `mx.dequantize`'s, and within the rounding bound of the float64
    unpacking reference's."""
    affine = mode == "affine"
    w_type = f"tensor<24x{256 * bits // 32}xui32>"
    s_type = f"tensor<24x{256 // group_size}x{ty if affine else 'ui8'}>"
    text = ir("""func.func @forward(%w: $W, %s: $S$BA, %i: tensor<?xi32>, %j: tensor<?x?xi64>, %k: tensor<i32>) -> (tensor<?x256x$T>, tensor<?x?x256x$T>, tensor<256x$T>) {
      %rows = mlx.quantized_take %w, %s$BO indices %i : tensor<?xi32> $PROPS : $W, $S$BT -> tensor<?x256x$T>
      %grid = mlx.quantized_take %w, %s$BO indices %j : tensor<?x?xi64> $PROPS : $W, $S$BT -> tensor<?x?x256x$T>
      %one = mlx.quantized_take %w, %s$BO indices %k : tensor<i32> $PROPS : $W, $S$BT -> tensor<256x$T>
      func.return %rows, %grid, %one : tensor<?x256x$T>, tensor<?x?x256x$T>, tensor<256x$T>
    }""", T=ty, W=w_type, S=s_type, PROPS=f'group_size {group_size} bits {bits} mode "{mode}"',
              BA=f", %b: {s_type}" if affine else "", BO=", %b" if affine else "",
              BT=f", {s_type}" if affine else "")
    w, s, b = quantized_matrix(24, 256, ty if affine else "f32", group_size, bits, mode, seed=7)
    indices = (np.array([3, 0, 23, 3, 11], np.int32), rng(1).integers(0, 24, (2, 3)),
               np.array(17, np.int32))
    arrays = run_module(parse_module(text), {}, [w, s, *([b] if affine else []), *indices])
    assert all(a.dtype == MX_OF[ty] for a in arrays)
    results = [dtypes.to_numpy(a) for a in arrays]
    table = dtypes.to_numpy(
        mx.dequantize(w, s, b, group_size=group_size, bits=bits, mode=mode, dtype=MX_OF[ty]))
    ref, bound = dequantize_reference(w, s, b, group_size, bits, mode)

    def embedding(index: np.ndarray, weight: np.ndarray) -> np.ndarray:
        return torch.nn.functional.embedding(
            torch.from_numpy(np.asarray(index, np.int64)), torch.from_numpy(weight)).numpy()

    for got, index in zip(results, indices, strict=True):
        check_exact(got, embedding(index, table))
        check_within(got, embedding(index, ref), embedding(index, bound))


def test_quantized_take_and_dequantize_edges() -> None:
    """Out-of-range indices are clamped into bounds (negative ones wrap), as
    `mlx.take`'s are; no rows (empty indices, an empty table) give an empty result,
    where MLX's own dequantize fails."""
    text = """func.func @forward(%w: tensor<?x8xui32>, %s: tensor<?x1xf32>, %b: tensor<?x1xf32>, %i: tensor<?xi32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
      %rows = mlx.quantized_take %w, %s, %b indices %i : tensor<?xi32> group_size 64 bits 4 mode "affine" : tensor<?x8xui32>, tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
      %table = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<?x8xui32>, tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
      func.return %rows, %table : tensor<?x64xf32>, tensor<?x64xf32>
    }"""
    w, s, b = quantized_matrix(6, 64, "f32", 64, 4, "affine", seed=3)
    rows, table = run_ir(text, w, s, b, np.array([-1, 100, -100, 2], np.int32))
    check_exact(rows, table[[5, 5, 0, 2]])
    empty_rows, _ = run_ir(text, w, s, b, np.zeros((0,), np.int32))
    check_exact(empty_rows, np.zeros((0, 64), np.float32), np.float32)
    no_rows = (mx.zeros((0, 8), mx.uint32), mx.zeros((0, 1)), mx.zeros((0, 1)))
    _, empty_table = run_ir(text, *no_rows, np.zeros((0,), np.int32))
    check_exact(empty_table, np.zeros((0, 64), np.float32), np.float32)


def test_quantization_op_constructors() -> None:
    """The Python constructors build what the text parses to: `biases` optional in the
    middle of quantized_take's operands, present iff given."""
    text = """func.func @forward(%w: tensor<24x32xui32>, %s: tensor<24x4xbf16>, %b: tensor<24x4xbf16>, %e: tensor<24x8xui8>, %i: tensor<?x?xi32>) -> tensor<24x256xbf16> {
      %t = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<24x32xui32>, tensor<24x4xbf16>, tensor<24x4xbf16> -> tensor<24x256xbf16>
      %m = mlx.dequantize %w, %e group_size 32 bits 4 mode "mxfp4" : tensor<24x32xui32>, tensor<24x8xui8> -> tensor<24x256xf32>
      %r = mlx.quantized_take %w, %s, %b indices %i : tensor<?x?xi32> group_size 64 bits 4 mode "affine" : tensor<24x32xui32>, tensor<24x4xbf16>, tensor<24x4xbf16> -> tensor<?x?x256xbf16>
      %n = mlx.quantized_take %w, %e indices %i : tensor<?x?xi32> group_size 32 bits 4 mode "mxfp4" : tensor<24x32xui32>, tensor<24x8xui8> -> tensor<?x?x256xf16>
      func.return %t : tensor<24x256xbf16>
    }"""
    block = next(iter(parse_module(text).ops)).regions[0].block
    parsed = list(block.ops)[:4]
    w, s, b, e, i = block.args
    built = [
        mlx_dialect.DequantizeOp(w, s, b, 64, 4, "affine", parsed[0].results[0].type),
        mlx_dialect.DequantizeOp(w, e, None, 32, 4, "mxfp4", parsed[1].results[0].type),
        mlx_dialect.QuantizedTakeOp(w, s, b, i, 64, 4, "affine", parsed[2].results[0].type),
        mlx_dialect.QuantizedTakeOp(w, e, None, i, 32, 4, "mxfp4", parsed[3].results[0].type),
    ]
    for op, want in zip(built, parsed, strict=True):
        op.verify()
        assert type(op) is type(want)
        assert list(op.operands) == list(want.operands) and op.properties == want.properties
    take, take_mxfp = cast(list[mlx_dialect.QuantizedTakeOp], built[2:])
    assert (take.biases, take.indices, take_mxfp.biases, take_mxfp.indices) == (b, i, None, i)


def test_quantization_ops_serialize_and_load() -> None:
    """A module of the two ops (affine with biases, mxfp4 without) serializes, loads
    verified (`mlxir.load` rebuilds the IR and runs the verifiers), and runs as the
    reference interpreter does."""
    text = """func.func @forward(%w: tensor<24x32xui32>, %s: tensor<24x4xbf16>, %b: tensor<24x4xbf16>, %w4: tensor<24x32xui32>, %e: tensor<24x8xui8>, %i: tensor<?x?xi32>) -> (tensor<24x256xbf16>, tensor<?x?x256xbf16>, tensor<24x256xf32>, tensor<?x?x256xf16>) {
      %t = mlx.dequantize %w, %s, %b group_size 64 bits 4 mode "affine" : tensor<24x32xui32>, tensor<24x4xbf16>, tensor<24x4xbf16> -> tensor<24x256xbf16>
      %r = mlx.quantized_take %w, %s, %b indices %i : tensor<?x?xi32> group_size 64 bits 4 mode "affine" : tensor<24x32xui32>, tensor<24x4xbf16>, tensor<24x4xbf16> -> tensor<?x?x256xbf16>
      %m = mlx.dequantize %w4, %e group_size 32 bits 4 mode "mxfp4" : tensor<24x32xui32>, tensor<24x8xui8> -> tensor<24x256xf32>
      %n = mlx.quantized_take %w4, %e indices %i : tensor<?x?xi32> group_size 32 bits 4 mode "mxfp4" : tensor<24x32xui32>, tensor<24x8xui8> -> tensor<?x?x256xf16>
      func.return %t, %r, %m, %n : tensor<24x256xbf16>, tensor<?x?x256xbf16>, tensor<24x256xf32>, tensor<?x?x256xf16>
    }"""
    w, s, b = quantized_matrix(24, 256, "bf16", 64, 4, "affine", seed=5)
    w4, e, _ = quantized_matrix(24, 256, "f32", 32, 4, "mxfp4", seed=6)
    inputs = (w, s, b, w4, e, rng(2).integers(0, 24, (3, 2)).astype(np.int32))
    data = serialize(parse_module(text))
    program = mlxir.load(data)
    got = [dtypes.to_numpy(o) for o in program(*inputs)]
    want = run_ir(text, *inputs)
    assert len(got) == len(want) == 4
    for g, r in zip(got, want):
        check_exact(g, r)
    assert {"mlx.dequantize", "mlx.quantized_take"} <= set(read_program(data).op_names)


def conv_reference(x: np.ndarray, w: np.ndarray, stride: Sequence[int], lo: Sequence[int],
                   hi: Sequence[int], kernel_dilation: Sequence[int],
                   input_dilation: Sequence[int], groups: int, flip: bool) -> np.ndarray:
    """Channels-last conv through torch's channels-first conv in float64."""
    spatial = x.ndim - 2
    if any(d != 1 for d in input_dilation):
        shape = [x.shape[0], *((s - 1) * d + 1 for s, d in zip(x.shape[1:-1], input_dilation)),
                 x.shape[-1]]
        dilated = np.zeros(shape, x.dtype)
        dilated[(slice(None), *(slice(None, None, d) for d in input_dilation))] = x
        x = dilated
    x = np.pad(x, [(0, 0), *zip(lo, hi), (0, 0)])
    if flip:
        w = np.flip(w, axis=tuple(range(1, spatial + 1)))
    conv = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d}[spatial]
    out = conv(torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, -1, 1))),
               torch.from_numpy(np.ascontiguousarray(np.moveaxis(w, -1, 1))),
               stride=list(stride), dilation=list(kernel_dilation), groups=groups)
    return np.moveaxis(out.numpy(), 1, -1)


@pytest.mark.parametrize("ty", FLOATS)
def test_conv_general(ty: str) -> None:
    img, k = floats((2, 9, 9, 6), ty, seed=1), floats((8, 3, 3, 3), ty, seed=2)
    seq, k1 = floats((1, 7, 4), ty, seed=3), floats((4, 5, 1), ty, seed=4)
    text = ir("""func.func @forward(%img: tensor<?x9x9x6x$T>, %k: tensor<8x3x3x3x$T>, %seq: tensor<1x?x4x$T>, %k1: tensor<4x5x1x$T>) -> (tensor<?x5x5x8x$T>, tensor<?x8x8x8x$T>, tensor<?x7x7x8x$T>, tensor<1x?x4x$T>) {
      %c2d = mlx.conv_general %img, %k stride [2, 2] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 : tensor<?x9x9x6x$T>, tensor<8x3x3x3x$T> -> tensor<?x5x5x8x$T>
      %dil = mlx.conv_general %img, %k stride [1, 2] padding [1, 0] [2, 1] kernel_dilation [2, 1] input_dilation [1, 2] groups 2 : tensor<?x9x9x6x$T>, tensor<8x3x3x3x$T> -> tensor<?x8x8x8x$T>
      %flip = mlx.conv_general %img, %k stride [1, 1] padding [0, 0] [0, 0] kernel_dilation [1, 1] input_dilation [1, 1] groups 2 flip : tensor<?x9x9x6x$T>, tensor<8x3x3x3x$T> -> tensor<?x7x7x8x$T>
      %c1d = mlx.conv_general %seq, %k1 stride [1] padding [4] [0] kernel_dilation [1] input_dilation [1] groups 4 : tensor<1x?x4x$T>, tensor<4x5x1x$T> -> tensor<1x?x4x$T>
      func.return %c2d, %dil, %flip, %c1d : tensor<?x5x5x8x$T>, tensor<?x8x8x8x$T>, tensor<?x7x7x8x$T>, tensor<1x?x4x$T>
    }""", T=ty)
    c2d, dil, flip, c1d = run_ir(text, img, k, seq, k1)
    tol = TOL[ty]
    check(c2d, conv_reference(img, k, [2, 2], [1, 1], [1, 1], [1, 1], [1, 1], 2, False), tol)
    check(dil, conv_reference(img, k, [1, 2], [1, 0], [2, 1], [2, 1], [1, 2], 2, False), tol)
    check(flip, conv_reference(img, k, [1, 1], [0, 0], [0, 0], [1, 1], [1, 1], 2, True), tol)
    check(c1d, conv_reference(seq, k1, [1], [4], [0], [1], [1], 4, False), tol)


def test_conv_activations_are_the_dialects() -> None:
    """The generic kernel computes each activation the verifier admits, and no other."""
    assert tuple(ACTIVATIONS) == mlx_dialect.CONV_ACTIVATIONS


_ACTIVATION_REF = {
    "none": lambda y: y,
    "relu": lambda y: np.maximum(y, 0.0),
    "relu6": lambda y: np.clip(y, 0.0, 6.0),
    "silu": lambda y: y / (1.0 + np.exp(-y)),
}


@pytest.mark.parametrize("backend", ["generic", "host"])
@pytest.mark.parametrize("ty", FLOATS)
def test_conv_bias_activation(ty: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fused op is the convolution, the bias add and the activation it was fused
    from: within the dtype's tolerance of float64 (depthwise and grouped, 2-D and 1-D,
    with and without a bias, flipped and dilated), and, as the generic kernels (a GPU's)
    compute them, op by op: the same bits as those ops' own kernels. (The CPU's native
    depthwise kernel rounds half precision once, after the bias and the activation:
    `test_native_convolution.py`.)"""
    if backend == "generic":
        monkeypatch.setattr(ir_interpreter, "backend_for", lambda device: GENERIC)
    img, dw, k = floats((2, 9, 9, 6), ty, seed=1), floats((6, 3, 3, 1), ty, seed=2), floats((8, 3, 3, 3), ty, seed=3)
    seq, k1 = floats((1, 7, 4), ty, seed=4), floats((4, 5, 1), ty, seed=5)
    b6, b8, b4 = floats((6,), ty, seed=6), floats((8,), ty, seed=7), floats((4,), ty, seed=8)
    options = "stride [1, 1] padding [1, 1] [1, 1] kernel_dilation [1, 1] input_dilation [1, 1]"
    grouped = "stride [2, 1] padding [1, 0] [2, 1] kernel_dilation [2, 1] input_dilation [1, 1] groups 2 flip"
    text = ir("""func.func @forward(%img: tensor<?x9x9x6x$T>, %dw: tensor<6x3x3x1x$T>, %k: tensor<8x3x3x3x$T>, %seq: tensor<1x?x4x$T>, %k1: tensor<4x5x1x$T>, %b6: tensor<6x$T>, %b8: tensor<8x$T>, %b4: tensor<4x$T>) -> (tensor<?x9x9x6x$T>, tensor<?x9x9x6x$T>, tensor<?x4x8x8x$T>, tensor<?x4x8x8x$T>, tensor<1x?x4x$T>, tensor<1x?x4x$T>, tensor<?x9x9x6x$T>) {
      %zero = mlx.constant dense<0.0> : tensor<$T>
      %six = mlx.constant dense<6.0> : tensor<$T>
      %relu6 = mlx.conv_bias_activation %img, %dw bias %b6 : tensor<6x$T> $OPTIONS groups 6 activation "relu6" : tensor<?x9x9x6x$T>, tensor<6x3x3x1x$T> -> tensor<?x9x9x6x$T>
      %c = mlx.conv_general %img, %dw $OPTIONS groups 6 : tensor<?x9x9x6x$T>, tensor<6x3x3x1x$T> -> tensor<?x9x9x6x$T>
      %cb = mlx.add %c, %b6 : tensor<?x9x9x6x$T>, tensor<6x$T> -> tensor<?x9x9x6x$T>
      %cr = mlx.maximum %cb, %zero : tensor<?x9x9x6x$T>, tensor<$T> -> tensor<?x9x9x6x$T>
      %cr6 = mlx.minimum %cr, %six : tensor<?x9x9x6x$T>, tensor<$T> -> tensor<?x9x9x6x$T>
      %silu = mlx.conv_bias_activation %img, %k $GROUPED activation "silu" : tensor<?x9x9x6x$T>, tensor<8x3x3x3x$T> -> tensor<?x4x8x8x$T>
      %g = mlx.conv_general %img, %k $GROUPED : tensor<?x9x9x6x$T>, tensor<8x3x3x3x$T> -> tensor<?x4x8x8x$T>
      %gs = mlx.sigmoid %g : tensor<?x4x8x8x$T> -> tensor<?x4x8x8x$T>
      %gsilu = mlx.multiply %g, %gs : tensor<?x4x8x8x$T>, tensor<?x4x8x8x$T> -> tensor<?x4x8x8x$T>
      %relu = mlx.conv_bias_activation %seq, %k1 bias %b4 : tensor<4x$T> stride [1] padding [4] [0] kernel_dilation [1] input_dilation [1] groups 4 activation "relu" : tensor<1x?x4x$T>, tensor<4x5x1x$T> -> tensor<1x?x4x$T>
      %s = mlx.conv_general %seq, %k1 stride [1] padding [4] [0] kernel_dilation [1] input_dilation [1] groups 4 : tensor<1x?x4x$T>, tensor<4x5x1x$T> -> tensor<1x?x4x$T>
      %sb = mlx.add %s, %b4 : tensor<1x?x4x$T>, tensor<4x$T> -> tensor<1x?x4x$T>
      %sr = mlx.maximum %sb, %zero : tensor<1x?x4x$T>, tensor<$T> -> tensor<1x?x4x$T>
      %biased = mlx.conv_bias_activation %img, %dw bias %b6 : tensor<6x$T> $OPTIONS groups 6 activation "none" : tensor<?x9x9x6x$T>, tensor<6x3x3x1x$T> -> tensor<?x9x9x6x$T>
      func.return %relu6, %cr6, %silu, %gsilu, %relu, %sr, %biased : tensor<?x9x9x6x$T>, tensor<?x9x9x6x$T>, tensor<?x4x8x8x$T>, tensor<?x4x8x8x$T>, tensor<1x?x4x$T>, tensor<1x?x4x$T>, tensor<?x9x9x6x$T>
    }""", T=ty, OPTIONS=options, GROUPED=grouped)
    relu6, relu6_ops, silu, silu_ops, relu, relu_ops, biased = run_ir(text, img, dw, k, seq, k1, b6, b8, b4)
    if backend == "generic":
        check_exact(relu6, relu6_ops)
        check_exact(silu, silu_ops)
        check_exact(relu, relu_ops)
    depthwise = conv_reference(img, dw, [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], 6, False) + b6
    flipped = conv_reference(img, k, [2, 1], [1, 0], [2, 1], [2, 1], [1, 1], 2, True)
    sequence = conv_reference(seq, k1, [1], [4], [0], [1], [1], 4, False) + b4
    for got, want in (
        (relu6, _ACTIVATION_REF["relu6"](depthwise)),
        (silu, _ACTIVATION_REF["silu"](flipped)),
        (relu, _ACTIVATION_REF["relu"](sequence)),
        (biased, depthwise),
    ):
        check_relative_to_max(got, want, 2 * TOL[ty])


# --------------------------------------------------------------------------- factorizations, fft


def test_linalg_inv_det_slogdet_solve() -> None:
    """Against NumPy's LAPACK in float64 (an independent reference), float32 results
    within 1e-4 relative: the matrices are diagonally dominant, so well conditioned."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4, 4)) + 4 * np.eye(4)).astype(np.float32)
    a[1] *= -1  # a negative determinant: slogdet's sign
    b = rng.standard_normal((3, 4, 2)).astype(np.float32)
    text = """func.func @forward(%a: tensor<?x4x4xf32>, %b: tensor<?x4x2xf32>) -> (tensor<?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4x2xf32>) {
      %inv = mlx.linalg_inv %a : tensor<?x4x4xf32> -> tensor<?x4x4xf32>
      %det = mlx.linalg_det %a : tensor<?x4x4xf32> -> tensor<?xf32>
      %sl:2 = mlx.linalg_slogdet %a : tensor<?x4x4xf32> -> tensor<?xf32>, tensor<?xf32>
      %x = mlx.linalg_solve %a, %b : tensor<?x4x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x2xf32>
      func.return %inv, %det, %sl#0, %sl#1, %x : tensor<?x4x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4x2xf32>
    }"""
    inv, det, sign, logabsdet, x = run_ir(text, a, b)
    a64 = a.astype(np.float64)
    reference_sign, reference_logabsdet = np.linalg.slogdet(a64)
    for got, ref in (
        (inv, np.linalg.inv(a64)),
        (det, np.linalg.det(a64)),
        (sign, reference_sign),
        (logabsdet, reference_logabsdet),
        (x, np.linalg.solve(a64, b.astype(np.float64))),
    ):
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-4, atol=1e-5)


def test_linalg_of_empty_matrices() -> None:
    """0x0 matrices: MLX's own inverse and solve of them stop the process (SIGFPE), so
    the kernels answer without it: empty results, and determinant 1 (sign 1, log 0)."""
    text = """func.func @forward(%a: tensor<2x?x?xf32>, %b: tensor<2x?x3xf32>) -> (tensor<2x?x?xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x?x3xf32>) {
      %inv = mlx.linalg_inv %a : tensor<2x?x?xf32> -> tensor<2x?x?xf32>
      %det = mlx.linalg_det %a : tensor<2x?x?xf32> -> tensor<2xf32>
      %sl:2 = mlx.linalg_slogdet %a : tensor<2x?x?xf32> -> tensor<2xf32>, tensor<2xf32>
      %x = mlx.linalg_solve %a, %b : tensor<2x?x?xf32>, tensor<2x?x3xf32> -> tensor<2x?x3xf32>
      func.return %inv, %det, %sl#0, %sl#1, %x : tensor<2x?x?xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x?x3xf32>
    }"""
    inv, det, sign, logabsdet, x = run_ir(text, np.zeros((2, 0, 0), np.float32), np.zeros((2, 0, 3), np.float32))
    assert np.asarray(inv).shape == (2, 0, 0) and np.asarray(x).shape == (2, 0, 3)
    check_exact(det, np.ones(2, np.float32))
    check_exact(sign, np.ones(2, np.float32))
    check_exact(logabsdet, np.zeros(2, np.float32))


def test_linalg_solve_triangular_and_cholesky_inv() -> None:
    """Against NumPy in float64: triangular solves read only their triangle (the other
    one holds noise here), and `cholesky_inv` is the inverse of `L L^T` (`U^T U`);
    0x0 matrices give empty results (MLX's own kernels stop the process on them)."""
    rng = np.random.default_rng(1)
    noise = rng.standard_normal((2, 4, 4))
    lower = (np.tril(noise) + 4 * np.eye(4)).astype(np.float32)
    b = rng.standard_normal((2, 4, 3)).astype(np.float32)
    text = """func.func @forward(%l: tensor<?x?x?xf32>, %m: tensor<?x?x?xf32>, %b: tensor<?x?x3xf32>) -> (tensor<?x?x3xf32>, tensor<?x?x3xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
      %lo = mlx.linalg_solve_triangular %m, %b : tensor<?x?x?xf32>, tensor<?x?x3xf32> -> tensor<?x?x3xf32>
      %up = mlx.linalg_solve_triangular %m, %b upper : tensor<?x?x?xf32>, tensor<?x?x3xf32> -> tensor<?x?x3xf32>
      %inv = mlx.linalg_cholesky_inv %l : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
      %inv_u = mlx.linalg_cholesky_inv %l upper : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
      func.return %lo, %up, %inv, %inv_u : tensor<?x?x3xf32>, tensor<?x?x3xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
    }"""
    mixed = (lower + np.triu(noise.transpose(0, 2, 1), 1)).astype(np.float32)  # both triangles dominated
    lo, up, inv, inv_u = run_ir(text, lower, mixed, b)
    m64, l64 = mixed.astype(np.float64), lower.astype(np.float64)
    for got, ref in (
        (lo, np.linalg.solve(np.tril(m64), b)),
        (up, np.linalg.solve(np.triu(m64), b)),
        (inv, np.linalg.inv(l64 @ l64.transpose(0, 2, 1))),
        (inv_u, np.linalg.inv(np.triu(l64).transpose(0, 2, 1) @ np.triu(l64))),  # its diagonal only
    ):
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-4, atol=1e-5)
    empty = np.zeros((2, 0, 0), np.float32)
    lo, up, inv, inv_u = run_ir(text, empty, empty, np.zeros((2, 0, 3), np.float32))
    assert [np.asarray(r).shape for r in (lo, up, inv, inv_u)] == [(2, 0, 3), (2, 0, 3), (2, 0, 0), (2, 0, 0)]


def test_fftn_and_complex_views() -> None:
    """Against NumPy's FFT: fftn over one and two axes, ifftn (scaled by 1/n, as
    NumPy's), rfftn of a real signal and irfftn to odd and even lengths; complex64
    inputs and results, their conjugate, and views between complex64 and float32 pairs."""
    gen = rng()
    z = (gen.standard_normal((3, 4, 6)) + 1j * gen.standard_normal((3, 4, 6))).astype(np.complex64)
    x = gen.standard_normal((3, 4, 6)).astype(np.float32)
    half = np.fft.rfft(x, axis=-1).astype(np.complex64)
    text = """func.func @forward(%z: tensor<?x4x6xcomplex<f32>>, %x: tensor<?x4x6xf32>, %h: tensor<?x4x4xcomplex<f32>>) -> (tensor<?x4x6xcomplex<f32>>, tensor<?x4x6xcomplex<f32>>, tensor<?x4x4xcomplex<f32>>, tensor<?x4x6xf32>, tensor<?x4x7xf32>, tensor<?x4x6xcomplex<f32>>, tensor<?x4x12xf32>, tensor<?x4x3xcomplex<f32>>) {
      %fft = mlx.fftn %z axes [1, 2] : tensor<?x4x6xcomplex<f32>> -> tensor<?x4x6xcomplex<f32>>
      %ifft = mlx.fftn %z axes [-1] inverse : tensor<?x4x6xcomplex<f32>> -> tensor<?x4x6xcomplex<f32>>
      %rfft = mlx.fftn %x axes [2] real : tensor<?x4x6xf32> -> tensor<?x4x4xcomplex<f32>>
      %irfft6 = mlx.fftn %h axes [2] inverse real last_size 6 : tensor<?x4x4xcomplex<f32>> -> tensor<?x4x6xf32>
      %irfft7 = mlx.fftn %h axes [2] inverse real last_size 7 : tensor<?x4x4xcomplex<f32>> -> tensor<?x4x7xf32>
      %conj = mlx.conj %z : tensor<?x4x6xcomplex<f32>> -> tensor<?x4x6xcomplex<f32>>
      %pairs = mlx.view %z : tensor<?x4x6xcomplex<f32>> -> tensor<?x4x12xf32>
      %back = mlx.view %x : tensor<?x4x6xf32> -> tensor<?x4x3xcomplex<f32>>
      func.return %fft, %ifft, %rfft, %irfft6, %irfft7, %conj, %pairs, %back : tensor<?x4x6xcomplex<f32>>, tensor<?x4x6xcomplex<f32>>, tensor<?x4x4xcomplex<f32>>, tensor<?x4x6xf32>, tensor<?x4x7xf32>, tensor<?x4x6xcomplex<f32>>, tensor<?x4x12xf32>, tensor<?x4x3xcomplex<f32>>
    }"""
    got = [np.asarray(r) for r in run_ir(text, z, x, half)]
    z64 = z.astype(np.complex128)
    refs = [
        np.fft.fftn(z64, axes=(1, 2)),
        np.fft.ifft(z64, axis=-1),
        np.fft.rfft(x.astype(np.float64), axis=-1),
        np.fft.irfft(half, n=6, axis=-1),
        np.fft.irfft(half, n=7, axis=-1),
        np.conj(z),
    ]
    for result, ref in zip(got, refs):
        assert result.dtype == (np.float32 if np.isrealobj(ref) else np.complex64)
        np.testing.assert_allclose(result, ref, rtol=1e-5, atol=1e-5)
    check_exact(got[6], z.view(np.float32))
    check_exact(got[7], x.view(np.complex64))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_linalg_lu_factor(dtype: str) -> None:
    """Against torch's LAPACK (the same getrf): the packed factors, and the pivots
    0-based (torch's are 1-based), for square, wide and tall stacks, a singular matrix
    (a zero pivot) included; matrices with no element give empty factors and zero
    pivots of shape [..., min(m, n)] (MLX's own kernel stops the process on them)."""
    np_dtype = {"f32": np.float32, "f64": np.float64}[dtype]
    rng = np.random.default_rng(3)
    text = Template("""func.func @forward(%a: tensor<?x?x?x$t>) -> (tensor<?x?x?x$t>, tensor<?x?xi32>) {
      %lu:2 = mlx.linalg_lu_factor %a : tensor<?x?x?x$t> -> tensor<?x?x?x$t>, tensor<?x?xi32>
      func.return %lu#0, %lu#1 : tensor<?x?x?x$t>, tensor<?x?xi32>
    }""").substitute(t=dtype)
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    for shape in ((2, 4, 4), (2, 3, 5), (3, 5, 2)):
        a = rng.standard_normal(shape).astype(np_dtype)
        if shape[1:] == (4, 4):
            a[1, :3, :3], a[1, 3], a[1, :, 3] = singular, 0, 0
        lu, pivots = run_ir(text, a)
        ref = torch.linalg.lu_factor_ex(torch.from_numpy(a))
        tol = 1e-6 if dtype == "f32" else 1e-12
        np.testing.assert_allclose(np.asarray(lu), ref.LU.numpy(), rtol=tol, atol=tol)
        check_exact(pivots, ref.pivots.numpy() - 1, np.int32)
    for shape, k in (((2, 0, 3), 0), ((0, 3, 3), 3), ((2, 3, 0), 0)):
        lu, pivots = run_ir(text, np.zeros(shape, np_dtype))
        assert np.asarray(lu).shape == shape
        check_exact(pivots, np.zeros((*shape[:-2], k), np.int32), np.int32)


def test_linalg_factorizations() -> None:
    """Against NumPy in float64: QR (reduced, the signs LAPACK's), Cholesky (only one
    triangle read), singular values and symmetric eigenvalues (only one triangle read),
    and the sign-free products of SVD and eigh vectors; 0x0 matrices give empty
    results."""
    rng = np.random.default_rng(2)
    tall = rng.standard_normal((2, 5, 3)).astype(np.float32)
    noise = rng.standard_normal((2, 4, 4))
    spd = (noise @ noise.transpose(0, 2, 1) + 4 * np.eye(4)).astype(np.float32)
    text = """func.func @forward(%w: tensor<?x?x?xf32>, %a: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>) {
      %q, %r = mlx.linalg_qr %w : tensor<?x?x?xf32> -> tensor<?x?x?xf32>, tensor<?x?x?xf32>
      %l = mlx.linalg_cholesky %a : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
      %u = mlx.linalg_cholesky %a upper : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
      %su, %s, %svt = mlx.linalg_svd %w : tensor<?x?x?xf32> -> tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>
      %sv = mlx.linalg_svdvals %w : tensor<?x?x?xf32> -> tensor<?x?xf32>
      %ev, %evec = mlx.linalg_eigh %a upper : tensor<?x?x?xf32> -> tensor<?x?xf32>, tensor<?x?x?xf32>
      %evl = mlx.linalg_eigvalsh %a : tensor<?x?x?xf32> -> tensor<?x?xf32>
      func.return %q, %r, %l, %u, %s, %su, %sv, %svt, %ev, %evl, %evec : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>
    }"""
    # the other triangle of the symmetric input holds noise: each op reads one
    lower_read, upper_read = np.tril(spd) + np.triu(noise, 1), np.triu(spd) + np.tril(noise, -1)
    q, r, lower, _, s, su, sv, svt, _, evl, _ = (np.asarray(x) for x in run_ir(text, tall, lower_read.astype(np.float32)))
    _, _, _, u, _, _, _, _, ev, _, evec = (np.asarray(x) for x in run_ir(text, tall, upper_read.astype(np.float32)))
    w64, a64 = tall.astype(np.float64), spd.astype(np.float64)
    q64, r64 = np.linalg.qr(w64)
    chol = np.linalg.cholesky(a64)
    for got, ref in (
        (q, q64),
        (r, r64),
        (lower, chol),
        (u, chol.transpose(0, 2, 1)),
        (s, np.linalg.svd(w64, compute_uv=False)),
        (sv, np.linalg.svd(w64, compute_uv=False)),
        (su[..., :3] * s[:, None, :] @ svt, w64),  # U diag(s) Vt: free of the vectors' signs
        (ev, np.linalg.eigvalsh(a64)),
        (evl, np.linalg.eigvalsh(a64)),
        (evec * ev[:, None, :] @ evec.transpose(0, 2, 1), a64),
    ):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    empty = np.zeros((2, 0, 0), np.float32)
    shapes = [np.asarray(x).shape for x in run_ir(text, empty, empty)]
    assert shapes == [(2, 0, 0)] * 4 + [(2, 0), (2, 0, 0), (2, 0), (2, 0, 0), (2, 0), (2, 0), (2, 0, 0)]
