"""`cpu-polynomial-exp`: `exp`, `sigmoid`, `erf` and `softmax` on MLX's CPU computed
from a polynomial of arithmetic ops, as vector math libraries compute `exp`.

MLX's CPU `exp` costs about 14 ns per float32 element on this machine and its
`sigmoid` about 19, where a multiply costs 0.3 (one thread, 2^20 elements, median of
10; NumPy's `exp` takes 2.3 ns): in an LLM's prefill the SiLU of the MLP and the
softmax of attention cost more than its products. The same `exp` written as
`2^n * p(r)`, `n = round(x / ln 2)`, `r = x - n ln 2` (in two parts, Cody and Waite),
`p` a degree-7 polynomial (Cephes' `expf`), `2^n` built from its exponent bits, is
~20 arithmetic ops that MLX's CPU runs at memory speed: 7.4 ms against 15 per 2^20
elements, 4.2 within one `mx.compile`d function; SiLU over 1.4M values 13 ms against
28 (8 against 27 compiled). It keeps MLX's meaning: within 2 ulp of
the exact value over float32's range (`tests/test_cpu_target.py` checks every
exponent), `exp(-inf) = 0`, `exp(inf) = inf`, results past float32's range inf, and
under 1.7e-38 zero (`_UNDERFLOW`), NaN stays NaN; float16 and bfloat16 go through float32, as MLX's CPU kernels do.
Softmax becomes `e / sum(e)` with `e = exp(x - max(x))`, the composition MLX's own
kernel computes. `erf` (34 ns per element in MLX, a GELU's cost) is its Taylor series
near 0 and `1 - erfc` beyond, `erfc` from the polynomial `exp`: within 2e-7 of the
exact value."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    LocationAttr,
    ModuleOp,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, shape_of
from mlxir.transforms.canonicalization.mlx import scalar_dense

_LOG2E = 1.4426950408889634
_LN2_HIGH = 0.693359375  # ln 2 in two parts: n * high is exact for |n| < 2^9
_LN2_LOW = -2.12194440e-4
_EXP_POLYNOMIAL = (
    1.9875691500e-4,
    1.3981999507e-3,
    8.3334519073e-3,
    4.1665795894e-2,
    1.6666665459e-1,
    5.0000001201e-1,
)
"""Cephes' `expf` coefficients, highest degree first: `e^r = 1 + r + r^2 p(r)`."""
_OVERFLOW = 88.72283935546875
"""Above: `exp` is inf in float32."""
_UNDERFLOW = -86.98
"""Below: 0. `2^n` is built as `2 * 2^(n - 1)` from exponent bits, which hold
`n - 1 >= -126` only (`x >= -125.5 ln 2 = -86.9896`): results under `exp(-86.98)`
(1.7e-38, among float32's smallest normal numbers) are flushed to zero."""

_THROUGH_FLOAT32 = (Float16Type, BFloat16Type)


