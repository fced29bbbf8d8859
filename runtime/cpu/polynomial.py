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

The formulas are written once, over `Arithmetic` (`transforms/cpu/polynomial.py`): the CPU
kernels here evaluate them on `mx.array`s, and the `cpu-polynomial-exp` pass
(`transforms/polynomial_exp.py`) writes the same ops into a program.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

from mlxir.evaluator import KERNELS as GENERIC_KERNELS
from mlxir.evaluator.registry import Kernel, KernelFactory, Props, ResultDtypes
from mlxir.transforms.cpu.polynomial import FORMULAS, Arithmetic


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
`$TMPDIR/mlx`). The `cpu-polynomial-exp` pass asks for more,
`POLYNOMIAL_MIN_KNOWN_ELEMENTS` (16384), because the ops it writes run one by one
unless the whole program is traced."""

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
