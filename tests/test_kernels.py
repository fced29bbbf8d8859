"""Runtime kernels: every op of the `mlx` dialect (and integer `arith`) run from IR text
through the reference interpreter and compared with an independent reference (numpy
in float64, or eager torch).

This file holds the coverage checks (every op has a kernel, and a test in one of the
`test_kernels*.py` files), the elementwise ops, the reductions and scans, and integer
`arith`. The other ops by topic: `test_kernels_indexing.py` (indexing, shapes,
creation), `test_kernels_linalg.py` (products, quantization, convolution,
factorizations, FFT), `test_kernels_fast.py` (attention, norms, rope),
`test_kernels_cpu.py` (the CPU-specific paths: CPU streams, blocked products, the CPU
compositions of rope and attention) and `test_kernels_runtime.py` (weights and state,
props, dtypes). Inputs, comparisons and tolerances are shared: `kernel_helpers.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path

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
    floats,
    ints,
    ir,
    quantize,
    rng,
    run_ir,
    softmax,
    torch_ref,
)

from mlxir.dialects import mlx as mlx_dialect
from mlxir.evaluator import KERNELS, NOT_KERNELS
from mlxir.evaluator import arrays as dtypes
from mlxir.runtime.ir_interpreter import Program, parse_module

# --------------------------------------------------------------------------- coverage


def test_every_mlx_op_has_a_kernel() -> None:
    missing = [op.name for op in mlx_dialect.MLX_OPS
               if op.name not in NOT_KERNELS and op.name not in KERNELS]
    assert not missing, f"ops without a runtime kernel: {missing}"
    assert all(name in {op.name for op in mlx_dialect.MLX_OPS} for name in NOT_KERNELS)


def test_every_mlx_op_is_tested_here() -> None:
    """Each op appears in the IR of these files, `test_kernels*.py` (the table-driven
    tests cover the tables)."""
    source = "".join(path.read_text() for path in sorted(Path(__file__).parent.glob("test_kernels*.py")))
    written = set(re.findall(r"\b(mlx\.[a-z_0-9]+) ", source))
    tables = {f"mlx.{n}" for n in (*mlx_dialect.UNARY_OPS, *mlx_dialect.BINARY_OPS,
                                    *mlx_dialect.REDUCTION_OPS, *VARIANCE_OPS, *SCAN_OPS)}
    untested = [op.name for op in mlx_dialect.MLX_OPS
                if op.name not in NOT_KERNELS and op.name not in written | tables]
    assert not untested, f"ops without a kernel test: {untested}"


def test_arith_kernels_exist() -> None:
    for name in ("constant", "addi", "subi", "muli", "floordivsi", "remsi", "minsi", "maxsi",
                 "cmpi", "select", "index_cast"):
        assert f"arith.{name}" in KERNELS


# --------------------------------------------------------------------------- elementwise

UNARY_REF: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs": np.abs,
    "negative": np.negative,
    "sign": np.sign,
    "square": np.square,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,  # half to even, as torch.round and mx.round
    "exp": np.exp,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "log2": np.log2,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": torch_ref(torch.special.erf),
    "erfinv": torch_ref(torch.special.erfinv),
    "reciprocal": lambda x: 1 / x,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "logical_not": np.logical_not,
    "bitwise_invert": np.invert,
    "conj": np.conj,
}

UNARY_DOMAIN: dict[str, tuple[float, float]] = {
    "log": (0.1, 4.0), "log2": (0.1, 4.0), "log10": (0.1, 4.0), "log1p": (-0.9, 3.0),
    "sqrt": (0.1, 4.0), "rsqrt": (0.1, 4.0), "reciprocal": (0.5, 3.0),
    "arcsin": (-0.95, 0.95), "arccos": (-0.95, 0.95), "arctanh": (-0.9, 0.9),
    "erfinv": (-0.9, 0.9), "arccosh": (1.1, 4.0), "tan": (-1.2, 1.2),
}


def test_unary_reference_covers_the_table() -> None:
    assert set(UNARY_REF) == set(mlx_dialect.UNARY_OPS)


def _unary_input(name: str, ty: str) -> tuple[np.ndarray, str, str]:
    """(input, input element type, result element type) for a unary op test."""
    kind = mlx_dialect.UNARY_OPS[name]
    if kind is mlx_dialect.ElementwiseKind.LOGICAL:
        return rng().random((3, 5)) > 0.5, "i1", "i1"
    if kind is mlx_dialect.ElementwiseKind.BITWISE:
        return ints((3, 5), -100, 100), "i32", "i32"
    low, high = UNARY_DOMAIN.get(name, (-2.0, 2.0))
    x = floats((3, 5), ty, low, high)
    if name == "round":
        x[0, :4] = [0.5, 1.5, -2.5, -0.5]
    if kind is mlx_dialect.ElementwiseKind.PREDICATE:
        x[1, :3] = [np.nan, np.inf, -np.inf]
        return x, ty, "i1"
    return x, ty, ty


UNARY_CASES = [(n, "f32") for n in mlx_dialect.UNARY_OPS] + [
    (n, ty) for n, kind in mlx_dialect.UNARY_OPS.items()
    if kind in (mlx_dialect.ElementwiseKind.FLOAT, mlx_dialect.ElementwiseKind.SAME)
    for ty in ("f16", "bf16")
]


@pytest.mark.parametrize(("name", "ty"), UNARY_CASES)
def test_unary(name: str, ty: str) -> None:
    x, in_ty, out_ty = _unary_input(name, ty)
    text = ir("""func.func @forward(%x: tensor<?x5x$A>) -> tensor<?x5x$B> {
      %y = mlx.$OP %x : tensor<?x5x$A> -> tensor<?x5x$B>
      func.return %y : tensor<?x5x$B>
    }""", OP=name, A=in_ty, B=out_ty)
    (got,) = run_ir(text, x)
    ref = UNARY_REF[name](x)
    if out_ty == "i1" or in_ty == "i32":
        check_exact(got, ref)
    else:
        check(got, ref, TOL[ty])


@pytest.mark.parametrize("name", [n for n, k in mlx_dialect.UNARY_OPS.items()
                                  if k is mlx_dialect.ElementwiseKind.SAME])
@pytest.mark.parametrize("ty", ["i32", "i64", "i8"])
def test_unary_integer(name: str, ty: str) -> None:
    x = ints((2, 4), -9, 10, np.dtype(f"int{ty[1:]}"))
    text = ir("""func.func @forward(%x: tensor<2x?x$T>) -> tensor<2x?x$T> {
      %y = mlx.$OP %x : tensor<2x?x$T> -> tensor<2x?x$T>
      func.return %y : tensor<2x?x$T>
    }""", OP=name, T=ty)
    (got,) = run_ir(text, x)
    check_exact(got, UNARY_REF[name](x).astype(x.dtype), x.dtype)


BINARY_REF: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "floor_divide": np.floor_divide,
    "remainder": np.remainder,
    "power": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "arctan2": np.arctan2,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift,
    "right_shift": np.right_shift,
}


def test_binary_reference_covers_the_table() -> None:
    assert set(BINARY_REF) == set(mlx_dialect.BINARY_OPS)


def _binary_inputs(name: str, ty: str) -> tuple[np.ndarray, np.ndarray, str, str]:
    kind = mlx_dialect.BINARY_OPS[name]
    shape_a, shape_b = (3, 5), (1, 5)
    if kind is mlx_dialect.ElementwiseKind.LOGICAL:
        return rng(1).random(shape_a) > 0.5, rng(2).random(shape_b) > 0.5, "i1", "i1"
    if kind is mlx_dialect.ElementwiseKind.BITWISE:
        if name.endswith("shift"):
            return ints(shape_a, -64, 64, seed=1), ints(shape_b, 0, 8, seed=2), "i32", "i32"
        return ints(shape_a, -64, 64, seed=1), ints(shape_b, -64, 64, seed=2), "i32", "i32"
    if kind is mlx_dialect.ElementwiseKind.COMPARE:  # small integers: some pairs are equal
        return (np.round(floats(shape_a, ty, -3, 3, 1)), np.round(floats(shape_b, ty, -3, 3, 2)),
                ty, "i1")
    a, b = floats(shape_a, ty, seed=1), floats(shape_b, ty, seed=2)
    if name == "power":
        a = np.abs(a) + 0.5
    if name in ("divide", "floor_divide", "remainder"):
        b = np.where(np.abs(b) < 0.25, 0.75, b)
    return a, b, ty, ty


BINARY_CASES = [(n, "f32") for n in mlx_dialect.BINARY_OPS] + [
    (n, ty) for n in ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
                      "arctan2", "remainder", "floor_divide", "less")
    for ty in ("f16", "bf16")
]


@pytest.mark.parametrize(("name", "ty"), BINARY_CASES)
def test_binary(name: str, ty: str) -> None:
    a, b, in_ty, out_ty = _binary_inputs(name, ty)
    text = ir("""func.func @forward(%a: tensor<?x5x$A>, %b: tensor<1x5x$A>) -> tensor<?x5x$B> {
      %y = mlx.$OP %a, %b : tensor<?x5x$A>, tensor<1x5x$A> -> tensor<?x5x$B>
      func.return %y : tensor<?x5x$B>
    }""", OP=name, A=in_ty, B=out_ty)
    (got,) = run_ir(text, a, b)
    ref = BINARY_REF[name](a, b)
    if out_ty in ("i1", "i32") or name in ("floor_divide",):
        check_exact(got, ref.astype(got.dtype))
    else:
        check(got, quantize(ref, ty) if name == "remainder" else ref, TOL[ty])


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "floor_divide", "remainder",
                                  "power", "maximum", "minimum"])
@pytest.mark.parametrize("ty", ["i32", "i64", "i8", "ui8"])
def test_binary_integer(name: str, ty: str) -> None:
    unsigned = ty.startswith("u")
    np_dtype = np.dtype(f"uint{ty[2:]}" if unsigned else f"int{ty[1:]}")
    a = ints((4, 6), 0 if unsigned else -20, 20, np_dtype, seed=3)
    b = ints((4, 6), 1 if unsigned else -7, 8, np_dtype, seed=4)
    if name in ("floor_divide", "remainder"):
        b[b == 0] = 3
    if name == "power":
        a, b = a % 4, np.abs(b) % 4
    text = ir("""func.func @forward(%a: tensor<?x6x$T>, %b: tensor<?x6x$T>) -> tensor<?x6x$T> {
      %y = mlx.$OP %a, %b : tensor<?x6x$T>, tensor<?x6x$T> -> tensor<?x6x$T>
      func.return %y : tensor<?x6x$T>
    }""", OP=name, T=ty)
    (got,) = run_ir(text, a, b)
    torch_fn = {"add": torch.add, "subtract": torch.sub, "multiply": torch.mul,
                "floor_divide": torch.floor_divide, "remainder": torch.remainder,
                "power": torch.pow, "maximum": torch.maximum, "minimum": torch.minimum}[name]
    ref = torch_fn(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    check_exact(got, ref, np_dtype)


SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 2.5, -2.5, 3.0, -7.0, 1e30, -1e-30,
            np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
def test_floor_divide_and_remainder_match_torch_on_floats(ty: str) -> None:
    """Floor semantics on floats, PyTorch's exactly: `1.0 // 0.1` is 9 (not
    `floor(1.0 / 0.1)` = 10), zero quotients keep the sign of `a / b`, `b == 0` and
    infinite `b` as in PyTorch; remainder takes the divisor's sign."""
    torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[ty]
    pairs = np.array([(a, b) for a in SPECIALS for b in SPECIALS], np.float64)
    a = torch.tensor(pairs[:, 0]).to(torch_dtype)
    b = torch.tensor(pairs[:, 1]).to(torch_dtype)
    text = ir("""func.func @forward(%a: tensor<?x$T>, %b: tensor<?x$T>) -> (tensor<?x$T>, tensor<?x$T>) {
      %q = mlx.floor_divide %a, %b : tensor<?x$T>, tensor<?x$T> -> tensor<?x$T>
      %r = mlx.remainder %a, %b : tensor<?x$T>, tensor<?x$T> -> tensor<?x$T>
      func.return %q, %r : tensor<?x$T>, tensor<?x$T>
    }""", T=ty)
    program = Program(parse_module(text), {})
    q, r = (dtypes.to_torch(v) for v in program([a, b]))
    ref_q, ref_r = torch.floor_divide(a, b), torch.remainder(a, b)
    torch.testing.assert_close(q, ref_q, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(torch.signbit(q), torch.signbit(ref_q)) or torch.equal(
        torch.signbit(q)[~ref_q.isnan()], torch.signbit(ref_q)[~ref_q.isnan()])
    # PyTorch's remainder computes `a - b * floor(a / b)` and so gives NaN when `a / b`
    # overflows (1e30 % -1e-30); MLX's is fmod-based and exact there, like Python's.
    finite = torch.isfinite(a / b) & torch.isfinite(b) & (b != 0)
    torch.testing.assert_close(r[finite], ref_r[finite], rtol=0, atol=0)


def test_floor_divide_integer_floor_semantics() -> None:
    """MLX's integer floor_divide/remainder already floor (Python/PyTorch), not truncate."""
    a = np.array([-7, -7, 7, 7, -1, 0, -128], np.int8)
    b = np.array([2, -2, 2, -2, 3, -5, -1], np.int8)
    text = """func.func @forward(%a: tensor<7xi8>, %b: tensor<7xi8>) -> (tensor<7xi8>, tensor<7xi8>) {
      %q = mlx.floor_divide %a, %b : tensor<7xi8>, tensor<7xi8> -> tensor<7xi8>
      %r = mlx.remainder %a, %b : tensor<7xi8>, tensor<7xi8> -> tensor<7xi8>
      func.return %q, %r : tensor<7xi8>, tensor<7xi8>
    }"""
    q, r = run_ir(text, a, b)
    check_exact(q, [-4, 3, 3, -4, -1, 0, -128], np.int8)  # -128 // -1 wraps, as in torch
    check_exact(r, [1, -1, 1, -1, 2, 0, 0], np.int8)


@pytest.mark.parametrize("ty", ["f32", "bf16"])
def test_astype(ty: str) -> None:
    x = floats((2, 6), "f32", -3, 3)
    x[0, :4] = [2.7, -2.7, 0.0, 0.5]
    text = ir("""func.func @forward(%x: tensor<2x?xf32>, %i: tensor<3xi32>, %b: tensor<3xi1>)
        -> (tensor<2x?xi32>, tensor<2x?x$T>, tensor<2x?xi1>, tensor<3xf32>, tensor<3x$T>, tensor<3xi1>) {
      %a = mlx.astype %x : tensor<2x?xf32> -> tensor<2x?xi32>
      %h = mlx.astype %x : tensor<2x?xf32> -> tensor<2x?x$T>
      %nz = mlx.astype %x : tensor<2x?xf32> -> tensor<2x?xi1>
      %f = mlx.astype %i : tensor<3xi32> -> tensor<3xf32>
      %g = mlx.astype %b : tensor<3xi1> -> tensor<3x$T>
      %c = mlx.astype %i : tensor<3xi32> -> tensor<3xi1>
      func.return %a, %h, %nz, %f, %g, %c : tensor<2x?xi32>, tensor<2x?x$T>, tensor<2x?xi1>, tensor<3xf32>, tensor<3x$T>, tensor<3xi1>
    }""", T=ty)
    i = np.array([-3, 0, 70000], np.int32)
    b = np.array([True, False, True])
    a, h, nz, f, g, c = run_ir(text, x.astype(np.float32), i, b)
    check_exact(a, np.trunc(x).astype(np.int32), np.int32)  # toward zero, as torch
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[ty]
    check_exact(h, torch.from_numpy(x.astype(np.float32)).to(torch_dtype).float().numpy())
    check_exact(nz, x != 0)
    check_exact(f, i.astype(np.float32))
    check_exact(g, b.astype(np.float32))
    check_exact(c, i != 0)


def test_view_reads_the_same_bits_as_another_type() -> None:
    """`mlx.view`: float32 as int32 is NumPy's view of the same bytes (the sign of
    -0.0 and of a negative NaN included); float16 as bfloat16 keeps every bit pattern."""
    x = np.array([1.5, -0.0, 0.0, -2.0, np.inf], np.float32)
    x = np.concatenate([x, -np.array([np.nan], np.float32)])
    text = """func.func @forward(%x: tensor<?xf32>, %h: tensor<3xf16>) -> (tensor<?xi32>, tensor<3xbf16>) {
      %bits = mlx.view %x : tensor<?xf32> -> tensor<?xi32>
      %halves = mlx.view %h : tensor<3xf16> -> tensor<3xbf16>
      func.return %bits, %halves : tensor<?xi32>, tensor<3xbf16>
    }"""
    h = np.array([1.0, -3.5, 65504.0], np.float16)
    bits, halves = run_ir(text, x, h)
    check_exact(bits, x.view(np.int32), np.int32)
    expected = torch.from_numpy(h.view(np.int16)).view(torch.bfloat16).float().numpy()
    check_exact(halves, expected)


def test_where() -> None:
    c = rng().random((3, 1)) > 0.5
    x, y = floats((3, 4), seed=1), floats((4,), seed=2)
    text = """func.func @forward(%c: tensor<?x1xi1>, %x: tensor<?x4xf32>, %y: tensor<4xf32>) -> tensor<?x4xf32> {
      %r = mlx.where %c, %x, %y : tensor<?x1xi1>, tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
      func.return %r : tensor<?x4xf32>
    }"""
    (got,) = run_ir(text, c, x, y)
    check_exact(got, np.where(c, x, y).astype(np.float32))


# --------------------------------------------------------------------------- reductions

REDUCTION_REF: dict[str, Callable[..., np.ndarray]] = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "mean": np.mean,
    "logsumexp": lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
    "any": np.any,
    "all": np.all,
}


