"""Runtime kernels of MLX's fast ops: scaled dot-product attention, RMS and layer norm,
and rope, against numpy references in float64 (the CPU compositions of rope and
attention, bit for bit against MLX's own: `test_kernels_cpu.py`)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import FLOATS, TOL, check, floats, ir, quantize, rng, run_ir, softmax

# --------------------------------------------------------------------------- fast ops


def sdpa_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float,
                   mask: np.ndarray | None = None, causal: bool = False) -> np.ndarray:
    groups = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
    scores = q @ np.swapaxes(k, -1, -2) * scale
    length_q, length_k = scores.shape[-2:]
    if causal:  # MLX's "causal" is aligned to the lower right
        mask = np.tril(np.ones((length_q, length_k), bool), length_k - length_q)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    return softmax(scores, -1) @ v


@pytest.mark.parametrize("ty", FLOATS)
def test_scaled_dot_product_attention(ty: str) -> None:
    q = floats((1, 4, 3, 8), ty, seed=1)
    k, v = floats((1, 2, 5, 8), ty, seed=2), floats((1, 2, 5, 8), ty, seed=3)
    keep = rng(4).random((3, 5)) > 0.4
    keep[:, 0] = True  # no fully masked row (that is a canonicalization's business)
    bias = quantize(np.where(rng(5).random((1, 1, 3, 5)) > 0.3, 0.0, -3.0), ty)
    bias[..., 2] = -np.inf
    text = ir("""func.func @forward(%q: tensor<1x4x?x8x$T>, %k: tensor<1x2x?x8x$T>, %v: tensor<1x2x?x8x$T>, %keep: tensor<?x?xi1>, %bias: tensor<1x1x?x?x$T>) -> (tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>) {
      %plain = mlx.scaled_dot_product_attention %q, %k, %v scale 3.535534e-01 : tensor<1x4x?x8x$T>, tensor<1x2x?x8x$T>, tensor<1x2x?x8x$T> -> tensor<1x4x?x8x$T>
      %causal = mlx.scaled_dot_product_attention %q, %k, %v scale 3.535534e-01 mask_mode "causal" : tensor<1x4x?x8x$T>, tensor<1x2x?x8x$T>, tensor<1x2x?x8x$T> -> tensor<1x4x?x8x$T>
      %boolean = mlx.scaled_dot_product_attention %q, %k, %v mask %keep : tensor<?x?xi1> scale 1.000000e+00 : tensor<1x4x?x8x$T>, tensor<1x2x?x8x$T>, tensor<1x2x?x8x$T> -> tensor<1x4x?x8x$T>
      %additive = mlx.scaled_dot_product_attention %q, %k, %v mask %bias : tensor<1x1x?x?x$T> scale 5.000000e-01 : tensor<1x4x?x8x$T>, tensor<1x2x?x8x$T>, tensor<1x2x?x8x$T> -> tensor<1x4x?x8x$T>
      func.return %plain, %causal, %boolean, %additive : tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>
    }""", T=ty)
    plain, causal, boolean, additive = run_ir(text, q, k, v, keep, bias)
    scale = float(np.float32(3.535534e-01))
    # MLX rounds the scores to the type before the softmax: with bf16 and scale 1 that
    # is up to one more ulp at the output.
    tol = TOL[ty] * (2 if ty == "bf16" else 1)
    check(plain, sdpa_reference(q, k, v, scale), tol)
    check(causal, sdpa_reference(q, k, v, scale, causal=True), tol)
    check(boolean, sdpa_reference(q, k, v, 1.0, mask=keep), tol)
    check(additive, sdpa_reference(q, k, v, 0.5, mask=bias), tol)


@pytest.mark.parametrize("ty", FLOATS)
def test_sdpa_zero_masked_rows(ty: str) -> None:
    """`zero_masked_rows`: a query row whose keys are all masked (bool row all false,
    additive row all -inf) is exact zeros, as in PyTorch; other rows are MLX's SDPA."""
    q = floats((1, 4, 3, 8), ty, seed=1)
    k, v = floats((1, 2, 5, 8), ty, seed=2), floats((1, 2, 5, 8), ty, seed=3)
    keep = rng(4).random((3, 5)) > 0.4
    keep[0], keep[1:, 0] = False, True  # row 0 fully masked, the others not
    bias = quantize(np.where(keep, 0.0, -np.inf)[None, None], ty)
    text = ir("""func.func @forward(%q: tensor<1x4x?x8x$T>, %k: tensor<1x2x?x8x$T>, %v: tensor<1x2x?x8x$T>, %keep: tensor<?x?xi1>, %bias: tensor<1x1x?x?x$T>) -> (tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>) {
      %boolean = mlx.scaled_dot_product_attention %q, %k, %v mask %keep : tensor<?x?xi1> scale 5.000000e-01 zero_masked_rows : tensor<1x4x?x8x$T>, tensor<1x2x?x8x$T>, tensor<1x2x?x8x$T> -> tensor<1x4x?x8x$T>
      %additive = mlx.scaled_dot_product_attention %q, %k, %v mask %bias : tensor<1x1x?x?x$T> scale 5.000000e-01 zero_masked_rows : tensor<1x4x?x8x$T>, tensor<1x2x?x8x$T>, tensor<1x2x?x8x$T> -> tensor<1x4x?x8x$T>
      func.return %boolean, %additive : tensor<1x4x?x8x$T>, tensor<1x4x?x8x$T>
    }""", T=ty)
    boolean, additive = run_ir(text, q, k, v, keep, bias)
    expected = sdpa_reference(q[:, :, 1:], k, v, 0.5, mask=keep[1:])
    for got in (boolean, additive):
        got = np.asarray(got, np.float32)
        assert np.array_equal(got[:, :, 0], np.zeros_like(got[:, :, 0]))  # exact zeros
        check(got[:, :, 1:], expected, TOL[ty])


