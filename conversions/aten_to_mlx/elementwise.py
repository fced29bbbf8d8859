"""Lowerings of the elementwise ops: the unary and binary tables, gelu, where, clamp
and dtype casts. ATen's implicit type promotion becomes explicit `mlx.astype`s."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import AnyFloat, Float32Type, FloatAttr, IntegerType, StringAttr, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    AtenLowering,
    Emitter,
    promoted_dtype,
    to_bool,
    with_dtype,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import DYNAMIC, dtype_of, is_bool, is_float, shape_of
from mlxir.dialects.elementwise import BINARY, UNARY, direct_lowerings

UNARY_LOWERINGS: dict[str, str] = direct_lowerings(UNARY)
"""aten unary op → the MLX op computing it in the result's dtype (`dialects/elementwise.py`)."""

BINARY_LOWERINGS: dict[str, str] = direct_lowerings(BINARY)
"""aten binary op → MLX op; operands are first cast to the compute dtype."""


class LowerUnary(AtenLowering):
    OPS = (aten.UnaryElementwiseOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.UnaryElementwiseOp, rewriter: PatternRewriter) -> None:
        name = op.name.removeprefix("aten.")
        result_type = op.result.type
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            x = op.input
            match name:
                case "clone":
                    return x
                case "relu":
                    return e.binary("maximum", x, e.constant(0, dtype))
                case "silu":
                    return e.binary("multiply", x, e.unary("sigmoid", x))
                case "trunc":
                    if not is_float(dtype):
                        return x
                    negative = e.binary("less", x, e.constant(0, dtype))
                    return e.where(negative, e.unary("ceil", x), e.unary("floor", x))
                case "logical_not":
                    as_bool = to_bool(e, x)
                    return e.unary("logical_not", as_bool)
                case "bitwise_not":
                    if is_bool(dtype):
                        return e.unary("logical_not", x)
                    return e.unary("bitwise_invert", x)
                case "isnan" | "isinf":
                    if not is_float(dtype_of(x)):
                        return e.binary("not_equal", x, x)  # never true for integers
                    return e.unary(name, x, result_type)
                case "signbit":
                    return _signbit(e, x)
                case "erfc":  # within float32's absolute error where erfc(x) is tiny
                    one = e.constant(1, dtype)
                    return e.binary("subtract", one, e.unary("erf", e.astype(x, dtype)))
                case "exp2":  # MLX's power is the C library's: exact at integer exponents
                    return e.binary("power", e.constant(2, dtype), e.astype(x, dtype))
                case "lgamma":
                    return _lgamma(e, x, dtype)
                case "digamma":
                    return _digamma(e, x, dtype)
                case _:
                    return e.unary(UNARY_LOWERINGS[name], e.astype(x, dtype), result_type)

        self.replace(op, rewriter, build)


class LowerBinary(AtenLowering):
    OPS = (aten.BinaryElementwiseOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.BinaryElementwiseOp, rewriter: PatternRewriter) -> None:
        name = op.name.removeprefix("aten.")
        dtype = dtype_of(op.result)
        compute = (
            promoted_dtype([op.input, op.other])
            if aten.BINARY_OPS[name] is aten.DtypeRule.BOOL
            else dtype
        )

        def build(e: Emitter) -> SSAValue:
            lhs = e.as_tensor(op.input, compute)
            rhs = e.as_tensor(op.other, compute)
            match name:
                case "add" | "sub":
                    alpha = op.properties.get("alpha")
                    if isinstance(alpha, FloatAttr) and alpha.value.data != 1.0:
                        rhs = e.binary("multiply", rhs, e.constant(alpha.value.data, compute))
                    return e.binary(BINARY_LOWERINGS[name], lhs, rhs)
                case "div":
                    return _lower_div(e, op, lhs, rhs, compute)
                case "fmod":
                    quotient = _trunc_divide(e, lhs, rhs, compute)
                    return e.binary("subtract", lhs, e.binary("multiply", quotient, rhs))
                case "logical_and" | "logical_or":
                    return e.binary(name, to_bool(e, lhs), to_bool(e, rhs))
                case "logical_xor":
                    return e.binary("not_equal", to_bool(e, lhs), to_bool(e, rhs))
                case "hypot":
                    return _hypot(e, lhs, rhs)
                case "copysign":
                    magnitude = e.unary("abs", lhs)
                    return e.where(_signbit(e, rhs), e.unary("negative", magnitude), magnitude)
                case "fmax" | "fmin":  # NaN only where both are: the other operand wins
                    extreme = e.binary(f"{name[1:]}imum", lhs, rhs)
                    if not is_float(compute):
                        return extreme
                    return e.where(e.unary("isnan", lhs, _bool_like(lhs)), rhs,
                                   e.where(e.unary("isnan", rhs, _bool_like(rhs)), lhs, extreme))
                case _:
                    return e.binary(BINARY_LOWERINGS[name], lhs, rhs)

        self.replace(op, rewriter, build)


def _bool_like(value: SSAValue) -> Attribute:
    return with_dtype(value.type, i1)