def test_reduction_reference_covers_the_table() -> None:
    assert set(REDUCTION_REF) == set(mlx_dialect.REDUCTION_OPS)


def _reduced_type(shape: Sequence[int], axes: Sequence[int] | None, keep: bool, ty: str) -> str:
    reduced = range(len(shape)) if axes is None else [a % len(shape) for a in axes]
    dims = [("1" if keep else None) if i in reduced else ("?" if d < 0 else str(d))
            for i, d in enumerate(shape)]
    kept = [d for d in dims if d is not None]
    return f"tensor<{'x'.join([*kept, ty])}>"


REDUCTION_AXES: list[tuple[list[int] | None, bool]] = [
    ([1], True), (None, False), ([0, -1], False), (None, True), ([], False)]


@pytest.mark.parametrize("name", list(mlx_dialect.REDUCTION_OPS))
@pytest.mark.parametrize(("axes", "keep"), REDUCTION_AXES)
def test_reduction(name: str, axes: list[int] | None, keep: bool) -> None:
    kind = mlx_dialect.REDUCTION_OPS[name]
    predicate = kind is mlx_dialect.ElementwiseKind.PREDICATE
    x: np.ndarray = (rng().random((2, 3, 4)) > 0.3) if predicate else floats((2, 3, 4), "f32", 0.5, 1.5)
    in_ty = "i1" if predicate else "f32"
    out_ty = "i1" if predicate else "f32"
    attrs = ("" if axes is None else f" axes [{', '.join(map(str, axes))}]") + (" keepdims" if keep else "")
    out = _reduced_type((2, -1, 4), axes, keep, out_ty)
    text = ir("""func.func @forward(%x: tensor<2x?x4x$A>) -> $R {
      %y = mlx.$OP %x$ATTRS : tensor<2x?x4x$A> -> $R
      func.return %y : $R
    }""", OP=name, A=in_ty, R=out, ATTRS=attrs)
    (got,) = run_ir(text, x)
    axis = None if axes is None else tuple(axes)
    ref = REDUCTION_REF[name](x, axis=axis, keepdims=keep)
    if predicate:
        check_exact(got, ref)
    else:
        check(got, ref)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "logsumexp", "prod"])