def norm_reference(x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                   eps: float, rms: bool) -> np.ndarray:
    if rms:
        y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    else:
        mean = x.mean(axis=-1, keepdims=True)
        y = (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


@pytest.mark.parametrize("ty", FLOATS)
def test_norms(ty: str) -> None:
    x = floats((2, 3, 32), ty, -2, 2, seed=1)
    w, b = floats((32,), ty, 0.5, 1.5, seed=2), floats((32,), ty, seed=3)
    text = ir("""func.func @forward(%x: tensor<2x?x32x$T>, %w: tensor<32x$T>, %b: tensor<32x$T>) -> (tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>) {
      %rms = mlx.rms_norm %x weight %w : tensor<32x$T> eps 1.000000e-05 : tensor<2x?x32x$T> -> tensor<2x?x32x$T>
      %rms0 = mlx.rms_norm %x eps 1.000000e-06 : tensor<2x?x32x$T> -> tensor<2x?x32x$T>
      %ln = mlx.layer_norm %x weight %w : tensor<32x$T> bias %b : tensor<32x$T> eps 1.000000e-05 : tensor<2x?x32x$T> -> tensor<2x?x32x$T>
      %lnw = mlx.layer_norm %x weight %w : tensor<32x$T> eps 1.000000e-05 : tensor<2x?x32x$T> -> tensor<2x?x32x$T>
      %lnb = mlx.layer_norm %x bias %b : tensor<32x$T> eps 1.000000e-05 : tensor<2x?x32x$T> -> tensor<2x?x32x$T>
      %ln0 = mlx.layer_norm %x eps 1.000000e-05 : tensor<2x?x32x$T> -> tensor<2x?x32x$T>
      func.return %rms, %rms0, %ln, %lnw, %lnb, %ln0 : tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>, tensor<2x?x32x$T>
    }""", T=ty)
    rms, rms0, ln, lnw, lnb, ln0 = run_ir(text, x, w, b)
    tol = TOL[ty]
    check(rms, norm_reference(x, w, None, 1e-5, True), tol)
    check(rms0, norm_reference(x, None, None, 1e-6, True), tol)
    check(ln, norm_reference(x, w, b, 1e-5, False), tol)
    check(lnw, norm_reference(x, w, None, 1e-5, False), tol)
    check(lnb, norm_reference(x, None, b, 1e-5, False), tol)
    check(ln0, norm_reference(x, None, None, 1e-5, False), tol)


def rope_reference(x: np.ndarray, dims: int, traditional: bool, base: float, scale: float,
                   offset: int) -> np.ndarray:
    """Rotary embedding of the first `dims` features at positions `offset + t` (axis -2)."""
    half = dims // 2
    inv_freq = base ** (-np.arange(half) * 2.0 / dims)
    theta = ((offset + np.arange(x.shape[-2])) * scale)[:, None] * inv_freq[None, :]
    cos, sin = np.cos(theta), np.sin(theta)
    out = x.copy()
    if traditional:
        first, second = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2] = first * cos - second * sin
        out[..., 1:dims:2] = first * sin + second * cos
    else:
        first, second = x[..., :half], x[..., half:dims]
        out[..., :half] = first * cos - second * sin
        out[..., half:dims] = first * sin + second * cos
    return out