class _Builder:
    """Inserts ops before the op being rewritten, at its location."""

    def __init__(self, rewriter: PatternRewriter, location: LocationAttr, shape: tuple[int, ...]) -> None:
        self.rewriter = rewriter
        self.location = location
        self.shape = shape

    def add(self, op: Operation) -> SSAValue:
        op.location = self.location
        self.rewriter.insert(op)
        return op.results[0]

    def tensor(self, element: Attribute) -> TensorType[Attribute]:
        return TensorType(element, self.shape)

    def constant(self, value: float, element: Attribute | None = None) -> SSAValue:
        return self.add(mlx.ConstantOp(scalar_dense(element or Float32Type(), value)))

    def binary(self, name: str, lhs: SSAValue, rhs: SSAValue | float) -> SSAValue:
        if not isinstance(rhs, SSAValue):
            rhs = self.constant(rhs, dtype_of(lhs))
        element = i1 if name in ("greater", "less") else dtype_of(lhs)
        return self.add(mlx.BINARY_OP_CLASSES[name](lhs, rhs, self.tensor(element)))

    def unary(self, name: str, x: SSAValue) -> SSAValue:
        return self.add(cast(type[mlx.UnaryOp], mlx.UNARY_OP_CLASSES[name])(x, self.tensor(dtype_of(x))))

    def astype(self, x: SSAValue, element: Attribute) -> SSAValue:
        return x if dtype_of(x) == element else self.add(mlx.AstypeOp(x, self.tensor(element)))

    def where(self, condition: SSAValue, x: SSAValue | float, y: SSAValue) -> SSAValue:
        if not isinstance(x, SSAValue):
            x = self.constant(x, dtype_of(y))
        return self.add(mlx.WhereOp(condition, x, y, self.tensor(dtype_of(y))))

    def horner(self, coefficients: Sequence[float], t: SSAValue) -> SSAValue:
        """The polynomial with `coefficients` (highest degree first) at `t`."""
        p = self.constant(coefficients[0])
        for coefficient in coefficients[1:]:
            p = self.binary("add", self.binary("multiply", p, t), coefficient)
        return p

    def exp(self, x: SSAValue) -> SSAValue:
        """`exp(x)` of a float32 `x`, as the module docstring says."""
        clamped = self.binary("minimum", self.binary("maximum", x, _UNDERFLOW), _OVERFLOW)
        n = self.unary("floor", self.binary("add", self.binary("multiply", clamped, _LOG2E), 0.5))
        r = self.binary("subtract", clamped, self.binary("multiply", n, _LN2_HIGH))
        r = self.binary("subtract", r, self.binary("multiply", n, _LN2_LOW))
        p = self.horner(_EXP_POLYNOMIAL, r)
        e = self.binary("add", self.binary("add", self.binary("multiply", self.binary("multiply", r, r), p), r), 1.0)
        int32 = IntegerType(32)
        # 2^(n - 1), then times 2: at the top of the range n is 128, past the exponent field.
        exponent = self.binary("add", self.astype(n, int32), 126)
        half_power = self.add(mlx.ViewOp(self.binary("left_shift", exponent, 23), self.tensor(Float32Type())))
        result = self.binary("multiply", self.binary("multiply", e, half_power), 2.0)
        result = self.where(self.binary("less", x, _UNDERFLOW), 0.0, result)
        # NaN compares false with both bounds: it stays the polynomial's NaN.
        return self.where(self.binary("greater", x, _OVERFLOW), float("inf"), result)


POLYNOMIAL_MIN_ELEMENTS = 16384
"""The polynomial replaces MLX's kernel only where the sizes known at compile time
(dynamic ones count as 1) hold at least this many elements. Op by op, each of its
~20 ops pays MLX's per-op cost: SiLU over `[1, n]`, one thread, on an idle machine
(load average 0.6), the median over 5 processes of each one's median of 50, MLX's
kernel against the polynomial (op by op; within one `mx.compile`d function):
n = 1408: 74 against 424 us (70 against 93); 4096: 137 against 440 (127 against 93);
16384: 420 against 404 (454 against 212); 65536: 2058 against 1168 (1992 against 698).
Single runs spread widely (the polynomial op by op at 1408: 218 to 695 us).
An LLM's step program, whose batch and length are dynamic, keeps MLX's kernels: its
decode steps are small."""


def _float_operand(op: Operation) -> bool:
    element = dtype_of(op.operands[0])
    if not isinstance(element, Float32Type | Float16Type | BFloat16Type):
        return False
    known = math.prod(size for size in shape_of(op.operands[0]) if size != DYNAMIC_INDEX)
    return known >= POLYNOMIAL_MIN_ELEMENTS


_ERFC_POLYNOMIAL = (
    0.17087277,
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
    -1.26551223,
)
"""Numerical Recipes' `erfcc`, highest degree first: `erfc(z) = t exp(-z^2 + P(t))`,
`t = 1 / (1 + z / 2)`, fractional error under 1.2e-7 for every `z >= 0`."""