@pytest.mark.parametrize("ty", ["f16", "bf16"])
def test_reduction_low_precision(name: str, ty: str) -> None:
    x = floats((4, 8), ty, 0.5, 1.5)
    text = ir("""func.func @forward(%x: tensor<?x8x$T>) -> tensor<?x$T> {
      %y = mlx.$OP %x axes [1] : tensor<?x8x$T> -> tensor<?x$T>
      func.return %y : tensor<?x$T>
    }""", OP=name, T=ty)
    (got,) = run_ir(text, x)
    check(got, REDUCTION_REF[name](x, axis=(1,), keepdims=False), TOL[ty])


def test_reduction_result_types_follow_the_ir() -> None:
    """MLX widens some reductions (int8 sum -> int32, mean of ints -> float32): the
    kernel casts back to the IR's result type."""
    x = ints((3, 4), -100, 100, np.int8)
    text = """func.func @forward(%x: tensor<3x4xi8>) -> (tensor<3xi8>, tensor<4xf16>, tensor<i1>) {
      %s = mlx.sum %x axes [1] : tensor<3x4xi8> -> tensor<3xi8>
      %m = mlx.mean %x axes [0] : tensor<3x4xi8> -> tensor<4xf16>
      %a = mlx.all %x : tensor<3x4xi8> -> tensor<i1>
      func.return %s, %m, %a : tensor<3xi8>, tensor<4xf16>, tensor<i1>
    }"""
    s, m, a = run_ir(text, x)
    check_exact(s, x.sum(axis=1, dtype=np.int64).astype(np.int8), np.int8)  # wraps, as torch
    assert m.dtype == np.float16
    check(m, x.astype(np.float64).mean(axis=0), TOL["f16"])
    check_exact(a, np.all(x != 0))


