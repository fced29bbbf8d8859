"""The native depthwise convolution (`native/kernels/convolution.cpp`): channels-last
`conv_general` with one channel per group, against float64 and MLX's own
`mx.conv_general`, over 3x3 to 7x7 kernels, strides, asymmetric padding, dilation,
kernels larger than the input, channel counts off the vector width, every dtype, every
instruction-set path this CPU runs, and 1 and 2 threads (the same bits); the fused
bias and activation epilogue; the 1-D form; strided operands; the refusals; and the
CPU backend's `mlx.conv_general` and `mlx.conv_bias_activation`: native where it
covers the call, else the tap-by-tap composition (depthwise) or MLX's own
convolution, with the epilogue the unfused ops' own."""

from __future__ import annotations

import contextlib
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np
import pytest
from native_support import bits_equal, float64, host_isas, isa, kernels, relative_error, threads

from mlxir.evaluator import KERNELS as GENERIC_KERNELS
from mlxir.runtime.cpu import native as cpu_native
from mlxir.runtime.cpu.backend import CPU
from mlxir.runtime.cpu.convolution import depthwise_taps


class Case(NamedTuple):
    x_shape: tuple[int, int, int, int]  # N, H, W, C
    kernel: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    lo: tuple[int, int] = (0, 0)
    hi: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)


CASES = {
    "3x3-c1": Case((1, 9, 20, 1), (3, 3), lo=(1, 1), hi=(1, 1)),
    "3x3-s2-c3": Case((2, 11, 21, 3), (3, 3), (2, 2), (1, 1), (1, 1)),
    "3x3-c17-valid": Case((1, 10, 19, 17), (3, 3)),
    "3x3-s2-c144": Case((1, 15, 23, 144), (3, 3), (2, 2), (0, 0), (1, 1)),
    "5x5-c96": Case((1, 9, 26, 96), (5, 5), lo=(2, 2), hi=(2, 2)),
    "7x7-c40-convnext": Case((1, 14, 30, 40), (7, 7), lo=(3, 3), hi=(3, 3)),
    "7x7-c33-larger-than-input": Case((1, 3, 4, 33), (7, 7), lo=(3, 3), hi=(3, 3)),
    "3x3-dilated-asymmetric": Case((2, 12, 27, 19), (3, 3), (1, 2), (2, 0), (1, 3), (2, 3)),
    "5x3-stride3": Case((1, 17, 40, 24), (5, 3), (3, 3), (1, 2), (2, 0)),
    "1x1-c5": Case((1, 3, 9, 5), (1, 1)),
}
DTYPES = [mx.float32, mx.float16, mx.bfloat16]


def reference(
    x: mx.array, w: mx.array, case: Case, bias: mx.array | None = None, activation: str = "none"
) -> np.ndarray:
    """The convolution in float64: the padded input's strided view at each tap, times
    the tap's per-channel weights, summed."""
    x64, w64 = float64(x), float64(w)
    (kh, kw), (sh, sw), (dh, dw) = case.kernel, case.stride, case.dilation
    padded = np.pad(x64, [(0, 0), (case.lo[0], case.hi[0]), (case.lo[1], case.hi[1]), (0, 0)])
    out_h = (padded.shape[1] - dh * (kh - 1) - 1) // sh + 1
    out_w = (padded.shape[2] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x64.shape[0], out_h, out_w, x64.shape[3]))
    for i in range(kh):
        for j in range(kw):
            view = padded[:, i * dh : i * dh + sh * (out_h - 1) + 1 : sh, j * dw : j * dw + sw * (out_w - 1) + 1 : sw]
            out += view * w64[:, i, j, 0]
    if bias is not None:
        out += float64(bias)
    if activation == "relu":
        out = np.maximum(out, 0.0)
    elif activation == "relu6":
        out = np.clip(out, 0.0, 6.0)
    elif activation == "silu":
        out = out / (1.0 + np.exp(-out))
    return out


def native(module: Any, x: mx.array, w: mx.array, case: Case, **epilogue: Any) -> mx.array:
    return module.depthwise_conv2d(
        x, w, stride=list(case.stride), padding_lo=list(case.lo), padding_hi=list(case.hi),
        dilation=list(case.dilation), **epilogue,
    )


def mlx_conv(x: mx.array, w: mx.array, case: Case) -> mx.array:
    return mx.conv_general(
        x, w, stride=list(case.stride), padding=(list(case.lo), list(case.hi)),
        kernel_dilation=list(case.dilation), groups=x.shape[-1],
    )


