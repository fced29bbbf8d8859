"""The native row-wise and elementwise kernels (`native/kernels/elementwise.cpp`):
`rms_norm`, `layer_norm`, `softmax` over the last axis and `exp`, `sigmoid`, `erf`,
against float64 and MLX's own ops, over ragged row lengths, strided operands, every
dtype, every instruction-set path this CPU runs, special values, and 1 and 2 threads
(the same bits whatever the thread count); and the CPU backend's choice of them
(`runtime/cpu/normalization.py`, `runtime/cpu/polynomial.py`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
from native_support import bits_equal, float64, host_isas, isa, kernels, threads

from mlxir.evaluator import KERNELS as GENERIC_KERNELS
from mlxir.runtime.cpu import native as cpu_native
from mlxir.runtime.cpu import polynomial
from mlxir.runtime.cpu.backend import CPU

DTYPES = [mx.float32, mx.float16, mx.bfloat16]
LENGTHS = [1, 7, 16, 17, 4097]
UNARY = ["exp", "sigmoid", "erf"]
EPS = 1e-5


def elementwise() -> ModuleType:
    module = kernels()
    if not hasattr(module, "rms_norm"):
        pytest.fail("the native library was built without the elementwise family")
    return module


def _erf64(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


EXACT: dict[str, Callable[[np.ndarray], np.ndarray]] = {"exp": np.exp, "sigmoid": _sigmoid64, "erf": _erf64}
DOMAIN = {"exp": (-110.0, 90.0), "sigmoid": (-120.0, 120.0), "erf": (-5.0, 5.0)}


def _float32s(op: str) -> np.ndarray:
    """Every 2039th float32 bit pattern inside the op's interesting range (all
    exponents, subnormal results included), both signs."""
    bits = np.arange(0, 2**32, 2039, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    low, high = DOMAIN[op]
    return values[np.isfinite(values) & (values > low) & (values < high)]


_REFERENCE: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def _sample(op: str) -> tuple[np.ndarray, np.ndarray]:
    if op not in _REFERENCE:
        x = _float32s(op)
        with np.errstate(over="ignore", under="ignore"):
            _REFERENCE[op] = (x, EXACT[op](x.astype(np.float64)))
    return _REFERENCE[op]


def ulp_error(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of float32's last place at `exact` (2^-149 at the
    bottom); results past float32's range must be inf (then 0)."""
    magnitude = np.abs(exact)
    _, exponent = np.frexp(magnitude)
    ulp = np.where(magnitude > 0, np.ldexp(1.0, exponent - 24), 0.0)
    ulp = np.maximum(ulp, 2.0**-149)
    with np.errstate(over="ignore", invalid="ignore"):
        overflow = np.isinf(exact.astype(np.float32))
        error = np.abs(got.astype(np.float64) - exact) / ulp
        return np.where(overflow, np.where(got.astype(np.float64) == np.sign(exact) * np.inf, 0.0, np.inf), error)


def same_values(a: mx.array, b: mx.array) -> bool:
    """The same bits, but for NaN payloads (NaN where the other is NaN)."""
    nan = np.isnan(float64(a))
    if a.dtype != b.dtype or not np.array_equal(nan, np.isnan(float64(b))):
        return False
    return bool(np.array_equal(np.array(a.view(mx.uint16 if a.itemsize == 2 else mx.uint32))[~nan],
                               np.array(b.view(mx.uint16 if b.itemsize == 2 else mx.uint32))[~nan]))


# --------------------------------------------------------------------------- exp, sigmoid, erf


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("op", UNARY)
def test_unary_within_two_ulp_of_float64_and_the_same_for_any_thread_count(path: str, op: str) -> None:
    module = elementwise()
    x, exact = _sample(op)
    with isa(path):
        one = getattr(module, op)(mx.array(x))
        mx.eval(one)
        with threads(2):
            two = getattr(module, op)(mx.array(x))
            mx.eval(two)
    assert bits_equal(one, two), "the result depends on the thread count"
    error = ulp_error(np.array(one), exact)
    # MLX's own flushes results under float32's smallest normal number: compared on the rest.
    normal = np.abs(exact) >= 2.0**-126
    mlx_error = ulp_error(np.array(getattr(mx, op)(mx.array(x))), exact)[normal].max()
    assert error.max() <= 2.0, f"{error.max():.3g} ulp at {x[error.argmax()]!r} (MLX's own: {mlx_error:.3g})"
    assert error[normal].max() <= max(mlx_error, 1.0)