def _hypot(e: Emitter, x: SSAValue, y: SSAValue) -> SSAValue:
    """sqrt(x^2 + y^2) without the squares' overflow or underflow (1e30 and 1e-30 in
    float32): the larger magnitude times sqrt(1 + r^2), r the ratio of the smaller to
    it; 0 where both are 0, and inf where either is inf (NaN or not), as C's hypot."""
    a, b = e.unary("abs", x), e.unary("abs", y)
    larger, smaller = e.binary("maximum", a, b), e.binary("minimum", a, b)
    zero = e.constant(0, dtype_of(larger))
    ratio = e.binary("divide", smaller, e.where(e.binary("equal", larger, zero), e.constant(1, dtype_of(larger)), larger))
    scaled = e.binary("multiply", larger, e.unary("sqrt", e.binary("add", e.constant(1, dtype_of(ratio)), e.binary("multiply", ratio, ratio))))
    infinite = e.binary("logical_or", e.unary("isinf", a, _bool_like(a)), e.unary("isinf", b, _bool_like(b)))
    return e.where(infinite, e.constant(math.inf, dtype_of(scaled)), scaled)


def _signbit(e: Emitter, x: SSAValue) -> SSAValue:
    """Whether `x`'s sign bit is set, read as the sign of the signed integer of the same
    bits (-0.0 and NaNs have one too: torch's float-to-bfloat16 conversion makes
    negative NaNs)."""
    dtype = dtype_of(x)
    if is_bool(dtype):
        return e.binary("not_equal", x, x)
    if is_float(dtype):
        assert isinstance(dtype, AnyFloat)
        bits = IntegerType(dtype.bitwidth)
        x = e.emit(mlx.ViewOp(x, with_dtype(x.type, bits)))
        dtype = bits
    return e.binary("less", x, e.constant(0, dtype))


LANCZOS_G = 7.0
LANCZOS_COEFFICIENTS = (
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
)
"""The Lanczos approximation of Γ with g = 7 and 9 terms (relative error about 1e-15
in float64); in float32 `lgamma` is within about 1e-6 absolute near its zeros (1
and 2) and 1e-7 relative elsewhere."""


def _lgamma(e: Emitter, x: SSAValue, dtype: Attribute) -> SSAValue:
    """log |Γ(x)|, computed in float32 (and rounded to `dtype`): the Lanczos series for
    x ≥ 0.5, the reflection log(π / |sin(πx)|) - lgamma(1 - x) below, and +inf at
    the poles (0, -1, -2, ...), as ATen."""
    f32 = Float32Type()
    x = e.astype(x, f32)

    def c(value: float) -> SSAValue:
        return e.constant(value, f32)

    small = e.binary("less", x, c(0.5))
    z = e.where(small, e.binary("subtract", c(1.0), x), x)  # z >= 0.5 on both branches
    shifted = e.binary("subtract", z, c(1.0))
    series = c(LANCZOS_COEFFICIENTS[0])
    for i, coefficient in enumerate(LANCZOS_COEFFICIENTS[1:], start=1):
        series = e.binary("add", series, e.binary("divide", c(coefficient), e.binary("add", shifted, c(float(i)))))
    t = e.binary("add", shifted, c(LANCZOS_G + 0.5))
    log_gamma = e.binary(
        "add",
        e.binary(
            "subtract",
            e.binary("multiply", e.binary("add", shifted, c(0.5)), e.unary("log", t)),
            t,
        ),
        e.binary("add", c(0.5 * math.log(2 * math.pi)), e.unary("log", series)),
    )
    sine = e.unary("abs", e.unary("sin", e.binary("multiply", c(math.pi), x)))
    reflected = e.binary(
        "subtract", e.binary("subtract", c(math.log(math.pi)), e.unary("log", sine)), log_gamma
    )
    pole = e.binary("logical_and", e.binary("less_equal", x, c(0.0)), e.binary("equal", e.unary("floor", x), x))
    result = e.where(pole, c(math.inf), e.where(small, reflected, log_gamma))
    return e.astype(result, dtype)


DIGAMMA_SHIFT = 6
DIGAMMA_ASYMPTOTIC = (-1 / 12, 1 / 120, -1 / 252, 1 / 240, -1 / 132)
"""ψ(z) ~ log z - 1/(2z) + Σ c_k z^(-2k) for z ≥ 6.5 (about 1e-11 there): the
coefficients are -B_2k / 2k."""


