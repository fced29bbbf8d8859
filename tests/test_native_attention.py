"""The native attention (`native/kernels/attention.cpp`): `mx.fast.scaled_dot_product_attention`'s
values for every mask it takes (none, "causal" aligned to the end of the keys, bool,
additive), grouped queries, one query row over a long cache (decode: the keys cut into
blocks on the pool) and many (prefill: packed keys), odd head sizes, against float64
and MLX's own op, on every instruction-set path this CPU runs, with 1 and 2 threads
(the same bits); rows whose mask keeps nothing as MLX's composition gives them;
float16/bfloat16 computed in float32; strided operands; the CPU backend's choice of it
(`runtime/cpu/fast.py`). `python tests/test_native_attention.py` measures it against
the CPU composition."""

from __future__ import annotations

import functools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import mlxir  # noqa: F401  # isort: skip  (before mlx.core: the benchmark's composition runs on the machine's BLAS)
import mlx.core as mx
import numpy as np
import pytest
from native_support import bits_equal, float64, host_isas, isa, kernels, relative_error, threads

MASKS = ["none", "causal", "bool", "additive"]
# (batch, query heads, K/V heads, L, S, D): decode over long caches, prefill, grouped
# queries, odd D, S = 1, L > S, more than 16 rows a K/V head with grouping.
SHAPES = [
    (1, 8, 8, 1, 1000, 64),
    (1, 4, 2, 1, 4097, 128),
    (1, 2, 2, 129, 129, 64),
    (2, 4, 2, 5, 37, 17),
    (1, 2, 1, 7, 3, 33),
    (1, 3, 3, 4, 1, 16),
    (1, 8, 2, 9, 200, 80),
    (2, 2, 1, 70, 150, 7),
]


def reference(q: mx.array, k: mx.array, v: mx.array, scale: float, mask: Any) -> np.ndarray:
    """MLX's composition in float64: scaled queries, scores, the mask (a bool one keeps
    True and puts float32's lowest elsewhere, so that a row keeping nothing averages
    V; an additive one adds), the softmax, the weighted values."""
    q64, k64, v64 = float64(q), float64(k), float64(v)
    groups = q64.shape[1] // k64.shape[1]
    k64, v64 = np.repeat(k64, groups, axis=1), np.repeat(v64, groups, axis=1)
    scores = (q64 * float(np.float32(scale))) @ np.swapaxes(k64, -1, -2)
    length, slots = scores.shape[-2:]
    if isinstance(mask, str):
        mask = mx.array(np.tril(np.ones((length, slots), bool), slots - length))
    if mask is not None:
        if mask.dtype == mx.bool_:
            scores = np.where(np.array(mask), scores, float(np.finfo(np.float32).min))
        else:
            scores = scores + float64(mask)
    with np.errstate(invalid="ignore"):
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v64


def operands(shape: tuple[int, ...], seed: int, dtype: mx.Dtype = mx.float32) -> tuple[mx.array, mx.array, mx.array]:
    batch, heads, kv_heads, length, slots, depth = shape
    rng = np.random.default_rng(seed)
    q, k, v = (
        mx.array(rng.standard_normal(s).astype(np.float32)).astype(dtype)
        for s in [(batch, heads, length, depth), (batch, kv_heads, slots, depth), (batch, kv_heads, slots, depth)]
    )
    return q, k, v