SPECIAL = np.array(
    [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -1e-45, 1e-30, -1e-30, 88.72, 88.73, -87.3, -103.9, -104.5,
     -200.0, 200.0, 3.4e38, -3.4e38, 20.0, -20.0, 3.9, -3.9, 4.5, 0.921875, -0.921875],
    dtype=np.float32,
)


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("op", UNARY)
def test_unary_special_values(path: str, op: str) -> None:
    module = elementwise()
    with isa(path):
        got = np.array(getattr(module, op)(mx.array(SPECIAL)))
    with np.errstate(over="ignore"):
        exact = EXACT[op](SPECIAL.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(SPECIAL))
    finite = ~np.isnan(SPECIAL)
    assert ulp_error(got[finite], exact[finite]).max() <= 2.0
    if op == "erf":  # odd: -0 stays -0
        assert np.signbit(got[SPECIAL == 0]).tolist() == [False, True]


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("dtype", [mx.float16, mx.bfloat16], ids=str)
@pytest.mark.parametrize("length", LENGTHS)
def test_unary_half_types_round_the_float32_result_once(path: str, dtype: mx.Dtype, length: int) -> None:
    module = elementwise()
    x = (mx.random.normal((3, length), key=mx.random.key(length)) * 4).astype(dtype)
    x = mx.concatenate([x, mx.array([[math.inf, -math.inf, math.nan] + [0.0] * (length - 3)] if length >= 3
                                    else [[math.nan] * length], dtype=dtype)])
    with isa(path):
        for op in UNARY:
            got = getattr(module, op)(x)
            wide = getattr(module, op)(x.astype(mx.float32)).astype(dtype)
            assert got.dtype == dtype
            assert same_values(got, wide), op


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("length", LENGTHS)
def test_unary_ragged_lengths_and_strided_operands(path: str, length: int) -> None:
    module = elementwise()
    wide = mx.random.normal((5, 2 * length + 1), key=mx.random.key(length)) * 3
    views = {
        "contiguous": wide[:, :length],  # rows of a wider array: not contiguous
        "every other": wide[:, ::2],
        "transposed": wide.T,  # contiguous in column order: the output keeps it
        "broadcast": mx.broadcast_to(wide[:1, :length], (4, length)),
        "flat": wide.reshape(-1)[: length],
    }
    with isa(path):
        for name, x in views.items():
            for op in UNARY:
                got = getattr(module, op)(x)
                assert got.shape == x.shape, name
                exact = EXACT[op](float64(x))
                assert ulp_error(np.array(got).reshape(-1), exact.reshape(-1)).max() <= 2.0, (name, op)


# --------------------------------------------------------------------------- norms and softmax


def _reference(op: str, x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None) -> np.ndarray:
    if op == "softmax":
        shifted = np.exp(x - x.max(-1, keepdims=True))
        return shifted / shifted.sum(-1, keepdims=True)
    if op == "rms_norm":
        y = x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS)
    else:
        centered = x - x.mean(-1, keepdims=True)
        y = centered / np.sqrt((centered * centered).mean(-1, keepdims=True) + EPS)
    if weight is not None:
        y = y * weight
    return y + bias if bias is not None else y


def _run(module: Any, op: str, x: mx.array, weight: mx.array | None, bias: mx.array | None) -> mx.array:
    if op == "softmax":
        return module.softmax(x)
    if op == "rms_norm":
        return module.rms_norm(x, weight, EPS)
    return module.layer_norm(x, weight, bias, EPS)


