"""The CPU target (`lower-to-mlx{target=cpu}`, `transforms/cpu/`): each pass keeps
its input's meaning, bit for bit where it says so, against the op it rewrites as MLX
computes it (`mx.fast.rope`, `mx.fast.scaled_dot_product_attention`); the pipeline
variant is what a compile on the CPU runs, and a program compiled for either target
runs on the CPU with the same values."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from kernel_helpers import MX_OF, ir
from xdsl.dialects.builtin import ModuleOp

import mlxir
from mlxir.conversions.pipelines import default_pipeline, lower, pipeline_passes
from mlxir.conversions.registry import PASSES
from mlxir.dialects import mlx
from mlxir.dialects.common import ints
from mlxir.dialects.context import make_context
from mlxir.evaluator import arrays as dtypes
from mlxir.runtime.backend import host_target
from mlxir.runtime.ir_interpreter import parse_module, run_module


def _apply(module: ModuleOp, spec: str) -> ModuleOp:
    from xdsl.passes import PassPipeline

    from mlxir.conversions.registry import registered_passes

    PassPipeline.parse_spec(registered_passes(), spec).apply(make_context(), module)
    module.verify()
    return module


def _run(module: ModuleOp, inputs: list[Any]) -> list[mx.array]:
    with mx.stream(mx.cpu):
        return run_module(module, {}, inputs)


def _op_names(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _same_bits(got: mx.array, expected: mx.array) -> bool:
    return got.dtype == expected.dtype and got.shape == expected.shape and mx.array_equal(got, expected).item()


# --------------------------------------------------------------------------- cpu-rope-pairs

_ROPE_SHAPES = {
    2: ("?x16", (5, 16)),
    3: ("?x?x16", (3, 5, 16)),
    4: ("?x4x?x16", (3, 4, 5, 16)),
    5: ("?x2x2x?x16", (3, 2, 2, 5, 16)),
}


def _rope_ir(ty: str, rank: int, dims: int, traditional: bool, freqs: str, offset: str, scale: float) -> str:
    shape, _ = _ROPE_SHAPES[rank]
    x = f"tensor<{shape}x{ty}>"
    angles = {
        "base": "base 1.000000e+04",
        "argument": f"freqs %f : tensor<{dims // 2}xf32>",
        "constant": f"freqs %c : tensor<{dims // 2}xf32>",
    }[freqs]
    values = ", ".join(repr(float(v)) for v in _inverse_frequencies(dims))
    at = {"static": "[100]", "zero": "[0]", "dynamic": "[%pos]", "rows": "[%pos] rows %rows : tensor<?xi64>"}[offset]
    flag = " traditional" if traditional else ""
    return ir(
        """func.func @forward(%x: $X, %f: tensor<${H}xf32>, %rows: tensor<?xi64>, %pos: index) -> $X {
      %c = mlx.constant dense<[$VALUES]> : tensor<${H}xf32>
      %r = mlx.rope %x dims $D$FLAG $ANGLES scale $S offset $AT : $X -> $X
      func.return %r : $X
    }""",
        X=x, H=str(dims // 2), D=str(dims), FLAG=flag, ANGLES=angles, S=repr(scale), AT=at, VALUES=values,
    )


def _inverse_frequencies(dims: int) -> np.ndarray:
    """MLX's `freqs` of base 10^4 (the inverse of HF's `inv_freq`), in float32."""
    return (1e4 ** (np.arange(0, dims, 2) / dims)).astype(np.float32)


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
def test_rope_pairs_are_mlx_rope_bitwise(ty: str) -> None:
    """`cpu-rope-pairs` (then `cse`) computes what `mx.fast.rope` computes on MLX's CPU,
    bit for bit: rotate-half and interleaved, whole and partial rotary, base or freqs
    (an argument, or a constant whose inverse the pass computes), a static, zero, dynamic or per-row offset, scale 1 or not, rank 2 to 5; no rope is
    left, except a rank-2 input with row offsets."""
    rng = np.random.default_rng(7)
    for rank, dims, traditional, freqs, offset, scale in itertools.product(
        [2, 3, 4, 5], [16, 8], [False, True], ["base", "argument", "constant"], ["static", "zero", "dynamic", "rows"],
        [1.0, 0.5],
    ):
        text = _rope_ir(ty, rank, dims, traditional, freqs, offset, scale)
        reference = parse_module(text)
        rewritten = _apply(parse_module(text), "cpu-rope-pairs,cse")
        left = _op_names(rewritten)["mlx.rope"]
        assert left == (1 if rank == 2 and offset == "rows" else 0), text
        if left:
            continue  # left as it was (and MLX's rope takes one offset for a rank-2 input)
        x = mx.array(rng.standard_normal(_ROPE_SHAPES[rank][1]).astype(np.float32)).astype(MX_OF[ty])
        inverse = mx.array(_inverse_frequencies(dims))
        rows = mx.array([7, 0, 2047][: x.shape[0]], dtype=mx.int64)
        inputs: list[Any] = [x, inverse, rows, 33]
        (expected,), (got,) = _run(reference, inputs), _run(rewritten, inputs)
        assert _same_bits(got, expected), (ty, rank, dims, traditional, freqs, offset, scale)


def test_rope_pairs_share_one_angle_table() -> None:
    """After `cse`, the ropes at the same positions (a decode step) read one angle table: one cosine
    and one sine for q and k (MLX's own CPU rope computes a table per call), and the
    inverse frequencies are a constant."""
    text = """func.func @forward(%q: tensor<?x8x1x32xf32>, %k: tensor<?x4x1x32xf32>, %pos: index) -> (tensor<?x8x1x32xf32>, tensor<?x4x1x32xf32>) {
      %rq = mlx.rope %q dims 32 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<?x8x1x32xf32> -> tensor<?x8x1x32xf32>
      %rk = mlx.rope %k dims 32 base 1.000000e+04 scale 1.000000e+00 offset [%pos] : tensor<?x4x1x32xf32> -> tensor<?x4x1x32xf32>
      func.return %rq, %rk : tensor<?x8x1x32xf32>, tensor<?x4x1x32xf32>
    }"""
    names = _op_names(_apply(parse_module(text), "cpu-rope-pairs,cse"))
    assert names["mlx.cos"] == names["mlx.sin"] == 1 and names["mlx.exp"] == 0, names
    assert names["mlx.arange"] == 1 and names["mlx.rope"] == 0, names


# --------------------------------------------------------------------------- cpu-float32-attention


def _attention_ir(ty: str, mask: str) -> str:
    q, k = f"tensor<?x8x?x16x{ty}>", f"tensor<?x2x?x16x{ty}>"
    operand = {
        "causal": " scale 2.500000e-01 mask_mode \"causal\"",
        "bool": " mask %m : tensor<?x1x?x?xi1> scale 2.500000e-01 zero_masked_rows",
        "additive": f" mask %a : tensor<?x1x?x?x{ty}> scale 2.500000e-01",
        "none": " scale 2.500000e-01",
    }[mask]
    return f"""func.func @forward(%q: {q}, %k: {k}, %v: {k}, %m: tensor<?x1x?x?xi1>, %a: tensor<?x1x?x?x{ty}>) -> {q} {{
      %o = mlx.scaled_dot_product_attention %q, %k, %v{operand} : {q}, {k}, {k} -> {q}
      func.return %o : {q}
    }}"""


@pytest.mark.parametrize("ty", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("mask", ["causal", "bool", "additive", "none"])
def test_float32_attention_is_attention_on_float32_casts(ty: str, mask: str) -> None:
    """`cpu-float32-attention` computes float16/bfloat16 attention as the CPU computes
    the same attention on the float32 casts of q, k, v (and an additive mask; with the
    native kernels, their float32 attention), then rounds once, bit for bit; float32
    attention is left alone. Against torch's float64
    attention it is closer than MLX's CPU composition in the operands' dtype."""
    rng = np.random.default_rng(8)
    text = _attention_ir(ty, mask)
    rewritten = _apply(parse_module(text), "cpu-float32-attention")
    names = _op_names(rewritten)
    assert names["mlx.astype"] == (0 if ty == "f32" else 4 + (mask == "additive")), names
    dtype = MX_OF[ty]
    shapes = [(2, 8, 5, 16), (2, 2, 9, 16), (2, 2, 9, 16)]
    q, k, v = (mx.array(rng.standard_normal(s).astype(np.float32)).astype(dtype) for s in shapes)
    bool_mask = mx.array(rng.random((2, 1, 5, 9)) > 0.3)
    bool_mask[0, 0, 1] = False  # a row with no key: zeros
    additive = mx.array(rng.standard_normal((2, 1, 5, 9)).astype(np.float32)).astype(dtype)
    inputs: list[Any] = [q, k, v, bool_mask, additive]
    (got,) = _run(rewritten, inputs)
    as32 = [a.astype(mx.float32) if a.dtype == dtype else a for a in inputs]
    (in_float32,) = _run(parse_module(text.replace(ty, "f32")), as32)
    assert _same_bits(got, in_float32.astype(dtype)), (ty, mask)
    if ty == "f32":
        return
    (rounded,) = _run(parse_module(text), inputs)
    t = [torch.from_numpy(np.asarray(dtypes.to_numpy(a.astype(mx.float32)))).double() for a in (q, k, v)]
    t[1], t[2] = (x.repeat_interleave(4, dim=1) for x in t[1:])
    attn_mask: torch.Tensor | None = {
        "causal": torch.ones(5, 9, dtype=torch.bool).tril(9 - 5),
        "bool": torch.from_numpy(np.asarray(dtypes.to_numpy(bool_mask))),
        "additive": torch.from_numpy(np.asarray(dtypes.to_numpy(additive.astype(mx.float32)))).double(),
        "none": None,
    }[mask]
    reference = torch.nn.functional.scaled_dot_product_attention(*t, attn_mask=attn_mask, scale=0.25)
    reference = torch.nan_to_num(reference, nan=0.0)  # torch's fully masked row: zeros, as zero_masked_rows

    def error(value: mx.array) -> float:
        return float((torch.from_numpy(np.asarray(dtypes.to_numpy(value.astype(mx.float32)))).double() - reference).abs().max())

    assert error(got) <= error(rounded), (ty, mask, error(got), error(rounded))


# --------------------------------------------------------------------------- the pipeline variant


def test_target_pipeline_and_host_default() -> None:
    """`lower-to-mlx{target=cpu}` is the default pipeline, then the CPU passes,
    `fold-known-dims`, `cse` and `dce`; on MLX's CPU `mlxir.lower()` picks it (the
    compiler's own default is the generic target); an unknown target names the known."""
    generic = pipeline_passes("generic")
    cpu = pipeline_passes("cpu")
    assert cpu[: len(generic)] == generic and cpu[len(generic) :] == [
        "cpu-channels-last", "fold-conv-affine", "cpu-fuse-conv-epilogue", "cpu-float32-attention", "cpu-rope-pairs", "fold-known-dims", "cse", "dce"
    ]
    with mx.stream(mx.cpu):
        if mx.default_device() == mx.cpu:
            assert host_target() == "cpu" and default_pipeline(host_target()) == "lower-to-mlx{target=cpu}"
            ep = torch.export.export(_Attention(), (torch.randn(2, 6, 32),))
            assert _op_names(mlxir.lower(mlxir.import_program(ep)))["mlx.rope"] == 0  # cpu-rope-pairs ran
            assert _op_names(lower(mlxir.import_program(ep)))["mlx.rope"] == 2  # the generic target
    assert default_pipeline() == default_pipeline("generic") == "lower-to-mlx"
    with pytest.raises(Exception, match="unknown target 'tpu'.*generic, cpu"):
        PASSES["lower-to-mlx"].factory()(target="tpu").apply(make_context(), ModuleOp([]))


class _Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = torch.nn.Linear(32, 32)
        self.k = torch.nn.Linear(32, 32)
        self.register_buffer("inverse", 1e4 ** (-torch.arange(0, 16, 2, dtype=torch.float32) / 16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        # HF's rotary embedding: angles from the positions, [1, 1, T, 16] cos and sin.
        positions = torch.arange(length)[None]
        theta = positions[..., None].float() * self.inverse
        theta = torch.cat([theta, theta], dim=-1)
        cos, sin = theta.cos().to(x.dtype).unsqueeze(1), theta.sin().to(x.dtype).unsqueeze(1)
        q = self.q(x).view(batch, length, 2, 16).transpose(1, 2)
        k = self.k(x).view(batch, length, 2, 16).transpose(1, 2)

        def rotate_half(t: torch.Tensor) -> torch.Tensor:
            return torch.cat((-t[..., 8:], t[..., :8]), dim=-1)

        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        out = torch.nn.functional.scaled_dot_product_attention(q, k, k, is_causal=True)
        return out.transpose(1, 2).reshape(batch, length, 32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_programs_of_both_targets_match_torch(dtype: torch.dtype) -> None:
    """A model with rotary embeddings and causal attention, exported at length 6 and
    run at length 11: compiled for the CPU target (no rope left, float32 attention in
    half precision) and for the generic one (`mx.fast.rope`, attention in the operands'
    dtype), both match eager torch within the dtype's tolerance (f32 1e-5, f16 2e-3,
    bf16 2e-2, relative to the output's largest magnitude)."""
    torch.manual_seed(0)
    model = _Attention()
    model.q.to(dtype), model.k.to(dtype)
    length = torch.export.Dim("length", min=2, max=64)
    ep = torch.export.export(model, (torch.randn(2, 6, 32, dtype=dtype),), dynamic_shapes=({1: length},))
    inputs = (torch.randn(2, 11, 32, dtype=dtype),)
    with torch.no_grad():
        expected = model(*inputs)
    tolerance = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    for target in ("cpu", "generic"):
        module = mlxir.import_program(ep)
        mlxir.lower(module, target=target)
        names = _op_names(module)
        assert names["mlx.rope"] == (0 if target == "cpu" else 2), (target, names)
        program = mlxir.Program(mlxir.serialize(module))
        got = program(*inputs)
        assert got.dtype == dtype and got.shape == expected.shape
        scale = float(expected.float().abs().max())
        assert float((got.float() - expected.float()).abs().max()) <= tolerance * scale, target


# --------------------------------------------------------------------------- cpu-channels-last


class _ConvBlock(torch.nn.Module):
    """What a CNN does between its convolutions, channels-first: batch norm, relu, a
    residual add, a max pool (padded), a strided and a depthwise convolution, a
    sigmoid gate, an average pool over space and a flatten."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.down = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.depthwise = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.norm(self.stem(x)))
        y = torch.nn.functional.max_pool2d(y + self.conv(y), 3, stride=2, padding=1)
        y = self.down(y)
        y = y * torch.sigmoid(self.depthwise(y))
        return self.head(y.mean(dim=(2, 3)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_channels_last_keeps_a_cnn_exact(dtype: torch.dtype) -> None:
    """The block exported at batch 2 and run at batch 3 (17x23): on the CPU target
    no transpose is left but the input's (every activation stays channels-last), the
    batch norm is part of the convolution before it (`fold-conv-affine`), and
    both targets match eager torch within the dtype's tolerance (f32 1e-5, f16 2e-3,
    bf16 2e-2, relative to the output's largest magnitude)."""
    torch.manual_seed(0)
    model = _ConvBlock().eval()
    mean, var = model.norm.running_mean, model.norm.running_var
    assert mean is not None and var is not None
    mean.uniform_(-1, 1), var.uniform_(0.5, 2)  # not the identity that a fresh norm is
    model.to(dtype)
    # Pooling needs static spatial dims (its lowering unrolls the window): the batch varies.
    batch = torch.export.Dim("batch", min=1, max=8)
    ep = torch.export.export(model, (torch.randn(2, 3, 17, 23, dtype=dtype),), dynamic_shapes=({0: batch},))
    x = torch.randn(3, 3, 17, 23, dtype=dtype)
    with torch.no_grad():
        expected = model(x).float()
    tolerance = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    for target in ("cpu", "generic"):
        module = mlxir.import_program(ep)
        mlxir.lower(module, target=target)
        transposed = [  # of activations, not of weights
            op for op in module.walk()
            if isinstance(op, mlx.TransposeOp) and len(ints(op.axes)) >= 3 and not isinstance(op.input.owner, mlx.WeightOp)
        ]
        norm_ops = _op_names(module)["mlx.rsqrt"]
        if target == "cpu":
            assert len(transposed) == 1, transposed  # the input's, into channels-last
            assert norm_ops == 0  # the batch norm is folded into the stem's weights
            convolutions = [
                (op.name, op.groups.value.data, op.activation.data if isinstance(op, mlx.ConvBiasActivationOp) else None)
                for op in module.walk()
                if isinstance(op, mlx.ConvGeneralOp | mlx.ConvBiasActivationOp)
            ]
            # The stem's norm and relu, the strided one's bias and the depthwise one's
            # bias are fused into them (`cpu-fuse-conv-epilogue`); the depthwise one
            # stays a convolution, the backend's to choose per call.
            assert convolutions == [
                ("mlx.conv_bias_activation", 1, "relu"),
                ("mlx.conv_general", 1, None),
                ("mlx.conv_bias_activation", 1, "none"),
                ("mlx.conv_bias_activation", 16, "none"),
            ], convolutions
        else:
            assert len(transposed) > 1 and norm_ops > 0
        got = mlxir.Program(mlxir.serialize(module))(x)
        assert got.dtype == dtype and got.shape == expected.shape
        scale = float(expected.abs().max())
        assert float((got.float() - expected).abs().max()) <= tolerance * scale, target


# --------------------------------------------------------------------------- cpu-depthwise-conv (on request)


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"),
    [(3, 1, (1, 1), 1), (3, 2, (1, 1), 1), (5, 1, (2, 2), 1), (3, 1, (2, 2), 2), (2, 2, (1, 0), 1)],
)
def test_depthwise_taps_are_mlx_conv(ty: str, kernel: int, stride: int, padding: tuple[int, int], dilation: int) -> None:
    """`cpu-depthwise-conv`'s taps against `mx.conv_general` itself (the op it
    rewrites), on a batch of 2, 9x11 inputs with 6 channels: within float rounding of
    the sums' order (f32 1e-6, f16 2e-3, bf16 2e-2 relative to the largest magnitude)."""
    rng = np.random.default_rng(kernel * 10 + stride)
    lo, hi = padding
    out_h = (9 + lo + hi - dilation * (kernel - 1) - 1) // stride + 1
    out_w = (11 + lo + hi - dilation * (kernel - 1) - 1) // stride + 1
    text = f"""
func.func @forward(%x: tensor<?x9x11x6x{ty}>, %w: tensor<6x{kernel}x{kernel}x1x{ty}>) -> tensor<?x{out_h}x{out_w}x6x{ty}> {{
  %y = mlx.conv_general %x, %w stride [{stride}, {stride}] padding [{lo}, {lo}] [{hi}, {hi}] kernel_dilation [{dilation}, {dilation}] input_dilation [1, 1] groups 6 : tensor<?x9x11x6x{ty}>, tensor<6x{kernel}x{kernel}x1x{ty}> -> tensor<?x{out_h}x{out_w}x6x{ty}>
  func.return %y : tensor<?x{out_h}x{out_w}x6x{ty}>
}}"""
    rewritten = _apply(parse_module(text), "cpu-depthwise-conv")
    assert _op_names(rewritten)["mlx.conv_general"] == 0
    dtype = MX_OF[ty]
    x = mx.array(rng.standard_normal((2, 9, 11, 6)).astype(np.float32)).astype(dtype)
    w = mx.array(rng.standard_normal((6, kernel, kernel, 1)).astype(np.float32)).astype(dtype)
    (got,) = _run(rewritten, [x, w])
    with mx.stream(mx.cpu):  # MLX's op itself (the CPU backend would run the native kernel)
        expected = mx.conv_general(
            x, w, stride=stride, padding=([lo, lo], [hi, hi]), kernel_dilation=dilation, groups=6
        )
    assert got.shape == expected.shape == (2, out_h, out_w, 6) and got.dtype == dtype
    tolerance = {"f32": 1e-6, "f16": 2e-3, "bf16": 2e-2}[ty]
    scale = float(mx.max(mx.abs(expected.astype(mx.float32))))
    assert float(mx.max(mx.abs(got.astype(mx.float32) - expected.astype(mx.float32)))) <= tolerance * scale


# --------------------------------------------------------------------------- cpu-polynomial-exp

_EXP_IR = """
func.func @forward(%x: tensor<{n}x{ty}>, %s: tensor<512x33x{ty}>) -> (tensor<{n}x{ty}>, tensor<{n}x{ty}>, tensor<512x33x{ty}>) {{
  %e = mlx.exp %x : tensor<{n}x{ty}> -> tensor<{n}x{ty}>
  %g = mlx.sigmoid %x : tensor<{n}x{ty}> -> tensor<{n}x{ty}>
  %m = mlx.softmax %s axes [-1] : tensor<512x33x{ty}> -> tensor<512x33x{ty}>
  func.return %e, %g, %m : tensor<{n}x{ty}>, tensor<{n}x{ty}>, tensor<512x33x{ty}>
}}"""
"""Sizes the polynomial takes (`POLYNOMIAL_MIN_KNOWN_ELEMENTS`): `n` values, 512 rows."""


def test_polynomial_exp_is_within_two_ulp_over_float32s_range() -> None:
    """`exp` against float64's on every float32 exponent's worth of inputs (2^20 points
    over [-87, 88.7], plus every power of two and its neighbours): within 2 ulp where
    `x >= -86.98` (results from 1.7e-38 up; below, zero), and MLX's meaning at the
    edges: 0 for -inf, inf for inf and past float32's range, NaN for NaN."""
    rng = np.random.default_rng(0)
    powers = np.array([2.0**k for k in range(-149, 7)], dtype=np.float32)
    around = np.concatenate([powers, np.nextafter(powers, np.float32(0)), np.nextafter(powers, np.float32(np.inf))])
    xs = np.concatenate([
        rng.uniform(-87.0, 88.72, 1 << 20).astype(np.float32), around, -around,
        np.array([0.0, -0.0, 88.72283935546875, 88.7228, 88.7229, -86.97, -86.99, -100.0, 100.0], dtype=np.float32),
    ])
    specials = np.array([np.inf, -np.inf, np.nan], dtype=np.float32)
    text = _EXP_IR.format(ty="f32", n=len(xs) + len(specials))
    rewritten = _apply(parse_module(text), "cpu-polynomial-exp")
    assert _op_names(rewritten)["mlx.exp"] == 0
    softmax_input = mx.zeros((512, 33))
    got, _, _ = (np.array(a) for a in _run(rewritten, [mx.array(np.concatenate([xs, specials])), softmax_input]))
    exact = np.exp(xs.astype(np.float64))
    flushed = xs < np.float32(-86.98)
    normal = ~flushed & (exact <= np.finfo(np.float32).max)
    ulps = np.abs(got[: len(xs)][normal] - exact[normal]) / np.spacing(exact[normal].astype(np.float32)).astype(np.float64)
    assert float(ulps.max()) <= 2.0
    assert np.all(got[: len(xs)][flushed] == 0)
    assert np.all(np.isinf(got[: len(xs)][exact > np.finfo(np.float32).max]))
    assert got[-3] == np.inf and got[-2] == 0 and np.isnan(got[-1])


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
def test_polynomial_sigmoid_and_softmax_are_exact_within_their_type(ty: str) -> None:
    """`sigmoid` and `softmax` (with a fully masked row: NaN, as MLX's) from the
    polynomial `exp`, against the exact values (float64 on the same inputs): f32 within
    2e-7 absolute (sigmoid) and 5e-7 (softmax: its sum and quotient round too); f16/bf16, computed through float32, within one unit of their type's
    last place (2^-10, 2^-7 relative to 1), where MLX's own half-precision softmax is
    not always (it sums in the half type)."""
    rng = np.random.default_rng(1)
    dtype = MX_OF[ty]
    x = mx.array(np.concatenate([rng.standard_normal(16381) * 8, [-200.0, 200.0, 0.0]]).astype(np.float32)).astype(dtype)
    scores = rng.standard_normal((512, 33)).astype(np.float32) * 6
    scores[2, :] = -np.inf
    scores[3, :30] = -np.inf
    s = mx.array(scores).astype(dtype)
    text = _EXP_IR.format(ty=ty, n=16384)
    rewritten = _apply(parse_module(text), "cpu-polynomial-exp")
    names = _op_names(rewritten)
    assert names["mlx.sigmoid"] == names["mlx.softmax"] == names["mlx.exp"] == 0
    _, sigmoid, softmax = (np.array(a.astype(mx.float32)).astype(np.float64) for a in _run(rewritten, [x, s]))
    x64, s64 = (np.array(a.astype(mx.float32)).astype(np.float64) for a in (x, s))
    exact_sigmoid = 1 / (1 + np.exp(-x64))
    with np.errstate(invalid="ignore"):
        shifted = np.exp(s64 - s64.max(axis=-1, keepdims=True))
        exact_softmax = shifted / shifted.sum(axis=-1, keepdims=True)
    tolerance = {"f32": 2e-7, "f16": 2.0**-10, "bf16": 2.0**-7}[ty]
    assert np.max(np.abs(sigmoid - exact_sigmoid)) <= tolerance
    assert np.array_equal(np.isnan(softmax), np.isnan(exact_softmax)) and np.isnan(softmax[2]).all()
    finite = ~np.isnan(exact_softmax)
    assert np.max(np.abs(softmax[finite] - exact_softmax[finite])) <= (5e-7 if ty == "f32" else tolerance)


def test_polynomial_erf_is_within_2e7_of_the_exact_erf() -> None:
    """`erf` as the series near 0 and `1 - erfc` beyond: within 2e-7 of the exact value
    (math.erf in float64) everywhere and within 2e-7 relative below |x| = 1/2 (tiny
    values included), ±1 at ±inf, NaN kept, the sign of zero kept."""
    import math

    tiny = np.geomspace(1e-38, 0.5, 2000).astype(np.float32)
    xs = np.concatenate([np.linspace(-9, 9, 100001, dtype=np.float32), tiny, -tiny, np.float32([0.5, 0.49999997, 0.0, -0.0])])
    specials = np.float32([np.inf, -np.inf, np.nan])
    n = len(xs) + len(specials)
    text = f"""
func.func @forward(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %e = mlx.erf %x : tensor<{n}xf32> -> tensor<{n}xf32>
  func.return %e : tensor<{n}xf32>
}}"""
    rewritten = _apply(parse_module(text), "cpu-polynomial-exp")
    assert _op_names(rewritten)["mlx.erf"] == 0
    (got,) = _run(rewritten, [mx.array(np.concatenate([xs, specials]))])
    values = np.array(got)
    exact = np.array([math.erf(float(v)) for v in xs])
    assert float(np.max(np.abs(values[: len(xs)] - exact))) <= 2e-7
    small = (np.abs(xs) < 0.5) & (xs != 0)
    assert float(np.max(np.abs(values[: len(xs)][small] - exact[small]) / np.abs(exact[small]))) <= 2e-7
    assert np.array_equal(np.signbit(values[len(xs) - 2 : len(xs)]), [False, True])
    assert values[-3] == 1 and values[-2] == -1 and np.isnan(values[-1])


def test_polynomial_exp_leaves_small_and_dynamic_sizes_to_mlx() -> None:
    """Below `POLYNOMIAL_MIN_KNOWN_ELEMENTS` known elements (dynamic sizes count as 1: an
    LLM step's `[?, ?, 1408]`) MLX's own kernel stays: op by op, the polynomial's ~20
    ops cost more than MLX's one on small arrays."""
    text = """
func.func @forward(%a: tensor<?x?x1408xf32>, %b: tensor<16383xf32>, %c: tensor<?x16384xf32>) -> (tensor<?x?x1408xf32>, tensor<16383xf32>, tensor<?x16384xf32>) {
  %x = mlx.sigmoid %a : tensor<?x?x1408xf32> -> tensor<?x?x1408xf32>
  %y = mlx.exp %b : tensor<16383xf32> -> tensor<16383xf32>
  %z = mlx.exp %c : tensor<?x16384xf32> -> tensor<?x16384xf32>
  func.return %x, %y, %z : tensor<?x?x1408xf32>, tensor<16383xf32>, tensor<?x16384xf32>
}"""
    names = _op_names(_apply(parse_module(text), "cpu-polynomial-exp"))
    assert names["mlx.sigmoid"] == 1 and names["mlx.exp"] == 1  # the third one is rewritten
