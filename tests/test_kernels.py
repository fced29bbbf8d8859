"""Runtime kernels: every op of the `mlx` dialect (and integer `arith`) run from IR text
through the reference interpreter and compared with an independent reference (numpy
in float64, or eager torch).

Tolerances are relative (with the same absolute floor for values near zero) and sized
to the element type's precision: f32 1e-5 (a few dozen ulps: room for reductions,
matmuls and MLX's vectorised transcendental approximations); f16 1e-3 and bf16 1e-2
(about one ulp, 2^-10 and 2^-7: a kernel that computes in f32 and rounds once is
within half an ulp). Low-precision inputs are drawn exactly representable and the
reference runs in float64 on those same values, so the tolerance measures only the
kernel's own rounding. Ops that round intermediates in the low-precision type by
design (attention, matmul chains, normalisation) say so where they widen it.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from string import Template
from typing import Any, cast

import mlx.core as mx
import numpy as np
import pytest
import torch
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    bf16,
    f32,
    f64,
    i1,
    i32,
    i64,
)

import mlxir
from mlxir.codegen import read_program, serialize
from mlxir.dialects import mlx as mlx_dialect
from mlxir.dialects.common import DYNAMIC
from mlxir.runtime import dtypes, kernels
from mlxir.runtime.ir_interpreter import Program, parse_module, run_module
from mlxir.runtime.kernels import KERNELS, NOT_KERNELS
from mlxir.runtime.props import python_props, python_value

TOL = {"f32": 1e-5, "f16": 1e-3, "bf16": 1e-2}
MX_OF = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16}
FLOATS = list(TOL)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def quantize(values: np.ndarray, ty: str) -> np.ndarray:
    """`values` rounded to `ty`, returned as float64 (exactly representable in `ty`)."""
    array = dtypes.to_mx(np.asarray(values, np.float64), MX_OF[ty])
    return dtypes.to_numpy(array).astype(np.float64)


def floats(shape: Sequence[int], ty: str = "f32", low: float = -2.0, high: float = 2.0,
           seed: int = 0) -> np.ndarray:
    return quantize(rng(seed).uniform(low, high, shape), ty)


def ints(shape: Sequence[int], low: int = -5, high: int = 6, dtype: Any = np.int32,
         seed: int = 0) -> np.ndarray:
    return rng(seed).integers(low, high, shape).astype(dtype)


def ir(text: str, **types: str) -> str:
    return Template(text).substitute(types)


def run_ir(text: str, *inputs: Any, payloads: dict[str, Any] | None = None,
           state: dict[str, Any] | None = None) -> list[Any]:
    outputs = run_module(parse_module(text), payloads or {}, list(inputs), state)
    return [dtypes.to_numpy(o) if isinstance(o, mx.array) else o for o in outputs]


def check(got: Any, ref: Any, tol: float = TOL["f32"]) -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)


def check_exact(got: Any, ref: Any, dtype: Any = None) -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), f"dtype {got.dtype} != {dtype}"
    np.testing.assert_array_equal(got, ref)


def softmax(x: np.ndarray, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def torch_ref(fn: Callable[..., torch.Tensor]) -> Callable[..., np.ndarray]:
    return lambda *xs: fn(*(torch.from_numpy(np.asarray(x)) for x in xs)).numpy()


# --------------------------------------------------------------------------- coverage


def test_every_mlx_op_has_a_kernel() -> None:
    missing = [op.name for op in mlx_dialect.MLX_OPS
               if op.name not in NOT_KERNELS and op.name not in KERNELS]
    assert not missing, f"ops without a runtime kernel: {missing}"
    assert all(name in {op.name for op in mlx_dialect.MLX_OPS} for name in NOT_KERNELS)


def test_every_mlx_op_is_tested_here() -> None:
    """Each op appears in this file's IR (the table-driven tests cover the tables)."""
    source = Path(__file__).read_text()
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


# --------------------------------------------------------------------------- indexing


def test_take() -> None:
    x = floats((5, 16))
    idx = np.array([[0, 4, 1], [3, 3, 2]], np.int32)
    flat = np.array([0, 79, 17, 3, 40], np.int64)
    text = """func.func @forward(%x: tensor<?x16xf32>, %idx: tensor<2x3xi32>, %flat: tensor<5xi64>) -> (tensor<2x3x16xf32>, tensor<?x2x3xf32>, tensor<5xf32>) {
      %rows = mlx.take %x, %idx axis 0 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<2x3x16xf32>
      %cols = mlx.take %x, %idx axis -1 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<?x2x3xf32>
      %elems = mlx.take %x, %flat : tensor<?x16xf32>, tensor<5xi64> -> tensor<5xf32>
      func.return %rows, %cols, %elems : tensor<2x3x16xf32>, tensor<?x2x3xf32>, tensor<5xf32>
    }"""
    rows, cols, elems = run_ir(text, x, idx, flat)
    check_exact(rows, x[idx].astype(np.float32))
    check_exact(cols, x[:, idx].astype(np.float32))
    check_exact(elems, x.reshape(-1)[flat].astype(np.float32))  # flattened input


def test_take_along_axis() -> None:
    x = floats((3, 4))
    picked = np.array([[0], [3], [2]], np.uint32)
    rows = np.array([[2, 0, 1, 1], [0, 0, 2, 1]], np.int64)
    col = np.array([[1], [0]], np.int32)  # broadcasts against x's other dim
    text = """func.func @forward(%x: tensor<?x4xf32>, %p: tensor<?x1xui32>, %r: tensor<2x4xi64>, %c: tensor<2x1xi32>) -> (tensor<?x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
      %a = mlx.take_along_axis %x, %p axis 1 : tensor<?x4xf32>, tensor<?x1xui32> -> tensor<?x1xf32>
      %b = mlx.take_along_axis %x, %r axis 0 : tensor<?x4xf32>, tensor<2x4xi64> -> tensor<2x4xf32>
      %c2 = mlx.take_along_axis %x, %c axis 0 : tensor<?x4xf32>, tensor<2x1xi32> -> tensor<2x4xf32>
      func.return %a, %b, %c2 : tensor<?x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>
    }"""
    a, b, c = run_ir(text, x, picked, rows, col)
    tx = torch.from_numpy(x)
    check_exact(a, torch.gather(tx, 1, torch.from_numpy(picked.astype(np.int64))).float().numpy())
    check_exact(b, np.take_along_axis(x, rows, 0).astype(np.float32))
    check_exact(c, np.take_along_axis(x, np.broadcast_to(col, (2, 4)), 0).astype(np.float32))


def gather_reference(x: np.ndarray, indices: Sequence[np.ndarray], axes: Sequence[int],
                     sizes: Sequence[int]) -> np.ndarray:
    """The definition, elementwise: `out[b, s] = x[idx_k[b] + s_a (indexed), s_d (else)]`."""
    axes = [a % x.ndim for a in axes]
    batch = np.broadcast_shapes(*(i.shape for i in indices)) if indices else ()
    idx = [np.broadcast_to(i, batch) for i in indices]
    out = np.empty((*batch, *sizes), x.dtype)
    for b in np.ndindex(*batch):
        for s in np.ndindex(*sizes):
            where = [int(idx[axes.index(d)][b]) + s[d] if d in axes else s[d]
                     for d in range(x.ndim)]
            out[(*b, *s)] = x[tuple(where)]
    return out