def operands(case: Case, dtype: mx.Dtype, seed: int) -> tuple[mx.array, mx.array]:
    kx, kw = mx.random.split(mx.random.key(seed))
    channels = case.x_shape[3]
    x = mx.random.normal(case.x_shape, key=kx).astype(dtype)
    w = mx.random.normal((channels, *case.kernel, 1), key=kw).astype(dtype)
    return x, w


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", CASES)
def test_depthwise_matches_float64_and_mlx(path: str, dtype: mx.Dtype, name: str) -> None:
    module = kernels()
    case = CASES[name]
    x, w = operands(case, dtype, sum(case.x_shape) + case.kernel[0])
    expected = reference(x, w, case)
    with isa(path):
        one = native(module, x, w, case)
        mx.eval(one)
        with threads(2):
            two = native(module, x, w, case)
            mx.eval(two)
    mlx_result = mlx_conv(x, w, case)
    assert one.shape == mlx_result.shape and one.dtype == dtype
    assert bits_equal(one, two), "the result depends on the thread count"
    mlx_error = relative_error(mlx_result, expected)
    error = relative_error(one, expected)
    limit = 1e-5 if dtype == mx.float32 else 1.25 * mlx_error + 1e-6
    assert error <= limit, f"{error:.3g} against float64 (MLX's own: {mlx_error:.3g})"
    if dtype == mx.float32:
        assert error <= 1.25 * mlx_error + 1e-7, f"{error:.3g} against float64, MLX's own {mlx_error:.3g}"


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("activation", ["none", "relu", "relu6", "silu"])
def test_depthwise_epilogue_adds_bias_and_activates(path: str, activation: str) -> None:
    module = kernels()
    case = Case((1, 7, 29, 21), (3, 3), (1, 1), (1, 1), (1, 1))
    x, w = operands(case, mx.float32, 5)
    bias = mx.random.normal((21,), key=mx.random.key(6)) * 4
    expected = reference(x, w, case, bias, activation)
    with isa(path):
        result = native(module, x, w, case, bias=bias, activation=activation)
        with threads(2):
            two = native(module, x, w, case, bias=bias, activation=activation)
            mx.eval(result, two)
    assert bits_equal(result, two)
    # Relative to the convolution's own magnitude: the activation adds no error of its
    # own beyond a few ulp (test_depthwise_activations_are_within_ulps).
    scale = float(np.abs(reference(x, w, case, bias)).max())
    error = float(np.abs(float64(result) - expected).max()) / scale
    assert error <= 1e-5, f"{error:.3g} against float64"


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("activation", ["relu", "relu6", "silu"])
def test_depthwise_activations_are_within_ulps(path: str, activation: str) -> None:
    """Through a 1x1 kernel of ones, the output is the activation of exact float32
    values: over +-100, both sides of silu's exp clamp at +-88."""
    module = kernels()
    values = np.concatenate([np.linspace(-100, 100, 4001), [0.0, -1e-30, 1e-30, 6.0, 5.999999]]).astype(np.float32)
    x = mx.array(values.reshape(1, 1, -1, 1).repeat(19, axis=3))
    case = Case((1, 1, values.size, 19), (1, 1))
    w = mx.ones((19, 1, 1, 1))
    with isa(path):
        result = float64(native(module, x, w, case, activation=activation))
    expected = reference(x, w, case, activation=activation)
    # silu(v) under -88 is below 1e-36 (exp's clamp keeps 1 + exp(-v) finite): absolute.
    np.testing.assert_allclose(result, expected, rtol=4e-7, atol=1e-36)


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize(
    ("length", "channels", "k", "stride", "lo", "hi", "dilation"),
    [(30, 17, 3, 1, 1, 1, 1), (41, 64, 7, 2, 3, 2, 1), (5, 3, 9, 1, 4, 4, 1), (33, 20, 3, 1, 2, 2, 2)],
)
def test_depthwise_1d_matches_mlx(
    path: str, length: int, channels: int, k: int, stride: int, lo: int, hi: int, dilation: int
) -> None:
    module = kernels()
    x = mx.random.normal((2, length, channels), key=mx.random.key(length))
    w = mx.random.normal((channels, k, 1), key=mx.random.key(k))
    with isa(path):
        result = module.depthwise_conv1d(x, w, stride=stride, padding_lo=lo, padding_hi=hi, dilation=dilation)
    expected = mx.conv_general(
        x, w, stride=stride, padding=([lo], [hi]), kernel_dilation=dilation, groups=channels
    )
    assert result.shape == expected.shape
    np.testing.assert_allclose(float64(result), float64(expected), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("path", host_isas())
def test_depthwise_reads_strided_operands_and_traces_in_compile(path: str) -> None:
    module = kernels()
    case = Case((1, 9, 18, 24), (3, 3), lo=(1, 1), hi=(1, 1))
    nchw = mx.random.normal((1, 24, 9, 18), key=mx.random.key(7))
    x = nchw.transpose(0, 2, 3, 1)  # channels-last view of a channels-first tensor
    w = mx.random.normal((3, 3, 24, 1), key=mx.random.key(8)).transpose(2, 0, 1, 3)
    with isa(path):
        result = native(module, x, w, case)
        compiled = mx.compile(lambda a: native(module, a, w, case) * 2)(x)
    expected = reference(x, w, case)
    np.testing.assert_allclose(float64(result), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(float64(compiled), 2 * expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "options", "message"),
    [
        ((1, 5, 5, 4), (4, 3, 3, 2), {}, "w \\[C, kh, kw, 1\\]"),
        ((1, 5, 5, 4), (3, 3, 3, 1), {}, "w \\[C, kh, kw, 1\\]"),
        ((5, 5, 4), (4, 3, 3, 1), {}, "x must be \\[N, H, W, C\\]"),
        ((1, 2, 2, 4), (4, 3, 3, 1), {}, "at least as large as the dilated kernel"),
        ((1, 5, 5, 4), (4, 3, 3, 1), {"padding_lo": [-1, 0]}, "padding_lo must be at least 0"),
        ((1, 5, 5, 4), (4, 3, 3, 1), {"stride": [0, 1]}, "stride must be at least 1"),
        ((1, 5, 5, 4), (4, 3, 3, 1), {"dilation": [1]}, "dilation must have 2"),
        ((1, 5, 5, 4), (4, 3, 3, 1), {"activation": "gelu"}, "activation must be"),
        ((1, 5, 5, 4), (4, 3, 3, 1), {"bias": mx.zeros((3,))}, "bias must be \\[C\\]"),
    ],
)
def test_depthwise_refuses_what_it_cannot_compute(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], options: dict[str, Any], message: str
) -> None:
    module = kernels()
    with pytest.raises(ValueError, match=message):
        module.depthwise_conv2d(mx.zeros(x_shape), mx.zeros(w_shape), **options)
    with pytest.raises(ValueError, match="share one dtype"):
        module.depthwise_conv2d(mx.zeros((1, 5, 5, 4)), mx.zeros((4, 3, 3, 1), dtype=mx.float16))