def _digamma(e: Emitter, x: SSAValue, dtype: Attribute) -> SSAValue:
    """ψ(x) in float32 (rounded to `dtype`): reflection ψ(x) = ψ(1 - x) - π / tan(πx)
    below 0.5, the recurrence ψ(y) = ψ(y + 6) - Σ_{k<6} 1 / (y + k), and the asymptotic
    series at y + 6; -inf at 0 and NaN at the negative integers, as ATen."""
    f32 = Float32Type()
    x = e.astype(x, f32)

    def c(value: float) -> SSAValue:
        return e.constant(value, f32)

    small = e.binary("less", x, c(0.5))
    y = e.where(small, e.binary("subtract", c(1.0), x), x)
    shifted = e.binary("add", y, c(float(DIGAMMA_SHIFT)))
    inverse_square = e.unary("reciprocal", e.binary("multiply", shifted, shifted))
    series = c(DIGAMMA_ASYMPTOTIC[-1])
    for coefficient in reversed(DIGAMMA_ASYMPTOTIC[:-1]):
        series = e.binary("add", c(coefficient), e.binary("multiply", inverse_square, series))
    value = e.binary(
        "add",
        e.binary("subtract", e.unary("log", shifted), e.binary("divide", c(0.5), shifted)),
        e.binary("multiply", inverse_square, series),
    )
    for k in range(DIGAMMA_SHIFT):
        value = e.binary("subtract", value, e.unary("reciprocal", e.binary("add", y, c(float(k)))))
    cotangent_term = e.binary("divide", c(math.pi), e.unary("tan", e.binary("multiply", c(math.pi), x)))
    result = e.where(small, e.binary("subtract", value, cotangent_term), value)
    integer = e.binary("equal", e.unary("floor", x), x)
    result = e.where(e.binary("logical_and", integer, e.binary("less", x, c(0.0))), c(math.nan), result)
    result = e.where(e.binary("equal", x, c(0.0)), c(-math.inf), result)
    return e.astype(result, dtype)


def _trunc_divide(e: Emitter, lhs: SSAValue, rhs: SSAValue, dtype: Attribute) -> SSAValue:
    """`a / b` rounded toward zero (C semantics), exact for integers."""
    if is_float(dtype):
        quotient = e.binary("divide", lhs, rhs)
        negative = e.binary("less", quotient, e.constant(0, dtype))
        return e.where(negative, e.unary("ceil", quotient), e.unary("floor", quotient))
    floor = e.binary("floor_divide", lhs, rhs)
    remainder = e.binary("remainder", lhs, rhs)
    inexact = e.binary("not_equal", remainder, e.constant(0, dtype))
    signs_differ = e.binary(
        "not_equal",
        e.binary("less", lhs, e.constant(0, dtype)),
        e.binary("less", rhs, e.constant(0, dtype)),
    )
    adjust = e.binary("logical_and", inexact, signs_differ)
    return e.where(adjust, e.binary("add", floor, e.constant(1, dtype)), floor)


def _lower_div(e: Emitter, op: Operation, lhs: SSAValue, rhs: SSAValue, dtype: Attribute) -> SSAValue:
    mode = op.properties.get("rounding_mode")
    if mode is None:
        return e.binary("divide", lhs, rhs)
    assert isinstance(mode, StringAttr)
    if mode.data == "floor":
        if is_float(dtype):
            return e.unary("floor", e.binary("divide", lhs, rhs))
        return e.binary("floor_divide", lhs, rhs)
    return _trunc_divide(e, lhs, rhs, dtype)


@dataclass
class LowerGelu(AtenLowering):
    OPS = (aten.GeluOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.GeluOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        tanh = op.approximate is not None and op.approximate.data == "tanh"

        def build(e: Emitter) -> SSAValue:
            x = op.input
            half_x = e.binary("multiply", x, e.constant(0.5, dtype))
            if tanh:
                cube = e.binary("multiply", e.unary("square", x), x)
                inner = e.binary("add", x, e.binary("multiply", cube, e.constant(0.044715, dtype)))
                scaled = e.binary("multiply", inner, e.constant(math.sqrt(2 / math.pi), dtype))
                core = e.unary("tanh", scaled)
            else:
                core = e.unary("erf", e.binary("multiply", x, e.constant(1 / math.sqrt(2), dtype)))
            return e.binary("multiply", half_x, e.binary("add", core, e.constant(1, dtype)))

        self.replace(op, rewriter, build)


class LowerWhere(AtenLowering):
    OPS = (aten.WhereOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.WhereOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        self.replace(
            op,
            rewriter,
            lambda e: e.where(
                to_bool(e, op.condition), e.as_tensor(op.input, dtype), e.as_tensor(op.other, dtype)
            ),
        )


class LowerClamp(AtenLowering):
    OPS = (aten.ClampOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ClampOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            if op.min is not None:
                x = e.binary("maximum", x, e.as_tensor(op.min, dtype))
            if op.max is not None:
                x = e.binary("minimum", x, e.as_tensor(op.max, dtype))
            return e.broadcast_to(x, [*shape_of(op.result)]) if DYNAMIC not in shape_of(op.result) else x

        self.replace(op, rewriter, build)


class LowerToCopy(AtenLowering):
    OPS = (aten.ToCopyOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ToCopyOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: e.astype(op.input, dtype_of(op.result)))


PATTERNS: tuple[AtenLowering, ...] = (
    LowerUnary(),
    LowerBinary(),
    LowerGelu(),
    LowerWhere(),
    LowerClamp(),
    LowerToCopy(),
)
