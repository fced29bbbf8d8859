"""`exp`, `sigmoid` and `erf` from a polynomial of arithmetic ops, as vector math
libraries compute `exp`, and the CPU kernels that take that way on enough values.

MLX's CPU `exp` costs about 14 ns per float32 element on this machine, its `sigmoid`
about 19 and its `erf` 34, where a multiply costs 0.3 (one thread, 2^20 elements,
median of 10; NumPy's `exp` takes 2.3 ns): in an LLM's prefill the SiLU of the MLP
costs more than its attention. `exp` written as `2^n * p(r)`, `n = round(x / ln 2)`,
`r = x - n ln 2` (in two parts, Cody and Waite), `p` a degree-7 polynomial (Cephes'
`expf`), `2^n` built from its exponent bits, is ~20 arithmetic ops that MLX fuses
into one loop when they are `mx.compile`d. It keeps MLX's meaning: within 2 ulp of
the exact value over float32's range (`tests/test_cpu_target.py` checks every
exponent), `exp(-inf) = 0`, `exp(inf) = inf`, results past float32's range inf, and
under 1.7e-38 zero (`_UNDERFLOW`), NaN stays NaN; float16 and bfloat16 go through
float32, as MLX's CPU kernels do. `erf` is its Taylor series near 0 and `1 - erfc`
beyond, `erfc` from the polynomial `exp`: within 2e-7 of the exact value.

The formulas are written once, over `Arithmetic`: the CPU kernels here evaluate them
on `mx.array`s, and the `cpu-polynomial-exp` pass (`transforms/cpu/polynomial_exp.py`)
writes the same ops into a program.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import mlx.core as mx

from mlxir.evaluator import KERNELS as GENERIC_KERNELS
from mlxir.evaluator.registry import Kernel, KernelFactory, Props, ResultDtypes

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


class MxArithmetic:
    """`Arithmetic` on `mx.array`s (float32)."""

    def binary(self, name: str, lhs: mx.array | float, rhs: mx.array | float) -> mx.array:
        return getattr(mx, name)(lhs, rhs)

    def unary(self, name: str, x: mx.array) -> mx.array:
        return getattr(mx, name)(x)

    def where(self, condition: mx.array, x: mx.array | float, y: mx.array) -> mx.array:
        return mx.where(condition, x, y)

    def power_of_two(self, n: mx.array) -> mx.array:
        return mx.left_shift(n.astype(mx.int32) + 126, 23).view(mx.float32)


_MX = MxArithmetic()

POLYNOMIAL_MIN_ELEMENTS = 4096
"""From this many values on, the CPU computes `exp`, `sigmoid` and `erf` by the
`mx.compile`d formula (one fused loop) instead of MLX's kernel. SiLU's `sigmoid` and
`exp` over `[1, n]` float32, one thread, median of 50 calls after one, MLX's kernel
against the compiled formula, us (two processes): n = 1024: 28/101 against 59/58
(`exp`); 1408: 65/69 against 104/64 (`sigmoid`); 4096: 130/141 against 86/80 (`exp`),
149/147 against 91/89 (`sigmoid`); 16384: 407/582 against 157/330; 180224 (a 128-token
prefill's SiLU in the 56M Llama): 4308/6246 against 1866/1892. A decode step's
`[1, 1, 1408]` keeps MLX's kernel. MLX traces the formula once per input shape
(1-5 ms: a prompt of a new length pays it once, for all its layers); the fused loop's
C++ is built the first time a machine meets it (about 1 s, cached on disk under
`$TMPDIR/mlx`)."""

_FLOATS = (mx.float32, mx.float16, mx.bfloat16)


def _compiled(formula: Callable[[Arithmetic[Any], Any], Any]) -> Callable[[mx.array], mx.array]:
    def in_float32(x: mx.array) -> mx.array:
        return formula(_MX, x.astype(mx.float32)).astype(x.dtype)

    return mx.compile(in_float32)


_COMPILED = {name: _compiled(formula) for name, formula in FORMULAS.items()}
_TRACING = threading.Lock()
"""MLX's compile cache is shared by every thread: one traces at a time."""


def _polynomial_kernel(name: str) -> KernelFactory:
    generic = GENERIC_KERNELS[name]
    compiled = _COMPILED[name]

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        mlx_kernel = generic(props, result_dtypes)

        def run(operands: Sequence[Any]) -> Sequence[Any]:
            x = operands[0]
            if x.dtype not in _FLOATS or x.size < POLYNOMIAL_MIN_ELEMENTS:
                return mlx_kernel(operands)
            with _TRACING:
                return (compiled(x),)

        return run

    return factory


KERNELS: dict[str, KernelFactory] = {name: _polynomial_kernel(name) for name in FORMULAS}
"""The CPU's `exp`, `sigmoid` and `erf`, in place of the generic ones."""