# --------------------------------------------------------------------------- the CPU backend's kernel


def conv_props(case: Case, groups: int, **changes: Any) -> dict[str, object]:
    props: dict[str, object] = {
        "stride": list(case.stride), "padding_lo": list(case.lo), "padding_hi": list(case.hi),
        "kernel_dilation": list(case.dilation), "input_dilation": [1, 1], "groups": groups, "flip": False,
    }
    props.update(changes)
    return props


def test_cpu_backend_runs_covered_depthwise_convolutions_natively() -> None:
    """A depthwise `mlx.conv_general` gives the native kernel's bits; the 1-D form too."""
    module = kernels()
    case = Case((1, 9, 21, 19), (3, 3), (2, 1), (1, 1), (1, 0))
    x, w = operands(case, mx.float32, 11)
    run = CPU.kernel_factory("mlx.conv_general")(conv_props(case, 19), [mx.float32])  # pyright: ignore[reportOptionalCall]
    assert bits_equal(run([x, w])[0], native(module, x, w, case))
    run_1d = CPU.kernel_factory("mlx.conv_general")(  # pyright: ignore[reportOptionalCall]
        {"stride": [2], "padding_lo": [1], "padding_hi": [1], "kernel_dilation": [1], "input_dilation": [1],
         "groups": 19, "flip": False},
        [mx.float32],
    )
    seq = x[:, 0]
    w_1d = w[:, 0]
    assert bits_equal(run_1d([seq, w_1d])[0], module.depthwise_conv1d(seq, w_1d, stride=2, padding_lo=1, padding_hi=1))