def test_gather() -> None:
    x = floats((6, 8, 16))
    i = np.array([0, 5, 2, 1, 3], np.int32)
    j = np.array([[0], [2], [4]], np.int64)
    text = """func.func @forward(%x: tensor<?x8x16xf32>, %i: tensor<5xi32>, %j: tensor<3x1xi64>) -> (tensor<5x1x8x16xf32>, tensor<3x5x1x1x16xf32>, tensor<5x?x8x1xf32>, tensor<3x1x1x8x4xf32>) {
      %n = mlx.dim %x axis 0 : tensor<?x8x16xf32>
      %rows = mlx.gather %x[%i] axes [0] slice_sizes [1, 8, 16] : tensor<?x8x16xf32>, (tensor<5xi32>) -> tensor<5x1x8x16xf32>
      %pairs = mlx.gather %x[%j, %i] axes [0, 1] slice_sizes [1, 1, 16] : tensor<?x8x16xf32>, (tensor<3x1xi64>, tensor<5xi32>) -> tensor<3x5x1x1x16xf32>
      %cols = mlx.gather %x[%i] axes [-1] slice_sizes [%n, 8, 1] : tensor<?x8x16xf32>, (tensor<5xi32>) -> tensor<5x?x8x1xf32>
      %part = mlx.gather %x[%j] axes [0] slice_sizes [1, 8, 4] : tensor<?x8x16xf32>, (tensor<3x1xi64>) -> tensor<3x1x1x8x4xf32>
      func.return %rows, %pairs, %cols, %part : tensor<5x1x8x16xf32>, tensor<3x5x1x1x16xf32>, tensor<5x?x8x1xf32>, tensor<3x1x1x8x4xf32>
    }"""
    rows, pairs, cols, part = run_ir(text, x, i, j)
    check_exact(rows, gather_reference(x, [i], [0], [1, 8, 16]))
    check_exact(pairs, gather_reference(x, [j, i], [0, 1], [1, 1, 16]))
    check_exact(cols, gather_reference(x, [i], [2], [6, 8, 1]))
    check_exact(part, gather_reference(x, [j], [0], [1, 8, 4]))
    # x[:, i, j] (docs/semantics.md §2, step 5: gather, then transpose) starts here
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    text = """func.func @forward(%x: tensor<2x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<2x2x1x1xf32> {
      %g = mlx.gather %x[%i, %j] axes [1, 2] slice_sizes [2, 1, 1] : tensor<2x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<2x2x1x1xf32>
      func.return %g : tensor<2x2x1x1xf32>
    }"""
    (g,) = run_ir(text, a, np.array([0, 2]), np.array([1, 3]))
    check_exact(g[:, :, 0, 0].T, [[1, 11], [13, 23]])


def test_gather_wide_slices_on_indexed_axes() -> None:
    """The general form: a slice of several elements starting at each index."""
    x = floats((6, 7, 5))
    i = np.array([[0, 3], [4, 1]], np.int32)
    j = np.array([2, 0], np.int32)
    text = """func.func @forward(%x: tensor<6x7x?xf32>, %i: tensor<2x2xi32>, %j: tensor<2xi32>, %w: index) -> (tensor<2x2x2x3x?xf32>, tensor<2x3x7x2xf32>) {
      %a = mlx.gather %x[%i, %j] axes [0, 1] slice_sizes [2, 3, %w] : tensor<6x7x?xf32>, (tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2x2x3x?xf32>
      %b = mlx.gather %x[%j] axes [2] slice_sizes [3, 7, 2] : tensor<6x7x?xf32>, (tensor<2xi32>) -> tensor<2x3x7x2xf32>
      func.return %a, %b : tensor<2x2x2x3x?xf32>, tensor<2x3x7x2xf32>
    }"""
    a, b = run_ir(text, x, i, j, 4)
    check_exact(a, gather_reference(x, [i, j], [0, 1], [2, 3, 4]))
    check_exact(b, gather_reference(x, [j], [2], [3, 7, 2]))


def test_gather_unsorted_axes() -> None:
    """Index tensors listed against axes out of order (`[2, 0]`), both forms."""
    x = floats((4, 5, 6))
    i, j = np.array([[1, 3]], np.int32), np.array([0, 2], np.int32)
    text = """func.func @forward(%x: tensor<4x5x6xf32>, %i: tensor<1x2xi32>, %j: tensor<2xi32>) -> (tensor<1x2x1x5x1xf32>, tensor<1x2x2x5x1xf32>) {
      %a = mlx.gather %x[%i, %j] axes [2, 0] slice_sizes [1, 5, 1] : tensor<4x5x6xf32>, (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2x1x5x1xf32>
      %b = mlx.gather %x[%i, %j] axes [2, 0] slice_sizes [2, 5, 1] : tensor<4x5x6xf32>, (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2x2x5x1xf32>
      func.return %a, %b : tensor<1x2x1x5x1xf32>, tensor<1x2x2x5x1xf32>
    }"""
    a, b = run_ir(text, x, i, j)
    check_exact(a, gather_reference(x, [i, j], [2, 0], [1, 5, 1]))
    check_exact(b, gather_reference(x, [i, j], [2, 0], [2, 5, 1]))


def scatter_reference(x: np.ndarray, indices: Sequence[np.ndarray], axes: Sequence[int],
                      updates: np.ndarray, reduce: str) -> np.ndarray:
    axes = [a % x.ndim for a in axes]
    out = x.copy()
    batch_rank = updates.ndim - x.ndim
    batch = updates.shape[:batch_rank]
    idx = [np.broadcast_to(i, batch) for i in indices]
    combine = {"none": lambda old, new: new, "add": np.add, "prod": np.multiply,
               "max": np.maximum, "min": np.minimum}[reduce]
    for b in np.ndindex(*batch):
        for s in np.ndindex(*updates.shape[batch_rank:]):
            where = tuple(int(idx[axes.index(d)][b]) + s[d] if d in axes else s[d]
                          for d in range(x.ndim))
            out[where] = combine(out[where], updates[(*b, *s)])
    return out


@pytest.mark.parametrize("reduce", ["none", "add", "prod", "max", "min"])
def test_scatter(reduce: str) -> None:
    x = floats((6, 8), seed=1)
    unique = reduce == "none"  # a plain write with duplicate indices is unordered
    i = np.array([4, 0, 2, 5, 1] if unique else [4, 0, 4, 5, 0], np.int64)
    j = np.array([7, 1, 3, 0, 6] if unique else [7, 1, 7, 0, 6], np.int64)
    rows = floats((5, 1, 8), seed=2)
    elems = floats((5, 1, 1), seed=3)
    attr = "" if reduce == "none" else f' reduce "{reduce}"'
    text = ir("""func.func @forward(%x: tensor<?x8xf32>, %i: tensor<5xi64>, %j: tensor<5xi64>, %rows: tensor<5x1x8xf32>, %elems: tensor<5x1x1xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
      %a = mlx.scatter %x[%i] axes [0], %rows$R : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x8xf32> -> tensor<?x8xf32>
      %b = mlx.scatter %x[%i, %j] axes [0, -1], %elems$R : tensor<?x8xf32>, (tensor<5xi64>, tensor<5xi64>), tensor<5x1x1xf32> -> tensor<?x8xf32>
      %c = mlx.scatter %x[%j] axes [1], %elems$R : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x1xf32> -> tensor<?x8xf32>
      func.return %a, %b, %c, %x : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
    }""", R=attr)
    a, b, c, same = run_ir(text, x, i, j, rows, elems)
    check(a, scatter_reference(x, [i], [0], rows, reduce))
    check(b, scatter_reference(x, [i, j], [0, 1], elems, reduce))
    check(c, scatter_reference(x, [j], [1], elems, reduce))
    check_exact(same, x.astype(np.float32))  # the operand itself is untouched