def _mlx(op: str, x: mx.array, weight: mx.array | None, bias: mx.array | None) -> mx.array:
    if op == "softmax":
        return mx.softmax(x, axis=-1)
    if op == "rms_norm":
        return mx.fast.rms_norm(x, weight, EPS)
    return mx.fast.layer_norm(x, weight, bias, EPS)


def row_error(result: mx.array, reference: np.ndarray) -> float:
    """The largest error of a row against float64, relative to that row's magnitude."""
    scale = np.abs(reference).max(-1, keepdims=True)
    return float((np.abs(float64(result) - reference) / np.where(scale > 0, scale, 1)).max())


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("op", ["rms_norm", "layer_norm", "softmax"])
def test_rows_match_float64_and_mlx(path: str, dtype: mx.Dtype, length: int, op: str) -> None:
    module = elementwise()
    rows = max(3, 40000 // length)  # enough for several of the pool's chunks
    kx, kw, kb = mx.random.split(mx.random.key(length * 7 + len(op)), 3)
    x = (mx.random.normal((rows, length), key=kx) * 3 + 1).astype(dtype)
    weight = mx.random.normal((length,), key=kw).astype(dtype) if op != "softmax" else None
    bias = mx.random.normal((length,), key=kb).astype(dtype) if op == "layer_norm" else None
    reference = _reference(op, float64(x), None if weight is None else float64(weight),
                           None if bias is None else float64(bias))
    with isa(path):
        one = _run(module, op, x, weight, bias)
        mx.eval(one)
        with threads(2):
            two = _run(module, op, x, weight, bias)
            mx.eval(two)
    assert bits_equal(one, two), "the result depends on the thread count"
    expected = _mlx(op, x, weight, bias)
    assert one.dtype == expected.dtype and one.shape == expected.shape
    error, mlx_error = row_error(one, reference), row_error(expected, reference)
    limit = 1e-6 if dtype == mx.float32 else max(1.25 * mlx_error, 1e-6)
    assert error <= limit, f"{error:.3g} against float64 (MLX's own: {mlx_error:.3g})"


@pytest.mark.parametrize("path", host_isas())
def test_norms_without_weight_or_bias_mixed_dtypes_and_strided_operands(path: str) -> None:
    module = elementwise()
    wide = mx.random.normal((6, 130), key=mx.random.key(5)) * 2
    x = wide[::2, 1:130]  # every other row, shifted: neither contiguous nor aligned
    w_wide = mx.random.normal((258,), key=mx.random.key(6))
    weight = w_wide[::2][:129]  # a strided vector
    bias = mx.random.normal((129,), key=mx.random.key(7)).astype(mx.bfloat16)
    xs, ws, bs = float64(x), float64(weight), float64(bias)
    with isa(path):
        for w, b in [(None, None), (weight, None), (None, bias), (weight, bias)]:
            ref_w = None if w is None else ws
            ref_b = None if b is None else bs
            got = module.layer_norm(x, w, b, EPS)
            assert got.dtype == mx.fast.layer_norm(x, w, b, EPS).dtype
            assert row_error(got, _reference("layer_norm", xs, ref_w, ref_b)) <= 1e-6
        got = module.rms_norm(x.astype(mx.bfloat16), weight, EPS)  # bfloat16 by float32: float32 out
        assert got.dtype == mx.float32
        reference = _reference("rms_norm", float64(x.astype(mx.bfloat16)), ws, None)
        assert row_error(got, reference) <= 1e-6
        got = module.rms_norm(mx.broadcast_to(x[:1], (4, 129)), None, EPS)
        assert row_error(got, _reference("rms_norm", np.broadcast_to(xs[:1], (4, 129)), None, None)) <= 1e-6
        got = module.softmax(x.T)
        assert row_error(got, _reference("softmax", xs.T, None, None)) <= 1e-6


@pytest.mark.parametrize("path", host_isas())
def test_layer_norm_of_rows_far_from_zero(path: str) -> None:
    """A row's mean rounded to float32 shifts every output of the row by up to half its
    ulp over the row's deviation: kept in two floats, it does not."""
    module = elementwise()
    x = mx.random.normal((64, 1000), key=mx.random.key(8)) * 0.5 + 3000
    reference = _reference("layer_norm", float64(x), None, None)
    with isa(path):
        error = row_error(module.layer_norm(x, None, None, EPS), reference)
    mlx_error = row_error(mx.fast.layer_norm(x, None, None, EPS), reference)
    assert error <= 1e-6, f"{error:.3g} (MLX's own: {mlx_error:.3g})"


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_softmax_special_rows(path: str, dtype: mx.Dtype) -> None:
    module = elementwise()
    inf, nan = math.inf, math.nan
    rows = [
        [0.0, -inf, 1.0, -inf, 2.0, 3.0, -inf, 0.5, 0.25, -1.0, -inf, 4.0, 1.0, 1.0, 1.0, 1.0, 2.0],  # masked
        [-inf] * 17,  # every key masked: NaN, as MLX and torch give
        [1.0, inf] + [0.0] * 15,  # NaN
        [1.0, nan] + [0.0] * 15,  # NaN
        [60000.0, -60000.0] + [0.0] * 15,  # large (a half type's range)
        [-1e4] * 17,  # equal: uniform
    ]
    x = mx.array(rows, dtype=mx.float32).astype(dtype)
    with isa(path):
        got = module.softmax(x)
        mx.eval(got)
    expected = mx.softmax(x, axis=-1, precise=True)
    assert np.array_equal(np.isnan(float64(got)), np.isnan(float64(expected)))
    finite = ~np.isnan(float64(expected))
    np.testing.assert_allclose(float64(got)[finite], float64(expected)[finite], atol=2e-3, rtol=0)
    assert float64(got)[0, 1] == 0.0 and float64(got)[4, 0] == 1.0


@pytest.mark.parametrize("path", host_isas())
def test_norms_of_special_values(path: str) -> None:
    module = elementwise()
    x = mx.array([[0.0] * 17, [1e-30] * 17, [3e38, -3e38] + [0.0] * 15, [math.nan] + [1.0] * 16], dtype=mx.float32)
    with isa(path):
        rms = float64(module.rms_norm(x, None, EPS))
        layer = float64(module.layer_norm(x, None, None, EPS))
    assert (rms[0] == 0).all() and (layer[0] == 0).all() and (layer[1] == 0).all()
    # Squares past float32's range are inf, as in MLX's (and torch's) float32 arithmetic.
    assert bits_equal(mx.array(rms[2]), mx.array(float64(mx.fast.rms_norm(x, None, EPS))[2]))
    assert np.isnan(rms[3]).all() and np.isnan(layer[3]).all()


def test_rows_keep_leading_dimensions_trace_in_compile_and_keep_their_properties() -> None:
    module = elementwise()
    x = mx.random.normal((2, 3, 48), key=mx.random.key(9))
    w = mx.random.normal((48,), key=mx.random.key(10))
    compiled = mx.compile(lambda a: module.rms_norm(a, w, 1e-5) + module.rms_norm(a, w, 10.0) + module.exp(a))
    result = compiled(x)
    assert result.shape == (2, 3, 48)
    expected = (_reference("rms_norm", float64(x), float64(w), None) + float64(module.rms_norm(x, w, 10.0))
                + np.exp(float64(x)))
    np.testing.assert_allclose(float64(result), expected, rtol=1e-5, atol=1e-5)
    for op in ("rms_norm", "layer_norm", "softmax", *UNARY):
        empty = getattr(module, op)(*([mx.zeros((0, 8))] + ([None, EPS] if op == "rms_norm" else
                                                           [None, None, EPS] if op == "layer_norm" else [])))
        assert empty.shape == (0, 8)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.rms_norm(mx.zeros((2, 8), dtype=mx.int32), None, EPS), "float32, float16 or bfloat16"),
        (lambda m: m.rms_norm(mx.zeros((2, 8)), mx.zeros((7,)), EPS), "as long as x's last axis"),
        (lambda m: m.layer_norm(mx.zeros((2, 8)), None, mx.zeros((1, 8)), EPS), "one-dimensional"),
        (lambda m: m.softmax(mx.array(1.0)), "at least one axis"),
        (lambda m: m.exp(mx.zeros((4,), dtype=mx.int32)), "float32, float16 or bfloat16"),
    ],
)
def test_refuses_what_it_cannot_compute(call: Callable[[Any], Any], message: str) -> None:
    module = elementwise()
    with pytest.raises(ValueError, match=message):
        call(module)