VARIANCE_OPS = ["var", "std"]
SCAN_OPS = ["cumsum", "cumprod", "cummax", "cummin"]
"""Ops whose tests write `mlx.$OP` (the coverage check reads these lists)."""


@pytest.mark.parametrize("name", VARIANCE_OPS)
@pytest.mark.parametrize("ty", FLOATS)
def test_var_std(name: str, ty: str) -> None:
    x = floats((2, 5, 8), ty, -2, 2)
    text = ir("""func.func @forward(%x: tensor<2x?x8x$T>) -> (tensor<2x?x1x$T>, tensor<$T>, tensor<2x8x$T>) {
      %a = mlx.$OP %x axes [2] ddof 0 keepdims : tensor<2x?x8x$T> -> tensor<2x?x1x$T>
      %b = mlx.$OP %x ddof 1 : tensor<2x?x8x$T> -> tensor<$T>
      %c = mlx.$OP %x axes [-2] ddof 1 : tensor<2x?x8x$T> -> tensor<2x8x$T>
      func.return %a, %b, %c : tensor<2x?x1x$T>, tensor<$T>, tensor<2x8x$T>
    }""", OP=name, T=ty)
    a, b, c = run_ir(text, x)
    fn = np.var if name == "var" else np.std
    check(a, fn(x, axis=2, ddof=0, keepdims=True), TOL[ty])
    check(b, fn(x, ddof=1), TOL[ty])
    check(c, fn(x, axis=1, ddof=1), TOL[ty])