@pytest.mark.parametrize("reduce", ["none", "add"])
def test_scatter_wide_slices(reduce: str) -> None:
    """Slices wider than one element on an indexed axis, partial other axes, and an
    indexed last axis (moved to the front and back)."""
    x = floats((6, 7, 5), seed=1)
    i = np.array([0, 3], np.int32)
    j = np.array([[4], [1]], np.int32)
    upd = floats((2, 2, 2, 3, 4), seed=2)
    slab = floats((2, 1, 6, 2), seed=3)
    unit = floats((2, 6, 7, 1), seed=4)
    attr = "" if reduce == "none" else f' reduce "{reduce}"'
    text = ir("""func.func @forward(%x: tensor<6x7x5xf32>, %i: tensor<2xi32>, %j: tensor<2x1xi32>, %u: tensor<2x2x2x3x4xf32>, %s: tensor<2x1x6x2xf32>, %unit: tensor<2x6x7x1xf32>) -> (tensor<6x7x5xf32>, tensor<6x7x5xf32>, tensor<6x7x5xf32>) {
      %a = mlx.scatter %x[%j, %i] axes [0, 1], %u$R : tensor<6x7x5xf32>, (tensor<2x1xi32>, tensor<2xi32>), tensor<2x2x2x3x4xf32> -> tensor<6x7x5xf32>
      %b = mlx.scatter %x[%i] axes [2], %s$R : tensor<6x7x5xf32>, (tensor<2xi32>), tensor<2x1x6x2xf32> -> tensor<6x7x5xf32>
      %c = mlx.scatter %x[%i] axes [2], %unit$R : tensor<6x7x5xf32>, (tensor<2xi32>), tensor<2x6x7x1xf32> -> tensor<6x7x5xf32>
      func.return %a, %b, %c : tensor<6x7x5xf32>, tensor<6x7x5xf32>, tensor<6x7x5xf32>
    }""", R=attr)
    a, b, c = run_ir(text, x, i, j, upd, slab, unit)
    check(a, scatter_reference(x, [j, i], [0, 1], upd, reduce))
    check(b, scatter_reference(x, [i], [2], slab, reduce))
    check(c, scatter_reference(x, [i], [2], unit, reduce))  # unit slices, a 3-cycle perm


def test_slice_update() -> None:
    cache = floats((1, 2, 6, 4), seed=1)
    new = floats((1, 2, 2, 4), seed=2)
    text = """func.func @forward(%cache: tensor<1x2x?x4xf32>, %new: tensor<1x2x2x4xf32>, %pos: index) -> (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) {
      %a = mlx.slice_update %cache, %new start [1] axes [2] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x?x4xf32>
      %b = mlx.slice_update %cache, %new start [%pos, 0] axes [-2, 0] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x?x4xf32>
      %c = mlx.slice_update %cache, %new start [-2] axes [2] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x?x4xf32>
      func.return %a, %b, %c : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>
    }"""
    program = Program(parse_module(text), {})

    def written(start: int) -> np.ndarray:
        out = cache.copy()
        out[:, :, start:start + 2] = new
        return out

    for pos, clamped in [(3, 3), (4, 4), (0, 0), (5, 4), (100, 4), (-1, 4), (-6, 0), (-50, 0)]:
        a, b, c = (dtypes.to_numpy(v) for v in program([cache, new, pos]))
        check_exact(a, written(1).astype(np.float32))
        check_exact(b, written(clamped).astype(np.float32))  # clamped inside, like XLA
        check_exact(c, written(4).astype(np.float32))


@pytest.mark.parametrize("compiled", [False, True], ids=["interpreted", "compiled"])
def test_dynamic_slice_update_clamps_a_start_the_trace_does_not_fix(compiled: bool) -> None:
    """The start is a tensor: one compiled trace serves every start (the decode step's
    cache write), and an out-of-range start is clamped as `mlx.slice_update` clamps
    it, never written past the cache (MLX's own DynamicSliceUpdate does)."""
    cache, new, square, patch = (
        floats(shape, seed=seed).astype(np.float32)
        for seed, shape in enumerate([(1, 2, 6, 4), (1, 2, 2, 4), (3, 5), (2, 2)])
    )
    text = """func.func @forward(%cache: tensor<1x2x?x4xf32>, %new: tensor<1x2x2x4xf32>, %pos: tensor<i64>, %m: tensor<3x5xf32>, %p: tensor<2x2xf32>, %at: tensor<2xi32>) -> (tensor<1x2x?x4xf32>, tensor<3x5xf32>) {
      %a = mlx.dynamic_slice_update %cache, %new start %pos axes [2] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32>, tensor<i64> -> tensor<1x2x?x4xf32>
      %b = mlx.dynamic_slice_update %m, %p start %at axes [1, 0] : tensor<3x5xf32>, tensor<2x2xf32>, tensor<2xi32> -> tensor<3x5xf32>
      func.return %a, %b : tensor<1x2x?x4xf32>, tensor<3x5xf32>
    }"""
    program = mlxir.Program(serialize(parse_module(text)), compile=compiled)

    def written(start: int) -> np.ndarray:
        out = cache.copy()
        out[:, :, start:start + 2] = new
        return out

    def patched(column: int, row: int) -> np.ndarray:
        out = square.copy()
        out[row:row + 2, column:column + 2] = patch
        return out

    cases = [(3, 3, (1, 1), (1, 1)), (4, 4, (3, 0), (3, 0)), (0, 0, (0, 1), (0, 1)),
             (5, 4, (9, 9), (3, 1)), (100, 4, (-1, 0), (3, 0)), (-1, 4, (-9, -9), (0, 0)),
             (-6, 0, (2, -1), (2, 1)), (-50, 0, (0, 0), (0, 0))]
    for pos, clamped, at, at_clamped in cases:
        a, b = program(cache, new, np.array(pos), square, patch, np.array(at, dtype=np.int32))
        check_exact(dtypes.to_numpy(a), written(clamped))
        check_exact(dtypes.to_numpy(b), patched(*at_clamped))
    assert program.traces == (1 if compiled else 0)
    with pytest.raises(RuntimeError, match="does not fit input"):
        program(cache[:, :, :1], new, np.array(0), square, patch, np.array((0, 0), dtype=np.int32))


# --------------------------------------------------------------------------- shapes


def test_reshape_broadcast_to() -> None:
    x = floats((3, 4, 8))
    col = floats((3, 1))
    text = """func.func @forward(%x: tensor<?x4x8xf32>, %col: tensor<?x1xf32>) -> (tensor<?x32xf32>, tensor<?x8xf32>, tensor<1x?x1xf32>, tensor<2x?x8xf32>) {
      %n = mlx.dim %x axis 0 : tensor<?x4x8xf32>
      %flat = mlx.reshape %x [%n, 32] : tensor<?x4x8xf32> -> tensor<?x32xf32>
      %c4 = arith.constant 4 : index
      %n4 = arith.muli %n, %c4 : index
      %rows = mlx.reshape %x [%n4, 8] : tensor<?x4x8xf32> -> tensor<?x8xf32>
      %m = mlx.dim %col axis 0 : tensor<?x1xf32>
      %r3 = mlx.reshape %col [1, %m, 1] : tensor<?x1xf32> -> tensor<1x?x1xf32>
      %wide = mlx.broadcast_to %col [2, %m, 8] : tensor<?x1xf32> -> tensor<2x?x8xf32>
      func.return %flat, %rows, %r3, %wide : tensor<?x32xf32>, tensor<?x8xf32>, tensor<1x?x1xf32>, tensor<2x?x8xf32>
    }"""
    flat, rows, r3, wide = run_ir(text, x, col)
    check_exact(flat, x.reshape(3, 32).astype(np.float32))
    check_exact(rows, x.reshape(12, 8).astype(np.float32))
    check_exact(r3, col.reshape(1, 3, 1).astype(np.float32))
    check_exact(wide, np.broadcast_to(col, (2, 3, 8)).astype(np.float32))


