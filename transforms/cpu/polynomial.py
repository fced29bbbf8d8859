"""`exp`, `sigmoid` and `erf` as polynomials of arithmetic ops, written once over
`Arithmetic` (any value type): the CPU backend evaluates them on `mx.array`s at run
time (`runtime/cpu/polynomial.py`) and the `cpu-polynomial-exp` pass writes them into a
program (`transforms/polynomial_exp.py`).

It lives with the CPU target because only CPU code reads it; it imports no compiler
(nor does this package's `__init__`), so the runtime's CPU backend imports it without
loading xDSL.

`exp(x) = 2^n * p(r)`, `n = round(x / ln 2)`, `r = x - n ln 2` (in two parts, Cody and
Waite), `p` a degree-7 polynomial (Cephes' `expf`), `2^n` built from its exponent bits:
within 2 ulp of the exact value over float32's range, `exp(-inf) = 0`, `exp(inf) =
inf`, results past float32's range inf, under 1.7e-38 zero (`_UNDERFLOW`), NaN kept.
`sigmoid` is `1 / (1 + exp(-x))`; `erf` the Taylor series near 0 and `1 - erfc`
beyond, `erfc` from the polynomial `exp`: within 2e-7 of the exact value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

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

Value = TypeVar("Value")


class Arithmetic(Protocol[Value]):
    """The float32 ops the formulas are written in. A `float` operand is a scalar
    constant of the other operand's type; `greater` and `less` give booleans."""

    def binary(self, name: str, lhs: Value | float, rhs: Value | float) -> Value: ...

    def unary(self, name: str, x: Value) -> Value: ...

    def where(self, condition: Value, x: Value | float, y: Value) -> Value: ...

    def power_of_two(self, n: Value) -> Value:
        """`2^(n - 1)` of an integral float32 `n` with `-125 <= n - 1 <= 127`, from
        exponent bits (`(n + 126) << 23` read as a float32)."""
        ...


def horner(ops: Arithmetic[Value], coefficients: Sequence[float], t: Value) -> Value:
    """The polynomial with `coefficients` (highest degree first) at `t`."""
    p = ops.binary("add", ops.binary("multiply", t, coefficients[0]), coefficients[1])
    for coefficient in coefficients[2:]:
        p = ops.binary("add", ops.binary("multiply", p, t), coefficient)
    return p


def exp(ops: Arithmetic[Value], x: Value) -> Value:
    """`2^n * p(r)`, as the module docstring says."""
    clamped = ops.binary("minimum", ops.binary("maximum", x, _UNDERFLOW), _OVERFLOW)
    n = ops.unary("floor", ops.binary("add", ops.binary("multiply", clamped, _LOG2E), 0.5))
    r = ops.binary("subtract", clamped, ops.binary("multiply", n, _LN2_HIGH))
    r = ops.binary("subtract", r, ops.binary("multiply", n, _LN2_LOW))
    p = horner(ops, _EXP_POLYNOMIAL, r)
    e = ops.binary("add", ops.binary("add", ops.binary("multiply", ops.binary("multiply", r, r), p), r), 1.0)
    # 2^(n - 1), then times 2: at the top of the range n is 128, past the exponent field.
    result = ops.binary("multiply", ops.binary("multiply", e, ops.power_of_two(n)), 2.0)
    result = ops.where(ops.binary("less", x, _UNDERFLOW), 0.0, result)
    # NaN compares false with both bounds: it stays the polynomial's NaN.
    return ops.where(ops.binary("greater", x, _OVERFLOW), float("inf"), result)


def sigmoid(ops: Arithmetic[Value], x: Value) -> Value:
    """`1 / (1 + exp(-x))`."""
    return ops.binary("divide", 1.0, ops.binary("add", exp(ops, ops.unary("negative", x)), 1.0))


def erf(ops: Arithmetic[Value], x: Value) -> Value:
    """The series below |x| = 1/2, `sign(x) (1 - erfc(|x|))` above."""
    square = ops.binary("multiply", x, x)
    series = ops.binary("multiply", horner(ops, _ERF_SERIES[::-1], square), x)
    z = ops.unary("abs", x)
    t = ops.binary("divide", 1.0, ops.binary("add", ops.binary("multiply", z, 0.5), 1.0))
    p = horner(ops, _ERFC_POLYNOMIAL, t)
    erfc = ops.binary("multiply", t, exp(ops, ops.binary("subtract", p, square)))
    tail = ops.binary("subtract", 1.0, erfc)
    tail = ops.where(ops.binary("less", x, 0.0), ops.unary("negative", tail), tail)
    return ops.where(ops.binary("less", z, _ERF_SERIES_BOUND), series, tail)


FORMULAS: dict[str, Callable[[Arithmetic[Any], Any], Any]] = {
    "mlx.exp": exp,
    "mlx.sigmoid": sigmoid,
    "mlx.erf": erf,
}
"""Op → its float32 formula from the polynomial `exp`."""