@pytest.mark.parametrize(
    ("changes", "x_shape", "w_shape", "dtype"),
    [
        ({}, (1, 9, 21, 8), (8, 3, 3, 2), mx.float32),  # two input channels per group
        ({}, (1, 9, 21, 8), (16, 3, 3, 1), mx.float32),  # a channel multiplier of 2
        ({"input_dilation": [2, 1]}, (1, 9, 21, 8), (8, 3, 3, 1), mx.float32),
        ({"flip": True}, (1, 9, 21, 8), (8, 3, 3, 1), mx.float32),
        ({}, (0, 9, 21, 8), (8, 3, 3, 1), mx.float32),
    ],
)
def test_cpu_backend_leaves_the_rest_to_mlx(
    changes: dict[str, object], x_shape: tuple[int, ...], w_shape: tuple[int, ...], dtype: mx.Dtype
) -> None:
    kernels()
    case = Case((1, 9, 21, 8), (3, 3), lo=(1, 1), hi=(1, 1))
    groups = x_shape[-1] // w_shape[-1]
    props = conv_props(case, groups, **changes)
    x = mx.random.normal(x_shape, key=mx.random.key(12)).astype(dtype)
    w = mx.random.normal(w_shape, key=mx.random.key(13)).astype(dtype)
    with mx.stream(mx.cpu):
        result = CPU.kernel_factory("mlx.conv_general")(props, [dtype])([x, w])[0]  # pyright: ignore[reportOptionalCall]
        expected = GENERIC_KERNELS["mlx.conv_general"](props, [dtype])([x, w])[0]
        assert bits_equal(result, expected)


def test_cpu_backend_takes_the_taps_without_native_kernels_and_keeps_mlx_errors() -> None:
    """Where the native kernels cannot run (suspended: an export), a depthwise
    convolution is the tap-by-tap composition of MLX ops, within float32 rounding of
    float64; a kernel larger than the padded input is MLX's error."""
    kernels()
    case = Case((1, 9, 21, 8), (3, 3), (2, 1), (1, 1), (1, 0), (1, 2))
    x, w = operands(case, mx.float32, 14)
    run = CPU.kernel_factory("mlx.conv_general")(conv_props(case, 8), [mx.float32])  # pyright: ignore[reportOptionalCall]
    with cpu_native.suspended():
        result = run([x, w])[0]
    taps = depthwise_taps(x, w, case.stride, case.lo, case.hi, case.dilation)
    assert bits_equal(result, taps)
    assert relative_error(result, reference(x, w, case)) <= 1e-6
    small = Case((1, 2, 2, 8), (3, 3))
    x_small, _ = operands(small, mx.float32, 15)
    run = CPU.kernel_factory("mlx.conv_general")(conv_props(small, 8), [mx.float32])  # pyright: ignore[reportOptionalCall]
    for suspended in (False, True):
        with cpu_native.suspended() if suspended else contextlib.nullcontext(), pytest.raises(ValueError, match=r"\[conv\]"):
            run([x_small, w])


def test_cpu_backend_takes_the_taps_in_float64() -> None:
    """Float64, which the native kernel does not take: the taps, within float64 rounding."""
    kernels()
    case = Case((2, 7, 10, 5), (3, 3), lo=(1, 1), hi=(1, 1))
    x, w = (a.astype(mx.float64) for a in operands(case, mx.float32, 16))
    with mx.stream(mx.cpu):
        result = CPU.kernel_factory("mlx.conv_general")(conv_props(case, 5), [mx.float64])([x, w])[0]  # pyright: ignore[reportOptionalCall]
        assert result.dtype == mx.float64
        expected = reference(x, w, case)  # of float32 values: exact in float64
        assert float(np.abs(np.array(result) - expected).max()) <= 1e-12 * float(np.abs(expected).max())


# --------------------------------------------------------------------------- mlx.conv_bias_activation on the CPU

ACTIVATIONS = ["none", "relu", "relu6", "silu"]


def fused_props(case: Case, groups: int, activation: str, **changes: Any) -> dict[str, object]:
    return {**conv_props(case, groups, **changes), "activation": activation}


def unfused(x: mx.array, w: mx.array, bias: mx.array | None, props: dict[str, object], activation: str) -> mx.array:
    """The ops the fusion replaced, each as the CPU backend's own kernel runs it."""

    def op(name: str, *values: mx.array) -> mx.array:
        return CPU.kernel_factory(name)(props if name == "mlx.conv_general" else {}, [x.dtype])(list(values))[0]  # pyright: ignore[reportOptionalCall]

    y = op("mlx.conv_general", x, w)
    if bias is not None:
        y = op("mlx.add", y, bias)
    zero, six = mx.array(0.0, dtype=x.dtype), mx.array(6.0, dtype=x.dtype)
    if activation in ("relu", "relu6"):
        y = op("mlx.maximum", y, zero)
    if activation == "relu6":
        y = op("mlx.minimum", y, six)
    if activation == "silu":
        y = op("mlx.multiply", y, op("mlx.sigmoid", y))
    return y