# --------------------------------------------------------------------------- the CPU backend's choice


def _cpu_kernel(op: str, props: dict[str, Any], dtype: mx.Dtype) -> Callable[[list[Any]], Any]:
    factory = CPU.kernel_factory(op)
    assert factory is not None
    return factory(props, [dtype])


def test_cpu_backend_runs_the_native_rows_where_covered() -> None:
    module = elementwise()
    x = mx.random.normal((4, 96), key=mx.random.key(11))
    w = mx.random.normal((96,), key=mx.random.key(12))
    b = mx.random.normal((96,), key=mx.random.key(13))
    rms = {"eps": EPS}
    layer = {"eps": EPS, "operandSegmentSizes": (1, 1, 1)}
    softmax_last = {"axes": (-1,), "precise": False}
    (got,) = _cpu_kernel("mlx.rms_norm", rms, mx.float32)([x, w])
    assert bits_equal(got, module.rms_norm(x, w, EPS))
    (got,) = _cpu_kernel("mlx.layer_norm", layer, mx.float32)([x, w, b])
    assert bits_equal(got, module.layer_norm(x, w, b, EPS))
    (got,) = _cpu_kernel("mlx.softmax", softmax_last, mx.float32)([x])
    assert bits_equal(got, module.softmax(x))
    (got,) = _cpu_kernel("mlx.softmax", {"axes": (1,), "precise": True}, mx.float32)([x])
    assert bits_equal(got, module.softmax(x))
    # Not covered: another axis, a weight of another length (MLX's error), an export.
    (got,) = _cpu_kernel("mlx.softmax", {"axes": (0,), "precise": False}, mx.float32)([x])
    assert bits_equal(got, mx.softmax(x, axis=0))
    with pytest.raises(ValueError):
        mx.eval(_cpu_kernel("mlx.rms_norm", rms, mx.float32)([x, w[:5]]))
    with cpu_native.suspended():
        (got,) = _cpu_kernel("mlx.rms_norm", rms, mx.float32)([x, w])
        assert bits_equal(got, GENERIC_KERNELS["mlx.rms_norm"](rms, [mx.float32])([x, w])[0])
        (got,) = _cpu_kernel("mlx.layer_norm", layer, mx.float32)([x, w, b])
        assert bits_equal(got, mx.fast.layer_norm(x, w, b, EPS))


@pytest.mark.parametrize("op", UNARY)
def test_cpu_backend_runs_the_native_transcendentals_else_the_polynomial(op: str) -> None:
    module = elementwise()
    kernel = _cpu_kernel(f"mlx.{op}", {}, mx.float32)
    for size in (5, polynomial.POLYNOMIAL_MIN_ELEMENTS):
        x = mx.random.normal((size,), key=mx.random.key(size)) * 4
        (got,) = kernel([x])
        assert bits_equal(got, getattr(module, op)(x))
        with cpu_native.suspended():
            (got,) = kernel([x])
        path = polynomial._COMPILED[f"mlx.{op}"](x) if size >= polynomial.POLYNOMIAL_MIN_ELEMENTS else getattr(mx, op)(x)  # pyright: ignore[reportPrivateUsage]
        assert bits_equal(got, path)
    ints = mx.arange(8, dtype=mx.int32)
    (got,) = _cpu_kernel(f"mlx.{op}", {}, mx.float32)([ints])
    assert bits_equal(got, getattr(mx, op)(ints))