def test_argmax_argmin() -> None:
    x = np.round(floats((3, 7), "f32", -3, 3))  # ties: the first index wins, as in torch
    text = """func.func @forward(%x: tensor<?x7xf32>) -> (tensor<?xui32>, tensor<?x1xi64>, tensor<ui32>, tensor<1x1xi64>, tensor<7xi32>) {
      %a = mlx.argmax %x axis 1 : tensor<?x7xf32> -> tensor<?xui32>
      %b = mlx.argmax %x axis -1 keepdims : tensor<?x7xf32> -> tensor<?x1xi64>
      %c = mlx.argmin %x : tensor<?x7xf32> -> tensor<ui32>
      %d = mlx.argmin %x keepdims : tensor<?x7xf32> -> tensor<1x1xi64>
      %e = mlx.argmin %x axis 0 : tensor<?x7xf32> -> tensor<7xi32>
      func.return %a, %b, %c, %d, %e : tensor<?xui32>, tensor<?x1xi64>, tensor<ui32>, tensor<1x1xi64>, tensor<7xi32>
    }"""
    a, b, c, d, e = run_ir(text, x)
    tx = torch.from_numpy(x)
    check_exact(a, tx.argmax(1).numpy(), np.uint32)
    check_exact(b, tx.argmax(-1, keepdim=True).numpy(), np.int64)
    check_exact(c, tx.argmin().numpy(), np.uint32)  # flattened
    check_exact(d, tx.argmin().reshape(1, 1).numpy(), np.int64)
    check_exact(e, tx.argmin(0).numpy(), np.int32)