@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_cpu_backend_runs_the_fused_epilogue_natively(activation: str, with_bias: bool) -> None:
    """A depthwise `mlx.conv_bias_activation` is one native call, bias and activation
    included (the kernel's bits), 2-D and 1-D."""
    module = kernels()
    case = Case((1, 9, 21, 19), (3, 3), (2, 1), (1, 1), (1, 0))
    x, w = operands(case, mx.float32, 21)
    bias = mx.random.normal((19,), key=mx.random.key(22)) if with_bias else None
    operands_ = [x, w] if bias is None else [x, w, bias]
    run = CPU.kernel_factory("mlx.conv_bias_activation")(fused_props(case, 19, activation), [mx.float32])  # pyright: ignore[reportOptionalCall]
    assert bits_equal(run(operands_)[0], native(module, x, w, case, bias=bias, activation=activation))
    props_1d = {
        "stride": [2], "padding_lo": [1], "padding_hi": [1], "kernel_dilation": [1], "input_dilation": [1],
        "groups": 19, "flip": False, "activation": activation,
    }
    seq, w_1d = x[:, 0], w[:, 0]
    run_1d = CPU.kernel_factory("mlx.conv_bias_activation")(props_1d, [mx.float32])  # pyright: ignore[reportOptionalCall]
    expected = module.depthwise_conv1d(seq, w_1d, stride=2, padding_lo=1, padding_hi=1, bias=bias, activation=activation)
    assert bits_equal(run_1d([seq, w_1d] if bias is None else [seq, w_1d, bias])[0], expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_cpu_backend_fused_epilogue_without_native_kernels_is_the_unfused_ops(
    activation: str, dtype: mx.Dtype
) -> None:
    """Suspended (an export), the fused op is the ops it replaced as the CPU runs them
    (taps, the bias add, the activation; `sigmoid` on 4096 values or more the backend's
    polynomial one), bit for bit; natively it is within the dtype's rounding of them."""
    kernels()
    case = Case((1, 16, 20, 24), (3, 3), lo=(1, 1), hi=(1, 1))  # 7680 outputs: the polynomial sigmoid
    x, w = operands(case, dtype, 23)
    bias = mx.random.normal((24,), key=mx.random.key(24)).astype(dtype)
    props = fused_props(case, 24, activation)
    run = CPU.kernel_factory("mlx.conv_bias_activation")(props, [dtype])  # pyright: ignore[reportOptionalCall]
    with cpu_native.suspended():
        assert bits_equal(run([x, w, bias])[0], unfused(x, w, bias, conv_props(case, 24), activation))
    natively, ops = run([x, w, bias])[0], unfused(x, w, bias, conv_props(case, 24), activation)
    scale = float(mx.max(mx.abs(ops.astype(mx.float32))))
    limit = {mx.float32: 1e-5, mx.float16: 2e-3, mx.bfloat16: 2e-2}[dtype]
    assert float(mx.max(mx.abs(natively.astype(mx.float32) - ops.astype(mx.float32)))) <= limit * scale


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_cpu_backend_fused_dense_convolution_is_the_unfused_ops(activation: str) -> None:
    """A convolution that is not depthwise (a 1x1, a grouped one) is `mx.conv_general`
    and the epilogue's ops as the CPU runs them unfused: the same bits."""
    kernels()
    case = Case((1, 12, 14, 16), (1, 1))
    x = mx.random.normal(case.x_shape, key=mx.random.key(25))
    for w_shape, groups in (((24, 1, 1, 16), 1), ((24, 3, 3, 4), 4)):
        props = conv_props(case, groups, padding_lo=[1, 1], padding_hi=[1, 1]) if groups > 1 else conv_props(case, groups)
        w = mx.random.normal(w_shape, key=mx.random.key(26))
        bias = mx.random.normal((24,), key=mx.random.key(27))
        run = CPU.kernel_factory("mlx.conv_bias_activation")({**props, "activation": activation}, [mx.float32])  # pyright: ignore[reportOptionalCall]
        assert bits_equal(run([x, w, bias])[0], unfused(x, w, bias, props, activation))


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("activation", ["relu", "relu6"])
def test_cpu_backend_fused_relu_keeps_nan(activation: str, path: str) -> None:
    """NaN passes through relu and relu6 on every path, as in torch, MLX and the
    generic kernel (x86's max/min return their second operand on NaN)."""
    kernels()
    case = Case((1, 1, 16, 3), (1, 1))
    x = mx.array([float("nan"), 1.0, -1.0, 7.0] * 12).reshape(1, 1, 16, 3)
    run = CPU.kernel_factory("mlx.conv_bias_activation")(fused_props(case, 3, activation), [mx.float32])  # pyright: ignore[reportOptionalCall]
    with isa(path):
        result = run([x, mx.ones((3, 1, 1, 1))])[0]
        mx.eval(result)
    assert bool(mx.isnan(result[0, 0, 0, 0]).item())