@pytest.mark.parametrize("ty", FLOATS)
def test_rope(ty: str) -> None:
    q = floats((1, 2, 5, 16), ty, seed=1)
    flat = floats((5, 8), ty, seed=2)
    text = ir("""func.func @forward(%q: tensor<1x2x?x16x$T>, %flat: tensor<?x8x$T>, %pos: index) -> (tensor<1x2x?x16x$T>, tensor<1x2x?x16x$T>, tensor<?x8x$T>) {
      %r = mlx.rope %q dims 16 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<1x2x?x16x$T> -> tensor<1x2x?x16x$T>
      %t = mlx.rope %q dims 8 traditional base 5.000000e+02 scale 2.500000e-01 offset [3] : tensor<1x2x?x16x$T> -> tensor<1x2x?x16x$T>
      %f = mlx.rope %flat dims 8 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<?x8x$T> -> tensor<?x8x$T>
      func.return %r, %t, %f : tensor<1x2x?x16x$T>, tensor<1x2x?x16x$T>, tensor<?x8x$T>
    }""", T=ty)
    for pos in (0, 7, 1000):
        r, t, f = run_ir(text, q, flat, pos)
        # f32 angles of position 1000 are off by up to 1000 * 2^-24 rad.
        tol = 5e-5 if ty == "f32" and pos > 100 else TOL[ty]
        check(r, rope_reference(q, 16, False, 1e4, 1.0, pos), tol)
        check(t, rope_reference(q, 8, True, 500.0, 0.25, 3), tol)
        check(f, rope_reference(flat, 8, False, 1e4, 1.0, pos), tol)


@pytest.mark.parametrize("ty", FLOATS)
def test_rope_with_freqs_and_row_offsets(ty: str) -> None:
    """`freqs` (MLX's inverse frequencies) and per-row start positions: row `b` of a
    left-padded batch starts at `offset + rows[b]` (reference: one call per row)."""
    q = floats((3, 2, 5, 16), ty, seed=3)
    base = 1e4
    inv_freq = base ** (-np.arange(4) * 2.0 / 8)
    freqs = (1.0 / inv_freq).astype(np.float32)
    rows = np.array([0, -2, 5], np.int64)
    text = ir("""func.func @forward(%q: tensor<?x2x?x16x$T>, %f: tensor<4xf32>, %rows: tensor<?xi64>, %pos: index) -> (tensor<?x2x?x16x$T>, tensor<?x2x?x16x$T>) {
      %r = mlx.rope %q dims 8 freqs %f : tensor<4xf32> scale 1.000000e+00 offset [%pos] rows %rows : tensor<?xi64> : tensor<?x2x?x16x$T> -> tensor<?x2x?x16x$T>
      %s = mlx.rope %q dims 8 freqs %f : tensor<4xf32> scale 1.000000e+00 offset [0] rows %rows : tensor<?xi64> : tensor<?x2x?x16x$T> -> tensor<?x2x?x16x$T>
      func.return %r, %s : tensor<?x2x?x16x$T>, tensor<?x2x?x16x$T>
    }""", T=ty)
    for pos in (0, 7):
        r, s = run_ir(text, q, freqs, rows, pos)
        for b, start in enumerate(rows):
            check(r[b : b + 1], rope_reference(q[b : b + 1], 8, False, base, 1.0, pos + int(start)), TOL[ty])
            check(s[b : b + 1], rope_reference(q[b : b + 1], 8, False, base, 1.0, int(start)), TOL[ty])