def test_sort_argsort() -> None:
    x = np.round(floats((3, 9), "f32", -2, 2))  # ties: a stable sort keeps input order
    x[1, 4] = np.nan  # NaN sorts last, as in torch
    text = """func.func @forward(%x: tensor<?x9xf32>) -> (tensor<?x9xf32>, tensor<?x9xui32>, tensor<?x9xi64>) {
      %a = mlx.sort %x axis 1 : tensor<?x9xf32> -> tensor<?x9xf32>
      %b = mlx.argsort %x axis -1 : tensor<?x9xf32> -> tensor<?x9xui32>
      %c = mlx.argsort %x axis 0 : tensor<?x9xf32> -> tensor<?x9xi64>
      func.return %a, %b, %c : tensor<?x9xf32>, tensor<?x9xui32>, tensor<?x9xi64>
    }"""
    a, b, c = run_ir(text, x)
    tx = torch.from_numpy(x)
    np.testing.assert_array_equal(np.asarray(a), tx.sort(dim=1, stable=True).values.numpy())
    check_exact(b, tx.sort(dim=-1, stable=True).indices.numpy(), np.uint32)
    check_exact(c, tx.sort(dim=0, stable=True).indices.numpy(), np.int64)


def test_nonzero() -> None:
    """Row-major indices of the nonzero elements, NaN counted; empty, all-zero and 0-d
    inputs give `[0, rank]` (or `[count, 0]`), as torch.nonzero."""
    x = np.round(floats((5, 4), "f32", -1, 1))
    x[2, 3] = np.nan
    text = """func.func @forward(%x: tensor<?x4xf32>, %b: tensor<?xi1>, %s: tensor<i32>) -> (tensor<?x2xi64>, tensor<?x1xi64>, tensor<?x0xi64>) {
      %a = mlx.nonzero %x : tensor<?x4xf32> -> tensor<?x2xi64>
      %c = mlx.nonzero %b : tensor<?xi1> -> tensor<?x1xi64>
      %d = mlx.nonzero %s : tensor<i32> -> tensor<?x0xi64>
      func.return %a, %c, %d : tensor<?x2xi64>, tensor<?x1xi64>, tensor<?x0xi64>
    }"""
    for x_in, b, s in [
        (x, np.array([True, False, True]), np.array(3, dtype=np.int32)),
        (np.zeros((0, 4), np.float32), np.zeros((0,), bool), np.array(0, dtype=np.int32)),
        (np.zeros((2, 4), np.float32), np.array([False]), np.array(-1, dtype=np.int32)),
    ]:
        a, c, d = run_ir(text, x_in, b, s)
        for got, value in ((a, x_in), (c, b), (d, s)):
            check_exact(got, torch.nonzero(torch.from_numpy(np.asarray(value))).numpy(), np.int64)


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16", "i32", "i1"])
def test_unique(ty: str) -> None:
    """Sorted and consecutive unique with inverse and counts against torch.unique and
    torch.unique_consecutive: ties, NaN (each its own value, sorted last), a 0-d input
    and an empty one; without inverse/counts those results are `[0]`."""
    text = ir("""func.func @forward(%x: tensor<?x4x$T>) -> (tensor<?x$T>, tensor<?x4xi64>, tensor<?xi64>, tensor<?x$T>, tensor<?x4xi64>, tensor<?xi64>, tensor<?x$T>, tensor<0xi64>, tensor<0xi64>) {
      %v, %i, %c = mlx.unique %x return_inverse return_counts : tensor<?x4x$T> -> tensor<?x$T>, tensor<?x4xi64>, tensor<?xi64>
      %w, %j, %d = mlx.unique %x consecutive return_inverse return_counts : tensor<?x4x$T> -> tensor<?x$T>, tensor<?x4xi64>, tensor<?xi64>
      %u, %none, %nothing = mlx.unique %x : tensor<?x4x$T> -> tensor<?x$T>, tensor<0xi64>, tensor<0xi64>
      func.return %v, %i, %c, %w, %j, %d, %u, %none, %nothing : tensor<?x$T>, tensor<?x4xi64>, tensor<?xi64>, tensor<?x$T>, tensor<?x4xi64>, tensor<?xi64>, tensor<?x$T>, tensor<0xi64>, tensor<0xi64>
    }""", T=ty)
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32, "i1": torch.bool}[ty]
    generator = torch.Generator().manual_seed(0)
    cases = [torch.randint(-3, 4, (5, 4), generator=generator).to(dtype), torch.zeros((0, 4), dtype=dtype)]
    if dtype.is_floating_point:
        cases[0][1, 2] = cases[0][3, 0] = float("nan")
        cases[0][4, 1] = float("inf")
    for x in cases:
        v, i, c, w, j, d, u, none, nothing = run_ir(text, mx.array(x.float().numpy()).astype(MX_OF.get(ty, mx.float32)) if dtype.is_floating_point else mx.array(x.numpy()))
        for got, want in zip((v, i, c), torch.unique(x, return_inverse=True, return_counts=True)):
            np.testing.assert_array_equal(np.asarray(got, np.float64), want.double().numpy())
        for got, want in zip((w, j, d), torch.unique_consecutive(x, return_inverse=True, return_counts=True)):
            np.testing.assert_array_equal(np.asarray(got, np.float64), want.double().numpy())
        np.testing.assert_array_equal(np.asarray(u, np.float64), torch.unique(x).double().numpy())
        assert none.shape == (0,) and nothing.shape == (0,)
    (scalar, inverse, counts) = run_ir(ir("""func.func @forward(%x: tensor<f32>) -> (tensor<?xf32>, tensor<i64>, tensor<?xi64>) {
      %v, %i, %c = mlx.unique %x return_inverse return_counts : tensor<f32> -> tensor<?xf32>, tensor<i64>, tensor<?xi64>
      func.return %v, %i, %c : tensor<?xf32>, tensor<i64>, tensor<?xi64>
    }"""), mx.array(2.5))
    check_exact(scalar, np.array([2.5], np.float32))
    check_exact(inverse, np.array(0, np.int64))
    check_exact(counts, np.array([1], np.int64))