def test_transpose_expand_squeeze() -> None:
    x = floats((2, 3, 8))
    text = """func.func @forward(%x: tensor<2x?x8xf32>) -> (tensor<8x2x?xf32>, tensor<1x2x?x8x1xf32>, tensor<2x?x8xf32>, tensor<2x8xf32>) {
      %t = mlx.transpose %x [2, 0, 1] : tensor<2x?x8xf32> -> tensor<8x2x?xf32>
      %e = mlx.expand_dims %x [0, -1] : tensor<2x?x8xf32> -> tensor<1x2x?x8x1xf32>
      %s = mlx.squeeze %e [0, 4] : tensor<1x2x?x8x1xf32> -> tensor<2x?x8xf32>
      %s1 = mlx.squeeze %x [-2] : tensor<2x?x8xf32> -> tensor<2x8xf32>
      func.return %t, %e, %s, %s1 : tensor<8x2x?xf32>, tensor<1x2x?x8x1xf32>, tensor<2x?x8xf32>, tensor<2x8xf32>
    }"""
    with pytest.raises(ValueError):  # squeezing a dynamic dim that is not 1
        run_ir(text, x)
    x1 = floats((2, 1, 8))
    t, e, s, s1 = run_ir(text, x1)
    check_exact(t, x1.transpose(2, 0, 1).astype(np.float32))
    check_exact(e, x1[None, ..., None].astype(np.float32))
    check_exact(s, x1.astype(np.float32))
    check_exact(s1, x1[:, 0].astype(np.float32))


def test_concatenate_split() -> None:
    a, b, c = floats((2, 5), seed=1), floats((3, 5), seed=2), floats((2, 4), seed=3)
    text = """func.func @forward(%a: tensor<2x?xf32>, %b: tensor<3x?xf32>, %c: tensor<?x4xf32>) -> (tensor<5x?xf32>, tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<1x4xf32>, tensor<?x4xf32>, tensor<2x?xf32>, tensor<?x0xf32>) {
      %ab = mlx.concatenate %a, %b axis 0 : tensor<2x?xf32>, tensor<3x?xf32> -> tensor<5x?xf32>
      %wide = mlx.concatenate %c, %c, %c axis -1 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x12xf32>
      %p:4 = mlx.split %wide at [4, 6, 20] axis 1 : tensor<?x12xf32> -> tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<?x0xf32>
      %q:2 = mlx.split %c at [1] axis 0 : tensor<?x4xf32> -> tensor<1x4xf32>, tensor<?x4xf32>
      %whole = mlx.split %a at [] axis 1 : tensor<2x?xf32> -> tensor<2x?xf32>
      func.return %ab, %p#0, %p#1, %p#2, %q#0, %q#1, %whole, %p#3 : tensor<5x?xf32>, tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<1x4xf32>, tensor<?x4xf32>, tensor<2x?xf32>, tensor<?x0xf32>
    }"""
    ab, p0, p1, p2, q0, q1, whole, empty = run_ir(text, a, b, c)
    wide = np.concatenate([c, c, c], axis=1).astype(np.float32)
    check_exact(ab, np.concatenate([a, b]).astype(np.float32))
    for got, ref in zip((p0, p1, p2, empty), np.split(wide, [4, 6, 20], axis=1), strict=True):
        check_exact(got, ref)  # a split point past the end clamps, as in numpy
    check_exact(q0, c[:1].astype(np.float32))
    check_exact(q1, c[1:].astype(np.float32))
    check_exact(whole, a.astype(np.float32))


def test_slice() -> None:
    x = floats((8, 6, 16))
    text = """func.func @forward(%x: tensor<8x?x16xf32>, %lo: index) -> (tensor<4x5x8xf32>, tensor<4x?x8xf32>, tensor<8x4x4xf32>, tensor<0x?x8xf32>, tensor<8x?x16xf32>, tensor<3x?x2xf32>) {
      %n = mlx.dim %x axis 1 : tensor<8x?x16xf32>
      %c1 = arith.constant 1 : index
      %hi = arith.subi %n, %c1 : index
      %a = mlx.slice %x [0, 0, 0] to [8, 5, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x5x8xf32>
      %b = mlx.slice %x [0, %lo, 0] to [8, %hi, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x?x8xf32>
      %c = mlx.slice %x [-1, 0, 15] to [-9, 4, 0] step [-1, 1, -4] : tensor<8x?x16xf32> -> tensor<8x4x4xf32>
      %d = mlx.slice %x [2, 1, 0] to [2, 9223372036854775807, -8] step [1, 1, 1] : tensor<8x?x16xf32> -> tensor<0x?x8xf32>
      %e = mlx.slice %x [-9223372036854775807, 0, 0] to [9223372036854775807, %n, 16] step [1, 1, 1] : tensor<8x?x16xf32> -> tensor<8x?x16xf32>
      %f = mlx.slice %x [6, %hi, 9] to [0, -100, 3] step [-2, -2, -3] : tensor<8x?x16xf32> -> tensor<3x?x2xf32>
      func.return %a, %b, %c, %d, %e, %f : tensor<4x5x8xf32>, tensor<4x?x8xf32>, tensor<8x4x4xf32>, tensor<0x?x8xf32>, tensor<8x?x16xf32>, tensor<3x?x2xf32>
    }"""
    a, b, c, d, e, f = run_ir(text, x, 2)
    x32 = x.astype(np.float32)
    check_exact(a, x32[0:8:2, 0:5, 0:16:2])
    check_exact(b, x32[0:8:2, 2:5, 0:16:2])
    check_exact(c, x32[-1:-9:-1, 0:4, 15:0:-4])
    check_exact(d, x32[2:2, 1:, 0:-8])
    check_exact(e, x32)
    check_exact(f, x32[6:0:-2, 5:-100:-2, 9:3:-3])