_ERF_SERIES = tuple((-1) ** k / (math.factorial(k) * (2 * k + 1)) * 2 / math.sqrt(math.pi) for k in range(7))
"""`erf(x) = 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1))`, lowest degree first: below
`_ERF_SERIES_BOUND` its first 7 terms are within float32's rounding (the next is
under 1e-9 there), where `1 - erfc` would lose digits to cancellation."""

_ERF_SERIES_BOUND = 0.5


def _exp(build: _Builder, op: Operation, x: SSAValue) -> SSAValue:
    """`2^n * p(r)`."""
    return build.exp(x)


def _sigmoid(build: _Builder, op: Operation, x: SSAValue) -> SSAValue:
    """`1 / (1 + exp(-x))`."""
    negative = build.unary("negative", x)
    one = build.constant(1.0)
    return build.binary("divide", one, build.binary("add", build.exp(negative), one))


def _erf(build: _Builder, op: Operation, x: SSAValue) -> SSAValue:
    """The series below |x| = 1/2, `sign(x) (1 - erfc(|x|))` above."""
    square = build.binary("multiply", x, x)
    series = build.binary("multiply", build.horner(_ERF_SERIES[::-1], square), x)
    z = build.unary("abs", x)
    one = build.constant(1.0)
    t = build.binary("divide", one, build.binary("add", build.binary("multiply", z, 0.5), one))
    p = build.horner(_ERFC_POLYNOMIAL, t)
    erfc = build.binary("multiply", t, build.exp(build.binary("subtract", p, square)))
    tail = build.binary("subtract", one, erfc)
    tail = build.where(build.binary("less", x, 0.0), build.unary("negative", tail), tail)
    return build.where(build.binary("less", z, _ERF_SERIES_BOUND), series, tail)


def _softmax(build: _Builder, op: Operation, x: SSAValue) -> SSAValue:
    """`e / sum(e, axes)`, `e = exp(x - max(x, axes))`; low precision in float32
    (`precise` or not: more exact, never less)."""
    assert isinstance(op, mlx.SoftmaxOp)
    shape = build.shape
    axes = list(ints(op.axes))
    reduced_axes = [axis % len(shape) for axis in axes]
    reduced = TensorType(Float32Type(), [1 if a in reduced_axes else size for a, size in enumerate(shape)])
    largest = build.add(mlx.REDUCTION_OP_CLASSES["max"](x, axes, True, reduced))
    e = build.exp(build.binary("subtract", x, largest))
    total = build.add(mlx.REDUCTION_OP_CLASSES["sum"](e, axes, True, reduced))
    return build.binary("divide", e, total)


_FORMULAS: dict[str, Callable[[_Builder, Operation, SSAValue], SSAValue]] = {
    "mlx.exp": _exp,
    "mlx.sigmoid": _sigmoid,
    "mlx.erf": _erf,
    "mlx.softmax": _softmax,
}
"""Op → its float32 formula from the polynomial `exp` (`x`: the operand in float32)."""


class PolynomialTranscendental(RewritePattern):
    """An op of `_FORMULAS` on enough float values (`_float_operand`) → its formula on
    the float32 operand, cast back to the operand's type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        formula = _FORMULAS.get(op.name)
        if formula is None or not _float_operand(op):
            return
        build = _Builder(rewriter, op.location, shape_of(op.results[0]))
        source = op.operands[0]
        result = formula(build, op, build.astype(source, Float32Type()))
        rewriter.replace(op, [], [build.astype(result, dtype_of(source))])


@dataclass(frozen=True)
class CpuPolynomialExpPass(ModulePass):
    """`exp`, `sigmoid`, `erf` and `softmax` from the polynomial `exp`."""

    name = "cpu-polynomial-exp"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PolynomialTranscendental(), apply_recursively=False).rewrite_module(op)