def test_repeat_interleave_and_item() -> None:
    """`repeat_interleave(repeats)` against torch (zero repeats, a single run, none at
    all), in the repeats' dtype; a negative repeat fails naming the value. `item`
    reads one element (an int, a bool as 0/1) as a Python int."""
    text = """func.func @forward(%r: tensor<?xi32>) -> tensor<?xi32> {
      %p = mlx.repeat_interleave %r : tensor<?xi32> -> tensor<?xi32>
      func.return %p : tensor<?xi32>
    }"""
    for repeats in ([2, 0, 3, 1], [0, 0, 4], [5], [0], []):
        (got,) = run_ir(text, mx.array(repeats, dtype=mx.int32))
        check_exact(got, torch.repeat_interleave(torch.tensor(repeats, dtype=torch.int32)).numpy(), np.int32)
    with pytest.raises(ValueError, match="repeats must not be negative, got -2"):
        run_ir(text, mx.array([1, -2, 3], dtype=mx.int32))
    item = """func.func @forward(%a: tensor<1x1xi64>, %b: tensor<i1>) -> (index, index) {
      %x = mlx.item %a : tensor<1x1xi64>
      %y = mlx.item %b : tensor<i1>
      func.return %x, %y : index, index
    }"""
    assert run_ir(item, mx.array([[-7]]), mx.array(True)) == [-7, 1]