@pytest.mark.parametrize("ty", ["f32", "i32", "i1"])
def test_pad_tile(ty: str) -> None:
    x = {"f32": floats((2, 3)), "i32": ints((2, 3)), "i1": rng().random((2, 3)) > 0.5}[ty]
    text = ir("""func.func @forward(%x: tensor<2x?x$T>) -> (tensor<4x?x$T>, tensor<2x?x$T>, tensor<6x?x$T>, tensor<2x2x?x$T>) {
      %p = mlx.pad %x low [1, 0] high [1, 3] value -1.500000e+00 : tensor<2x?x$T> -> tensor<4x?x$T>
      %z = mlx.pad %x low [0, 0] high [0, 0] value 0.000000e+00 : tensor<2x?x$T> -> tensor<2x?x$T>
      %t = mlx.tile %x [3, 2] : tensor<2x?x$T> -> tensor<6x?x$T>
      %u = mlx.tile %x [2, 1, 2] : tensor<2x?x$T> -> tensor<2x2x?x$T>
      func.return %p, %z, %t, %u : tensor<4x?x$T>, tensor<2x?x$T>, tensor<6x?x$T>, tensor<2x2x?x$T>
    }""", T=ty)
    p, z, t, u = run_ir(text, x)
    np_type = {"f32": np.float32, "i32": np.int32, "i1": np.bool_}[ty]
    value = torch.tensor(-1.5).to({"f32": torch.float32, "i32": torch.int32, "i1": torch.bool}[ty])
    ref = torch.nn.functional.pad(torch.from_numpy(x.astype(np_type)), (0, 3, 1, 1),
                                  value=float(value))
    check_exact(p, ref.numpy().astype(np_type), np_type)  # -1.5 as i32 is -1 (toward zero)
    check_exact(z, x.astype(np_type))
    check_exact(t, np.tile(x, (3, 2)).astype(np_type))
    check_exact(u, np.tile(x, (2, 1, 2)).astype(np_type))


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