def make_mask(kind: str, shape: tuple[int, ...], seed: int) -> Any:
    batch, heads, _, length, slots, _ = shape
    rng = np.random.default_rng(seed + 1)
    if kind == "none":
        return None
    if kind == "causal":
        return "causal"
    if kind == "bool":
        keep = rng.random((batch, 1, length, slots)) > 0.3
        keep[..., 0] = True  # rows that keep nothing: test_fully_masked_rows
        return mx.array(keep)
    bias = rng.standard_normal((1, heads, length, slots)).astype(np.float32)
    bias[..., 1::5] = -np.inf  # some keys out, never a whole row (S = 1 keeps its one)
    return mx.array(bias)


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_attention_matches_float64_and_mlx(path: str, mask_kind: str, shape: tuple[int, ...]) -> None:
    module = kernels()
    seed = sum(shape)
    q, k, v = operands(shape, seed)
    mask = make_mask(mask_kind, shape, seed)
    scale = shape[-1] ** -0.5
    with isa(path):
        with threads(1):
            one = module.attention(q, k, v, scale=scale, mask=mask)
            mx.eval(one)
        with threads(2):
            two = module.attention(q, k, v, scale=scale, mask=mask)
            mx.eval(two)
    assert bits_equal(one, two), "the result depends on the thread count"
    expected = reference(q, k, v, scale, mask)
    error = relative_error(one, expected)
    mlx_error = relative_error(mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask), expected)
    # MLX's own error is 1e-7 to 3e-6 here; the native one 1e-7 to 1e-6, within a
    # rounding or two of it where both are near float32's epsilon.
    assert error <= 1e-5 and error <= max(2 * mlx_error, 5e-7), f"{error:.3g} against float64 (MLX's own: {mlx_error:.3g})"


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize(("length", "slots"), [(3, 600), (70, 90), (5, 2)])
def test_fully_masked_rows(path: str, length: int, slots: int) -> None:
    """A row whose mask keeps nothing is MLX's composition's: a bool mask (and a causal
    one where L > S) puts float32's lowest on every score, so the row averages V; an
    additive mask of -inf makes the softmax NaN. In one pass (prefill), across the
    decode blocks (3 rows over 600 keys), and with S < L."""
    module = kernels()
    shape = (1, 2, 1, length, slots, 24)
    q, k, v = operands(shape, 7)
    keep = np.random.default_rng(8).random((length, slots)) > 0.5
    keep[0] = False
    keep[1:, 0] = True
    bias = np.where(keep, 0.0, -np.inf).astype(np.float32)
    mean = float64(v).mean(axis=2)  # [B, Hkv, D]
    with isa(path):
        kept = module.attention(q, k, v, scale=0.3, mask=mx.array(keep))
        added = module.attention(q, k, v, scale=0.3, mask=mx.array(bias))
        causal = module.attention(q, k, v, scale=0.3, mask="causal")
    np.testing.assert_allclose(float64(kept)[:, :, 0], np.broadcast_to(mean, (1, 2, 24)), rtol=1e-5, atol=1e-6)
    assert np.isnan(np.array(added)[:, :, 0]).all()
    assert not np.isnan(np.array(added)[:, :, 1:]).any()
    for got, mask in ((kept, mx.array(keep)), (added, mx.array(bias)), (causal, "causal")):
        expected = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.3, mask=mask)
        np.testing.assert_allclose(np.array(got), np.array(expected), rtol=2e-5, atol=2e-6, equal_nan=True)
    if length > slots:  # the first L - S positions see no key
        np.testing.assert_allclose(float64(causal)[:, :, : length - slots], np.broadcast_to(mean[:, :, None], (1, 2, length - slots, 24)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [mx.float16, mx.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(1, 4, 2, 1, 700, 64), (1, 2, 2, 40, 40, 24)], ids=["decode", "prefill"])
def test_half_operands_in_float32(dtype: mx.Dtype, shape: tuple[int, ...]) -> None:
    """float16/bfloat16 operands are read as float32 and the result rounded once: no
    worse than MLX, which composes in the operands' dtype."""
    module = kernels()
    q, k, v = operands(shape, 11, dtype)
    mask = mx.array(np.random.default_rng(3).standard_normal((shape[3], shape[4])).astype(np.float32)).astype(dtype)
    for m in (None, "causal", mask):
        got = module.attention(q, k, v, scale=0.125, mask=m)
        assert got.dtype == dtype and got.shape == (shape[0], shape[1], shape[3], shape[5])
        expected = reference(q, k, v, 0.125, m)
        error = relative_error(got, expected)
        mlx_error = relative_error(mx.fast.scaled_dot_product_attention(q, k, v, scale=0.125, mask=m), expected)
        rounding = 2.0**-11 if dtype == mx.float16 else 2.0**-8
        assert error <= min(mlx_error, rounding) + 1e-7, f"{error:.3g} (MLX's own: {mlx_error:.3g})"


@pytest.mark.parametrize("path", host_isas())
def test_strided_operands_and_broadcast_masks(path: str) -> None:
    """K/V as slices of a larger cache (read in place), queries transposed from
    [B, L, H, D], keys whose last axis is not contiguous (copied), masks that
    broadcast: [L, S], [H, 1, S], [S]."""
    module = kernels()
    rng = np.random.default_rng(5)
    cache_k = mx.array(rng.standard_normal((1, 4, 300, 40)).astype(np.float32))
    cache_v = mx.array(rng.standard_normal((1, 4, 300, 40)).astype(np.float32))
    q = mx.array(rng.standard_normal((1, 30, 8, 40)).astype(np.float32)).transpose(0, 2, 1, 3)
    k, v = cache_k[:, :, 10:251], cache_v[:, :, 10:251]
    k_columns = mx.array(rng.standard_normal((1, 4, 40, 241)).astype(np.float32)).swapaxes(-1, -2)
    masks: list[Any] = [
        None,
        "causal",
        mx.array(rng.random((30, 241)) > 0.2),
        mx.array(rng.standard_normal((8, 1, 241)).astype(np.float32)),
        mx.array(rng.random(241) > 0.5),
    ]
    with isa(path):
        for keys in (k, k_columns):
            for mask in masks:
                got = module.attention(q, keys, v, scale=0.2, mask=mask)
                expected = reference(q, keys, v, 0.2, mask)
                assert relative_error(got, expected) < 1e-5, f"mask {mask if mask is None or isinstance(mask, str) else mask.shape}"
        single = q[:, :, -1:]  # decode: one row, a strided view
        got = module.attention(single, k, v, scale=0.2, mask=None)
        assert relative_error(got, reference(single, k, v, 0.2, None)) < 1e-5


def test_empty_and_compiled() -> None:
    """No keys gives zeros (MLX's composition: an empty softmax times an empty V), no
    queries an empty result; the op traces inside `mx.compile`, and values with
    another last size than the queries work."""
    module = kernels()
    q = mx.ones((1, 2, 3, 8))
    empty = mx.zeros((1, 1, 0, 8))
    for mask in (None, "causal"):
        got = module.attention(q, empty, empty, scale=1.0, mask=mask)
        assert got.shape == (1, 2, 3, 8) and not np.array(got).any()
    assert module.attention(mx.ones((1, 2, 0, 8)), mx.ones((1, 1, 4, 8)), mx.ones((1, 1, 4, 8)), scale=1.0).shape == (1, 2, 0, 8)
    q, k, v = operands((2, 4, 2, 6, 50, 16), 9)
    wide_v = mx.concatenate([v, v[..., :5]], axis=-1)
    got = module.attention(q, k, wide_v, scale=0.25, mask="causal")
    np.testing.assert_allclose(float64(got), reference(q, k, wide_v, 0.25, "causal"), rtol=1e-5, atol=1e-5)
    compiled = mx.compile(lambda a, b, c: module.attention(a, b, c, scale=0.25, mask="causal") * 2)
    np.testing.assert_allclose(float64(compiled(q, k, v)), 2 * reference(q, k, v, 0.25, "causal"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("shapes", "dtype", "mask", "message"),
    [
        (((1, 2, 3, 8), (1, 2, 4, 8), (1, 2, 4)), mx.float32, None, "rank 4"),
        (((1, 2, 3, 8), (1, 2, 4, 9), (1, 2, 4, 8)), mx.float32, None, "k must be"),
        (((1, 3, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8)), mx.float32, None, "multiple"),
        (((1, 2, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8)), mx.int32, None, "one dtype"),
        (((1, 2, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8)), mx.float32, "upper", "causal"),
        (((1, 2, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8)), mx.float32, mx.zeros((3, 5)), "broadcast"),
        (((1, 2, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8)), mx.float32, mx.zeros((3, 4), mx.int32), "bool"),
    ],
)
def test_attention_refuses_what_it_cannot_compute(
    shapes: tuple[tuple[int, ...], ...], dtype: mx.Dtype, mask: Any, message: str
) -> None:
    module = kernels()
    q, k, v = (mx.zeros(s, dtype=dtype) for s in shapes)
    with pytest.raises(ValueError, match=message):
        module.attention(q, k, v, scale=1.0, mask=mask)


def test_cpu_backend_runs_it_for_float32() -> None:
    """`cpu_attention` takes the native kernel for float32 operands (the same bits as
    calling it), and the composition for half operands, in an export's block
    (`native.suspended`), and for masks the kernel does not take."""
    from mlxir.runtime.cpu import fast
    from mlxir.runtime.cpu import native as cpu_native

    module = kernels()
    q, k, v = operands((1, 4, 2, 3, 20, 16), 13)
    keep = mx.array(np.random.default_rng(1).random((3, 20)) > 0.3)
    native_path = module.isa() != "portable"
    for mask in (None, "causal", keep):
        got = fast.cpu_attention(q, k, v, scale=0.25, mask=mask)
        direct = module.attention(q, k, v, scale=0.25, mask=mask)
        composed = _composition(q, k, v, 0.25, mask)
        assert bits_equal(got, direct if native_path else composed)
        with cpu_native.suspended():
            assert bits_equal(fast.cpu_attention(q, k, v, scale=0.25, mask=mask), composed)
    half = [a.astype(mx.float16) for a in (q, k, v)]
    assert bits_equal(fast.cpu_attention(*half, scale=0.25, mask=keep), fast.cpu_sdpa(*half, scale=0.25, mask=keep))
    whole = mx.array(np.arange(60).reshape(3, 20) % 3 - 1)  # an int32 mask, added: the composition's
    assert bits_equal(fast.cpu_attention(q, k, v, scale=0.25, mask=whole), fast.cpu_sdpa(q, k, v, scale=0.25, mask=whole))


def _composition(q: mx.array, k: mx.array, v: mx.array, scale: float, mask: Any) -> mx.array:
    from mlxir.runtime.cpu import fast

    if isinstance(mask, str):
        return mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
    return fast.cpu_sdpa(q, k, v, scale=scale, mask=mask)


# --------------------------------------------------------------------------- benchmark


def _median_ms(runs: dict[str, Callable[[], mx.array]], module: Any, repeats: int) -> dict[str, float]:
    """Each run's median milliseconds (evaluation included), the runs alternating;
    a name ending in a digit runs the native kernels on that many threads."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats + 1):  # the first round warms up
        for name, run in runs.items():
            if name[-1].isdigit():
                module.set_threads(int(name[-1]))
            start = time.perf_counter()
            mx.eval(run())
            times[name].append(time.perf_counter() - start)
    return {name: 1e3 * statistics.median(t[1:]) for name, t in times.items()}


def benchmark(repeats: int = 21, path: str = "avx512") -> None:
    """Decode (one query row over a slice of a 4096-slot cache) and causal prefill at a
    56M Llama's attention (8 heads x 64) and Qwen3-0.6B's (16 query / 8 K/V heads x
    128), float32: the CPU composition (`cpu_sdpa`, MLX's own for "causal") and the
    native kernel on 1 and 2 threads. The composition's products use the BLAS's own
    thread count (run with OPENBLAS_NUM_THREADS=1, then 2). `path` limits the native
    kernel's instruction set (this module's import left it at the best one)."""
    from mlxir.runtime.cpu import native

    module = native.kernels()
    assert module is not None and hasattr(module, "attention"), "the native attention is not built"
    print(f"native path: {module.limit_isa(path)}")
    print("heads/kv x dim, L, S: milliseconds (median), systems alternating; nat1/nat2 = native on 1/2 threads")
    for heads, kv_heads, depth in ((8, 8, 64), (16, 8, 128)):
        cache_k = mx.random.normal((1, kv_heads, 4096, depth), key=mx.random.key(1))
        cache_v = mx.random.normal((1, kv_heads, 4096, depth), key=mx.random.key(2))
        for length, slots in ((1, 512), (1, 2048), (128, 128), (512, 512)):
            q = mx.random.normal((1, heads, length, depth), key=mx.random.key(0))
            k, v = cache_k[:, :, :slots], cache_v[:, :, :slots]
            mx.eval(q, k, v)
            scale = depth**-0.5
            runs: dict[str, Callable[[], mx.array]] = {
                "composition": functools.partial(_composition, q, k, v, scale, "causal"),
                "nat1": functools.partial(module.attention, q, k, v, scale=scale, mask="causal"),
                "nat2": functools.partial(module.attention, q, k, v, scale=scale, mask="causal"),
            }
            medians = _median_ms(runs, module, repeats if length < 512 else max(5, repeats // 2))
            print(f"{heads}/{kv_heads} x {depth}, {length}, {slots}: " + "  ".join(f"{n} {t:.3f}" for n, t in medians.items()), flush=True)


if __name__ == "__main__":
    benchmark(int(sys.argv[1]) if len(sys.argv) > 1 else 21, *sys.argv[2:3])