def _scan_ref(x: np.ndarray, name: str, axis: int, reverse: bool, exclusive: bool) -> np.ndarray:
    fn = {"cumsum": np.cumsum, "cumprod": np.cumprod,
          "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}[name]
    identity = {"cumsum": 0, "cumprod": 1, "cummax": -np.inf, "cummin": np.inf}[name]
    if np.issubdtype(x.dtype, np.integer) and name in ("cummax", "cummin"):
        info = np.iinfo(x.dtype)
        identity = info.min if name == "cummax" else info.max
    y = np.flip(x, axis) if reverse else x
    out = fn(y, axis=axis).astype(x.dtype)
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full_like(out[:1], identity), out[:-1]], axis=0)
        out = np.moveaxis(out, 0, axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("name", SCAN_OPS)
@pytest.mark.parametrize(("reverse", "exclusive"), [(False, False), (True, False), (False, True),
                                                    (True, True)])
def test_scans(name: str, reverse: bool, exclusive: bool) -> None:
    x = floats((4, 6), "f32", 0.5, 1.5)
    i = ints((7,), -5, 6)
    flags = (" reverse" if reverse else "") + (" exclusive" if exclusive else "")
    text = ir("""func.func @forward(%x: tensor<4x?xf32>, %i: tensor<7xi32>) -> (tensor<4x?xf32>, tensor<4x?xf32>, tensor<7xi32>) {
      %a = mlx.$OP %x axis 1$F : tensor<4x?xf32> -> tensor<4x?xf32>
      %b = mlx.$OP %x axis -2$F : tensor<4x?xf32> -> tensor<4x?xf32>
      %c = mlx.$OP %i axis 0$F : tensor<7xi32> -> tensor<7xi32>
      func.return %a, %b, %c : tensor<4x?xf32>, tensor<4x?xf32>, tensor<7xi32>
    }""", OP=name, F=flags)
    a, b, c = run_ir(text, x, i)
    check(a, _scan_ref(x, name, 1, reverse, exclusive))
    check(b, _scan_ref(x, name, 0, reverse, exclusive))
    check_exact(c, _scan_ref(i, name, 0, reverse, exclusive), np.int32)


@pytest.mark.parametrize(("reverse", "exclusive"), [(False, False), (True, False), (False, True)])
def test_logcumsumexp(reverse: bool, exclusive: bool) -> None:
    x = floats((4, 6), "f32", -30, 30)  # wide: a naive log(cumsum(exp)) would overflow
    flags = (" reverse" if reverse else "") + (" exclusive" if exclusive else "")
    text = ir("""func.func @forward(%x: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xf32>) {
      %a = mlx.logcumsumexp %x axis 1$F : tensor<4x?xf32> -> tensor<4x?xf32>
      %b = mlx.logcumsumexp %x axis -2$F : tensor<4x?xf32> -> tensor<4x?xf32>
      func.return %a, %b : tensor<4x?xf32>, tensor<4x?xf32>
    }""", F=flags)
    a, b = run_ir(text, x * 3)
    for got, axis in ((a, 1), (b, 0)):
        y = np.flip(x * 3, axis) if reverse else x * 3
        ref = np.logaddexp.accumulate(y.astype(np.float64), axis=axis)
        if exclusive:
            ref = np.moveaxis(ref, axis, 0)
            ref = np.moveaxis(np.concatenate([np.full_like(ref[:1], -np.inf), ref[:-1]]), 0, axis)
        check(got, np.flip(ref, axis) if reverse else ref)


@pytest.mark.parametrize("ty", FLOATS)
@pytest.mark.parametrize("precise", [False, True])
def test_softmax(ty: str, precise: bool) -> None:
    x = floats((2, 3, 6), ty, -4, 4)
    flag = " precise" if precise else ""
    text = ir("""func.func @forward(%x: tensor<2x?x6x$T>) -> (tensor<2x?x6x$T>, tensor<2x?x6x$T>) {
      %a = mlx.softmax %x axes [-1]$F : tensor<2x?x6x$T> -> tensor<2x?x6x$T>
      %b = mlx.softmax %x axes [0, 2]$F : tensor<2x?x6x$T> -> tensor<2x?x6x$T>
      func.return %a, %b : tensor<2x?x6x$T>, tensor<2x?x6x$T>
    }""", T=ty, F=flag)
    a, b = run_ir(text, x)
    check(a, softmax(x, -1), TOL[ty])
    check(b, softmax(x, (0, 2)), TOL[ty])


# --------------------------------------------------------------------------- arith


ARITH_TEXT = """func.func @forward(%a: index, %b: index) -> (index, index, index, index, index, index, index, index, i64, index, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %c = arith.constant 100 : index
  %add = arith.addi %a, %b : index
  %sub = arith.subi %a, %b : index
  %mul = arith.muli %a, %b : index
  %fdiv = arith.floordivsi %a, %b : index
  %rem = arith.remsi %a, %b : index
  %min = arith.minsi %a, %b : index
  %max = arith.maxsi %a, %b : index
  %cast = arith.index_cast %a : index to i64
  %eq = arith.cmpi eq, %a, %b : index
  %ne = arith.cmpi ne, %a, %b : index
  %slt = arith.cmpi slt, %a, %b : index
  %sle = arith.cmpi sle, %a, %b : index
  %sgt = arith.cmpi sgt, %a, %b : index
  %sge = arith.cmpi sge, %a, %b : index
  %ult = arith.cmpi ult, %a, %b : index
  %ule = arith.cmpi ule, %a, %b : index
  %ugt = arith.cmpi ugt, %a, %b : index
  %uge = arith.cmpi uge, %a, %b : index
  %sel = arith.select %slt, %c, %a : index
  func.return %c, %add, %sub, %mul, %fdiv, %rem, %min, %max, %cast, %sel, %eq, %ne, %slt, %sle, %sgt, %sge, %ult, %ule, %ugt, %uge : index, index, index, index, index, index, index, index, i64, index, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
}"""


@pytest.mark.parametrize(("a", "b"), [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (6, 3), (-1, 5),
                                      (5, 5)])
def test_arith(a: int, b: int) -> None:
    got = run_ir(ARITH_TEXT, a, b)
    u = (1 << 64) - 1
    ua, ub = a & u, b & u
    remsi = int(math.fmod(a, b))  # truncated: the dividend's sign
    expected = [100, a + b, a - b, a * b, a // b, remsi, min(a, b), max(a, b), a,
                100 if a < b else a, a == b, a != b, a < b, a <= b, a > b, a >= b,
                ua < ub, ua <= ub, ua > ub, ua >= ub]
    assert got == expected
    assert all(isinstance(v, int) for v in got)