def check_relative_to_max(got: Any, ref: np.ndarray, bound: float) -> None:
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    error = np.abs(got - ref).max() / np.abs(ref).max()
    assert error <= bound, f"max error {error:.3g} of max |reference| > {bound}"


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("group_size", [32, 64])
@pytest.mark.parametrize("bits", [4, 8])
def test_quantized_matmul(bits: int, group_size: int, ty: str) -> None:
    """Affine mode against `x @ mx.dequantize(w, scales, biases).T`: bitwise in f32,
    within QMM_BF16_BOUND in bf16; also without `transpose` (`x @ dequantize(w)`)."""
    packed, groups = 256 * bits // 32, 256 // group_size
    text = ir("""func.func @forward(%x: tensor<2x?x256x$T>, %w: tensor<64x${P}xui32>, %s: tensor<64x${G}x$T>, %b: tensor<64x${G}x$T>, %wn: tensor<256x${Q}xui32>, %sn: tensor<256x${H}x$T>, %bn: tensor<256x${H}x$T>) -> (tensor<2x?x64x$T>, tensor<2x?x64x$T>) {
      %y = mlx.quantized_matmul %x, %w, %s, %b group_size $GS bits $B mode "affine" transpose : tensor<2x?x256x$T>, tensor<64x${P}xui32>, tensor<64x${G}x$T>, tensor<64x${G}x$T> -> tensor<2x?x64x$T>
      %z = mlx.quantized_matmul %x, %wn, %sn, %bn group_size $GS bits $B mode "affine" : tensor<2x?x256x$T>, tensor<256x${Q}xui32>, tensor<256x${H}x$T>, tensor<256x${H}x$T> -> tensor<2x?x64x$T>
      func.return %y, %z : tensor<2x?x64x$T>, tensor<2x?x64x$T>
    }""", T=ty, P=str(packed), G=str(groups), Q=str(64 * bits // 32), H=str(64 // group_size),
              GS=str(group_size), B=str(bits))
    x, w, s, b, ref = quantized_inputs(bits, group_size, ty, True, seed=1)
    _, wn, sn, bn, ref_n = quantized_inputs(bits, group_size, ty, False, seed=1)
    y, z = run_ir(text, x, w, s, b, wn, sn, bn)
    if ty == "f32":
        check_exact(y, ref, np.float32)
        check_exact(z, ref_n, np.float32)
    else:
        check_relative_to_max(y, ref, QMM_BF16_BOUND)
        check_relative_to_max(z, ref_n, QMM_BF16_BOUND)


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("bits", [2, 4, 8])
def test_cpu_dequantized_product_in_blocks_is_mlx_dequantize_bitwise(
    bits: int, ty: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CPU path for many rows unpacks 2/4/8-bit codes as bytes and multiplies by
    blocks of output rows (`kernels._dequantized_product`): the same values as
    `mx.dequantize`, and the same dot products as one matmul with it, bit for bit
    where the blocks are whole (a small block size makes 192 rows three blocks). A
    partial last block (200 rows) may go through another BLAS micro-kernel, whose sums
    round differently: within 2^-20 of the largest output there."""
    monkeypatch.setattr(kernels, "CPU_DEQUANTIZED_CHUNK", 64 * 256 * MX_OF[ty].size)
    dtype = MX_OF[ty]
    for rows in (192, 200):
        mx.random.seed(3)
        x = mx.random.normal((3, 7, 256)).astype(dtype)
        dense = mx.random.normal((rows, 256)).astype(dtype)
        w, scales, biases = mx.quantize(dense, group_size=64, bits=bits)
        whole = mx.dequantize(w, scales, biases, group_size=64, bits=bits, dtype=dtype)
        lean = kernels._affine_dequantize(w, scales, biases, bits, 64, dtype)
        assert mx.array_equal(lean, whole).item()
        product = kernels._dequantized_product(x, w, scales, biases, bits, 64)
        reference = mx.matmul(x, whole.T)
        if rows == 192:
            assert mx.array_equal(product, reference).item()
        else:
            check_relative_to_max(product.astype(mx.float32), dtypes.to_numpy(reference), 2**-20)


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
        (spread,) = KERNELS["mlx.quantized_matmul"](props, [dtype])([x, *operands])
        assert len(calls) == 3 and len({str(stream) for stream in calls}) == 3, calls
        assert spread.shape == reference.shape and mx.array_equal(spread, reference).item()
        calls.clear()
        monkeypatch.setenv("MLXIR_CPU_STREAMS", "1")
        (single,) = KERNELS["mlx.quantized_matmul"](props, [dtype])([x, *operands])
        assert len(calls) == 1 and mx.array_equal(single, reference).item()
    if mode == "affine":
        monkeypatch.setenv("MLXIR_CPU_STREAMS", "3")
        wn, sn, bn = mx.quantize(dense.T, group_size=group_size, bits=bits)
        x = mx.random.normal((1, 512)).astype(dtype)
        calls.clear()
        (plain,) = KERNELS["mlx.quantized_matmul"]({**props, "transpose": False}, [dtype])([x, wn, sn, bn])
        assert len(calls) == 1
        reference = original(x, wn, sn, bn, transpose=False, group_size=group_size, bits=bits)
        assert mx.array_equal(plain, reference).item()


def test_cpu_streams_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """`MLXIR_CPU_STREAMS` sets the count (1, or a malformed value, turns spreading
    off), `fewer_cpu_streams` lowers it in a block, and the default CPU stream comes
    first; small weights stay whole (`CPU_STREAM_MIN_ELEMENTS` per block)."""
    from mlxir.runtime import streams

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
    least = kernels.CPU_STREAM_MIN_ELEMENTS
    assert kernels._row_blocks(100, 2 * least - 1, 4) == [slice(0, 100)]
    assert kernels._row_blocks(100, 2 * least, 4) == [slice(0, 50), slice(50, 100)]
    assert kernels._row_blocks(3, 100 * least, 8) == [slice(0, 1), slice(1, 2), slice(2, 3)]
    assert kernels._row_blocks(0, 0, 8) == [slice(0, 0)]


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


@pytest.mark.parametrize("mx_type", [mx.float32, mx.float16, mx.bfloat16], ids=str)
def test_cpu_rope_is_mlx_cpu_composition_bitwise(mx_type: Any) -> None:
    """The CPU rope (`kernels._cpu_rope`) computes what `mx.fast.rope` composes on
    MLX's CPU, bit for bit: rotate-half and interleaved, whole and partial rotary,
    base or freqs, one start or one per row, rank 3 to 5, eagerly and compiled."""
    rng = np.random.default_rng(5)
    for traditional, dims, rows, shape, with_freqs in itertools.product(
        [False, True], [16, 8], [False, True], [(3, 4, 5, 16), (3, 5, 16), (3, 2, 2, 5, 16)], [False, True]
    ):
        x = mx.array(rng.standard_normal(shape).astype(np.float32)).astype(mx_type)
        offset = mx.array([7, 0, 2047], dtype=mx.int64) if rows else 100
        freqs = mx.array((1e4 ** (np.arange(0, dims, 2) / dims)).astype(np.float32)) if with_freqs else None
        options: dict[str, Any] = dict(
            traditional=traditional, base=None if with_freqs else 1e4, scale=0.5, freqs=freqs
        )
        with mx.stream(mx.cpu):
            expected = mx.fast.rope(x, dims, offset=offset, **options)
            assert mx.array_equal(kernels._cpu_rope(x, dims, offset=offset, **options), expected).item()
            if rows:
                compiled = mx.compile(functools.partial(kernels._cpu_rope, dims=dims, **options))
                assert mx.array_equal(compiled(x, offset=offset), expected).item(), (traditional, dims, shape)


def test_cpu_sdpa_is_mlx_cpu_composition_bitwise() -> None:
    """The CPU attention (`kernels._cpu_sdpa`, grouped queries as one matrix per K/V
    head) gives MLX's own CPU composition's bits: grouped and not, one and several
    query rows, bool masks shared by the heads or per head, additive masks, none."""
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
            got = kernels._cpu_sdpa(q, k, v, scale=0.25, mask=mask)
            assert mx.array_equal(got, expected).item(), (heads, kv_heads, rows, slots, mask_kind)


def test_compiled_ropes_share_one_angle_table(tmp_path: Path) -> None:
    """The ropes of a compiled step at the same positions compute their cosines once
    (MLX's own CPU composition builds a table per call)."""
    freqs = mx.array((1e4 ** (np.arange(0, 32, 2) / 32)).astype(np.float32))
    q, k = mx.ones((1, 8, 1, 32)), mx.ones((1, 4, 1, 32))
    offset = mx.array([70], dtype=mx.int64)

    def cosines(rope: Callable[..., mx.array]) -> int:
        def step(q: mx.array, k: mx.array, offset: mx.array) -> tuple[mx.array, mx.array]:
            return tuple(  # type: ignore[return-value]
                rope(t, 32, traditional=False, base=None, scale=1.0, offset=offset, freqs=freqs)
                for t in (q, k)
            )

        outputs = mx.compile(step)(q, k, offset)
        mx.export_to_dot(str(tmp_path / "step.dot"), *outputs)
        return re.findall(r'label ="(\w+)"', (tmp_path / "step.dot").read_text()).count("Cos")

    with mx.stream(mx.cpu):
        assert cosines(kernels._cpu_rope) == 1
        assert cosines(mx.fast.rope) == 2


# --------------------------------------------------------------------------- creation


def test_full_zeros_ones() -> None:
    x = floats((3, 16))
    text = """func.func @forward(%x: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<4x4xi1>, tensor<?x16xf32>, tensor<i64>, tensor<2x3xbf16>, tensor<?x?xi1>, tensor<?x2xf16>) {
      %n = mlx.dim %x axis 0 : tensor<?x16xf32>
      %v = mlx.constant dense<-1.000000e+09> : tensor<f32>
      %full = mlx.full [%n, 16], %v : tensor<f32> -> tensor<?x16xf32>
      %t = mlx.constant dense<true> : tensor<i1>
      %mask = mlx.full [4, 4], %t : tensor<i1> -> tensor<4x4xi1>
      %z = mlx.zeros [%n, 16] : tensor<?x16xf32>
      %z0 = mlx.zeros [] : tensor<i64>
      %o = mlx.ones [2, 3] : tensor<2x3xbf16>
      %o1 = mlx.ones [%n, %n] : tensor<?x?xi1>
      %h = mlx.constant dense<2.500000e-01> : tensor<f16>
      %fh = mlx.full [%n, 2], %h : tensor<f16> -> tensor<?x2xf16>
      func.return %full, %mask, %z, %z0, %o, %o1, %fh : tensor<?x16xf32>, tensor<4x4xi1>, tensor<?x16xf32>, tensor<i64>, tensor<2x3xbf16>, tensor<?x?xi1>, tensor<?x2xf16>
    }"""
    full, mask, z, z0, o, o1, fh = run_ir(text, x)
    check_exact(full, np.full((3, 16), -1e9, np.float32), np.float32)
    check_exact(mask, np.ones((4, 4), bool), np.bool_)
    check_exact(z, np.zeros((3, 16), np.float32), np.float32)
    check_exact(z0, np.zeros((), np.int64), np.int64)
    check_exact(o, np.ones((2, 3), np.float32))  # bf16 comes back as float32, exactly
    check_exact(o1, np.ones((3, 3), bool), np.bool_)
    check_exact(fh, np.full((3, 2), 0.25, np.float16), np.float16)


def test_random_draws_are_mlx_generators() -> None:
    """`mlx.random_uniform`/`random_normal` draw from MLX's global generator: seeded,
    they give exactly `mx.random`'s own values; each run draws afresh."""
    import mlx.core as mx

    x = floats((3, 16))
    text = """func.func @forward(%x: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<4000xbf16>) {
      %n = mlx.dim %x axis 0 : tensor<?x16xf32>
      %u = mlx.random_uniform [%n, 16] : tensor<?x16xf32>
      %g = mlx.random_normal [4000] : tensor<4000xbf16>
      func.return %u, %g : tensor<?x16xf32>, tensor<4000xbf16>
    }"""
    mx.random.seed(7)
    u, g = run_ir(text, x)
    mx.random.seed(7)
    expected_u = mx.random.uniform(shape=(3, 16), dtype=mx.float32)
    expected_g = mx.random.normal(shape=(4000,), dtype=mx.bfloat16)
    check_exact(u, np.array(expected_u), np.float32)
    check_exact(g, np.array(expected_g.astype(mx.float32)))  # bf16 comes back as float32, exactly
    assert 0 <= np.asarray(u).min() and np.asarray(u).max() < 1
    assert abs(float(np.mean(g))) < 0.1 and abs(float(np.std(g)) - 1) < 0.1
    again, _ = run_ir(text, x)
    assert not np.array_equal(np.asarray(again), np.asarray(u))


def test_arange() -> None:
    x = floats((7, 16))
    text = """func.func @forward(%x: tensor<?x16xf32>) -> (tensor<?xi64>, tensor<4xi32>, tensor<4xi64>, tensor<?xi64>, tensor<0xf32>, tensor<?xf32>) {
      %n = mlx.dim %x axis -2 : tensor<?x16xf32>
      %c2 = arith.constant 2 : index
      %a = mlx.arange [0, %n, 1] : tensor<?xi64>
      %b = mlx.arange [0, 10, 3] : tensor<4xi32>
      %c = mlx.arange [10, 0, -3] : tensor<4xi64>
      %d = mlx.arange [%c2, %n, %c2] : tensor<?xi64>
      %e = mlx.arange [5, 5, 1] : tensor<0xf32>
      %f = mlx.arange [%n, -1, -2] : tensor<?xf32>
      func.return %a, %b, %c, %d, %e, %f : tensor<?xi64>, tensor<4xi32>, tensor<4xi64>, tensor<?xi64>, tensor<0xf32>, tensor<?xf32>
    }"""
    a, b, c, d, e, f = run_ir(text, x)
    check_exact(a, np.arange(7), np.int64)
    check_exact(b, np.arange(0, 10, 3), np.int32)
    check_exact(c, np.arange(10, 0, -3), np.int64)
    check_exact(d, np.arange(2, 7, 2), np.int64)
    check_exact(e, np.zeros(0, np.float32), np.float32)
    check_exact(f, np.arange(7, -1, -2).astype(np.float32), np.float32)


def test_tril_triu() -> None:
    x = floats((2, 4, 5))
    text = """func.func @forward(%x: tensor<2x?x5xf32>) -> (tensor<2x?x5xf32>, tensor<2x?x5xf32>, tensor<2x?x5xf32>) {
      %l = mlx.tril %x k 0 : tensor<2x?x5xf32> -> tensor<2x?x5xf32>
      %m = mlx.tril %x k -1 : tensor<2x?x5xf32> -> tensor<2x?x5xf32>
      %u = mlx.triu %x k 2 : tensor<2x?x5xf32> -> tensor<2x?x5xf32>
      func.return %l, %m, %u : tensor<2x?x5xf32>, tensor<2x?x5xf32>, tensor<2x?x5xf32>
    }"""
    lower, lower1, upper = run_ir(text, x)
    x32 = x.astype(np.float32)
    check_exact(lower, np.tril(x32, 0))
    check_exact(lower1, np.tril(x32, -1))
    check_exact(upper, np.triu(x32, 2))


def test_diagonal() -> None:
    x = floats((2, 4, 5))
    text = """func.func @forward(%x: tensor<2x?x5xf32>) -> (tensor<2x?xf32>, tensor<5x2xf32>, tensor<?x1xf32>) {
      %a = mlx.diagonal %x offset 0 axes 1, 2 : tensor<2x?x5xf32> -> tensor<2x?xf32>
      %b = mlx.diagonal %x offset -1 axes 1, 0 : tensor<2x?x5xf32> -> tensor<5x2xf32>
      %c = mlx.diagonal %x offset 4 axes 0, 2 : tensor<2x?x5xf32> -> tensor<?x1xf32>
      func.return %a, %b, %c : tensor<2x?xf32>, tensor<5x2xf32>, tensor<?x1xf32>
    }"""
    a, b, c = run_ir(text, x)
    x32 = x.astype(np.float32)
    check_exact(a, np.diagonal(x32, 0, 1, 2))
    check_exact(b, np.diagonal(x32, -1, 1, 0))
    check_exact(c, np.diagonal(x32, 4, 0, 2))


def test_constant() -> None:
    text = """func.func @forward() -> (tensor<2x3xf32>, tensor<2xbf16>, tensor<3xi1>, tensor<2x2xi8>, tensor<2xui8>, tensor<2xf16>, tensor<i64>) {
      %a = mlx.constant dense<[[1.0, -2.5, 3.0], [0.0, 1.0e+10, -0.0]]> : tensor<2x3xf32>
      %b = mlx.constant dense<[1.5, -3.140625]> : tensor<2xbf16>
      %c = mlx.constant dense<[true, false, true]> : tensor<3xi1>
      %d = mlx.constant dense<-3> : tensor<2x2xi8>
      %e = mlx.constant dense<[200, 3]> : tensor<2xui8>
      %f = mlx.constant dense<[6.550400e+04, 1.000000e-01]> : tensor<2xf16>
      %g = mlx.constant dense<-9223372036854775807> : tensor<i64>
      func.return %a, %b, %c, %d, %e, %f, %g : tensor<2x3xf32>, tensor<2xbf16>, tensor<3xi1>, tensor<2x2xi8>, tensor<2xui8>, tensor<2xf16>, tensor<i64>
    }"""
    a, b, c, d, e, f, g = run_ir(text)
    check_exact(a, np.array([[1.0, -2.5, 3.0], [0.0, 1e10, -0.0]], np.float32), np.float32)
    check_exact(b, [1.5, -3.140625])
    check_exact(c, [True, False, True], np.bool_)
    check_exact(d, np.full((2, 2), -3, np.int8), np.int8)
    check_exact(e, np.array([200, 3], np.uint8), np.uint8)
    check_exact(f, np.array([65504, 0.1], np.float16), np.float16)
    check_exact(g, np.array(-9223372036854775807, np.int64), np.int64)


def test_dim_from_index() -> None:
    x = floats((3, 4, 5))
    text = """func.func @forward(%x: tensor<?x4x?xf32>) -> (index, index, index, tensor<i64>, tensor<f32>, tensor<bf16>) {
      %a = mlx.dim %x axis 0 : tensor<?x4x?xf32>
      %b = mlx.dim %x axis 1 : tensor<?x4x?xf32>
      %c = mlx.dim %x axis -1 : tensor<?x4x?xf32>
      %ab = arith.muli %a, %b : index
      %n = arith.muli %ab, %c : index
      %i = mlx.from_index %n : tensor<i64>
      %f = mlx.from_index %n : tensor<f32>
      %h = mlx.from_index %c : tensor<bf16>
      func.return %a, %b, %c, %i, %f, %h : index, index, index, tensor<i64>, tensor<f32>, tensor<bf16>
    }"""
    a, b, c, i, f, h = run_ir(text, x)
    assert (a, b, c) == (3, 4, 5) and all(type(v) is int for v in (a, b, c))
    check_exact(i, np.array(60), np.int64)
    check_exact(f, np.array(60.0, np.float32), np.float32)
    check_exact(h, np.array(5.0, np.float32))


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


# --------------------------------------------------------------------------- runtime pieces


def test_weights_and_state() -> None:
    """mlx.weight reads payloads (or inline values); state is read, written in program
    order, and handed back to the caller; a KV-cache write at a runtime position."""
    text = """mlx.global @w "parameter" : tensor<4x3xbf16>
    mlx.global @bias "buffer" : tensor<3xf32> = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    mlx.global @cache "state" : tensor<1x6x3xf32>
    mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
    func.func @forward(%x: tensor<1x?x4xbf16>, %pos: index) -> (tensor<1x?x3xf32>, tensor<i64>, tensor<i64>) {
      %w = mlx.weight @w : tensor<4x3xbf16>
      %y = mlx.matmul %x, %w : tensor<1x?x4xbf16>, tensor<4x3xbf16> -> tensor<1x?x3xbf16>
      %y32 = mlx.astype %y : tensor<1x?x3xbf16> -> tensor<1x?x3xf32>
      %b = mlx.weight @bias : tensor<3xf32>
      %out = mlx.add %y32, %b : tensor<1x?x3xf32>, tensor<3xf32> -> tensor<1x?x3xf32>
      %cache = mlx.load_state @cache : tensor<1x6x3xf32>
      %new = mlx.slice_update %cache, %out start [%pos] axes [1] : tensor<1x6x3xf32>, tensor<1x?x3xf32> -> tensor<1x6x3xf32>
      mlx.store_state %new to @cache : tensor<1x6x3xf32>
      %s0 = mlx.load_state @step : tensor<i64>
      %one = mlx.constant dense<1> : tensor<i64>
      %next = mlx.add %s0, %one : tensor<i64>, tensor<i64> -> tensor<i64>
      mlx.store_state %next to @step : tensor<i64>
      %s1 = mlx.load_state @step : tensor<i64>
      func.return %out, %s0, %s1 : tensor<1x?x3xf32>, tensor<i64>, tensor<i64>
    }"""
    w = torch.randn(4, 3, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    program = Program(parse_module(text), {"w": w, "cache": np.zeros((1, 6, 3), np.float32)})
    state: dict[str, Any] = {}
    x = torch.randn(1, 2, 4, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    out, s0, s1 = program([x, 0], state)
    ref = (x.double() @ w.double()).to(torch.bfloat16).float() + torch.tensor([1.0, 2.0, 3.0])
    check(dtypes.to_numpy(out), ref.numpy(), TOL["bf16"])
    assert (s0.item(), s1.item()) == (0, 1)  # a load after a store sees the store
    out2, s0, s1 = program([x[:, :1], 2], state)
    assert (s0.item(), s1.item()) == (1, 2)
    cache = dtypes.to_numpy(state["cache"])
    check_exact(cache[:, :2], dtypes.to_numpy(out))
    check_exact(cache[:, 2:3], dtypes.to_numpy(out2))
    check_exact(cache[:, 3:], np.zeros((1, 3, 3), np.float32))


def test_python_props() -> None:
    text = """func.func @forward(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
      %s = mlx.slice %x [0, 1] to [%n, 4] step [1, 1] : tensor<?x4xf32> -> tensor<?x3xf32>
      %p = mlx.pad %x low [0, 0] high [1, 0] value 2.500000e-01 : tensor<?x4xf32> -> tensor<?x4xf32>
      %m = mlx.max %x axes [1] keepdims : tensor<?x4xf32> -> tensor<?x1xf32>
      %c = mlx.constant dense<[[1, 2]]> : tensor<1x2xi32>
      %t = arith.constant true
      %sc = mlx.scatter %x[%c] axes [0], %x reduce "add" : tensor<?x4xf32>, (tensor<1x2xi32>), tensor<?x4xf32> -> tensor<?x4xf32>
      func.return %x : tensor<?x4xf32>
    }"""
    ops = {op.name: op for op in parse_module_unverified(text).walk()}
    sl = python_props(ops["mlx.slice"])
    assert sl["static_start"] == (0, 1) and sl["strides"] == (1, 1)
    assert sl["static_stop"] == (DYNAMIC, 4) and sl["operandSegmentSizes"] == (1, 0, 1)
    assert python_props(ops["mlx.pad"])["value"] == 0.25
    assert python_props(ops["mlx.max"]) == {"axes": (1,), "keepdims": True}
    value = python_props(ops["mlx.constant"])["value"]
    assert isinstance(value, np.ndarray) and value.dtype == np.int32 and value.shape == (1, 2)
    assert python_props(ops["arith.constant"])["value"] is True
    assert python_props(ops["mlx.scatter"])["reduce"] == "add"
    assert python_value(SymbolRefAttr("cache.k")) == "cache.k"
    assert python_value(UnitAttr()) is True
    assert python_value(IntegerAttr(-3, i64)) == -3
    assert python_value(FloatAttr(1.5, f64)) == 1.5
    assert python_value(StringAttr("x")) == "x"
    assert python_value(DenseArrayBase.from_list(i32, [4, 5])) == (4, 5)
    splat = python_value(DenseIntOrFPElementsAttr.from_list(TensorType(bf16, [2, 2]), [1.5]))
    assert isinstance(splat, np.ndarray) and splat.shape == (2, 2) and (splat == 1.5).all()
    boolean = python_value(DenseIntOrFPElementsAttr.from_list(TensorType(i1, [2]), [1, 0]))
    assert isinstance(boolean, np.ndarray) and boolean.tolist() == [True, False]
    other = ArrayAttr([StringAttr("a")])
    assert python_value(other) is other  # unknown kinds pass through


def parse_module_unverified(text: str) -> Any:
    from xdsl.parser import Parser

    from mlxir.context import make_context

    return Parser(make_context(), text).parse_module()


def test_dtypes_round_trip() -> None:
    for name in dtypes.DTYPE_NAMES:
        element_type = dtypes.element_type_from_name(name)
        assert dtypes.element_type_name(element_type) == name
        assert dtypes.mx_dtype_name(dtypes.element_type_to_mx(element_type)) == name
        assert dtypes.mx_to_element_type(dtypes.mx_dtype(name)) == element_type
    assert dtypes.element_type_name(f32) == "float32"
    bits = torch.tensor([0x7F80, 0xFF80, 0x7FC1, 0x0001, 0x3F80, 0x8000], dtype=torch.int32)
    special = bits.to(torch.int16).view(torch.bfloat16)  # inf, -inf, a NaN payload, subnormal
    back = dtypes.to_torch(dtypes.to_mx(special))
    assert torch.equal(back.view(torch.int16), special.view(torch.int16))
    as_numpy = dtypes.to_numpy(dtypes.to_mx(special))
    assert as_numpy.dtype == np.float32
    assert np.array_equal(as_numpy.view(np.uint32) >> 16, bits.numpy().astype(np.uint32))
    assert dtypes.to_mx(np.array([0.1], np.float64)).dtype == mx.float64  # not narrowed
    assert dtypes.to_mx(np.float32(0.1), mx.bfloat16).dtype == mx.bfloat16
    for name in ("float16", "int8", "uint8", "int64", "bool", "float64"):
        t = torch.ones(3, dtype=dtypes.torch_dtype(name))
        assert dtypes.mx_dtype_name(dtypes.to_mx(t).dtype) == name
        assert dtypes.to_torch(dtypes.to_mx(t)).dtype == t.dtype


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


def test_output_blocks_fit_the_small_kernels() -> None:
    """The weight's rows cut into the fewest near-equal blocks of at most
    `CPU_SMALL_PRODUCT_OUTPUTS` outputs and `CPU_SMALL_PRODUCT_MACS` multiply-adds."""
    blocks = kernels._output_blocks(1, 32000, 512)
    assert len(blocks) == 27 and blocks[0].start == 0 and blocks[-1].stop == 32000
    assert all(a.stop == b.start for a, b in zip(blocks, blocks[1:]))
    assert max(b.stop - b.start for b in blocks) <= 1200
    assert kernels._output_blocks(1, 1408, 512) == [slice(0, 704), slice(704, 1408)]
    assert kernels._output_blocks(1, 512, 512) == [slice(0, 512)]
    for rows, columns, depth in ((4, 16384, 512), (2, 1024, 2048), (7, 300, 4096)):
        sizes = [b.stop - b.start for b in kernels._output_blocks(rows, columns, depth)]
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
    blocked = kernels.weight_blocked_product(op, whole)
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
        blocks = kernels._output_blocks(rows, 4000, 512)
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
    for rows, streams in ((1, 1), (4, 2)):
        calls.clear()
        blocked(operands(mx.random.normal((rows, 256)), small.T, bias[:1408]))
        assert len(calls) == len(kernels._output_blocks(rows, 1408, 256)) > 1
        assert len(set(calls)) == streams, calls
    for x, weight in (
        (mx.random.normal((1, 512)).astype(mx.float16), w.T.astype(mx.float16)),
        (mx.random.normal((8, 512)), w.T),
        (mx.random.normal((1, 16)), mx.random.normal((4000, 16)).T),
    ):
        calls.clear()
        blocked(operands(x, weight, bias.astype(x.dtype)))
        assert len(calls) == 1
