"""`exp`, `sigmoid` and `erf` on the CPU: the native kernels where they run
(`native/kernels/elementwise.cpp`), else a polynomial of arithmetic ops, as vector math
libraries compute `exp`, on enough values.

The native `exp`, `sigmoid` and `erf` are the same kind of polynomial in AVX-512/AVX2
code (`native/kernels/vector_math.h`): within 1.1 ulp of the exact values over every
2039th float32 (`tests/test_native_elementwise.py`; subnormal results rounded, not
flushed), where MLX's kernels reach 58 ulp (`exp`, `sigmoid`) and the compiled formula
below 2.4 ulp (`erf`); NaN kept, float16/bfloat16 rounded once from float32. Measured
(float32 `[1, n]`, one thread, median of 50 calls each evaluated alone, MLX's kernel,
the compiled formula and the native op alternating in one process, µs; the VM shared
with other builds, so a second thread gained only on 10^6 values):

| op, n | MLX | formula | native |
|---|---|---|---|
| exp, 64 | 7.4 | 39 | 9.6 |
| exp, 1408 | 21 | 25 | 7.6 |
| exp, 4096 | 52 | 28 | 6.2 |
| exp, 10^6 | 12434 | 4866 | 365 (2 threads: 204) |
| sigmoid, 1408 | 25 | 23 | 7.4 |
| sigmoid, 16384 | 246 | 70 | 15 |
| sigmoid, 180224 | 2871 | 797 | 134 |
| sigmoid, 10^6 | 15526 | 5001 | 777 |
| erf, 1408 | 38 | 57 | 7.6 |
| erf, 10^6 | 24558 | 15127 | 671 |

From 1408 values on the native op wins 3-22x; at 64 it ties MLX's kernel (each is one
graph node's overhead). So every float call takes the native op where the library
has it; the rest of this module is the path without it (not built, turned off, or an
`.mlxfn` export).

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
from mlxir.runtime.cpu import native
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
    native_name = name.removeprefix("mlx.")

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        mlx_kernel = generic(props, result_dtypes)

        def run(operands: Sequence[Any]) -> Sequence[Any]:
            x = operands[0]
            if x.dtype not in _FLOATS:
                return mlx_kernel(operands)
            module = native.kernels()
            # A library built from sources older than the elementwise family lacks it.
            native_op = getattr(module, native_name, None) if module is not None else None
            if native_op is not None:
                return (native_op(x),)
            if x.size < POLYNOMIAL_MIN_ELEMENTS:
                return mlx_kernel(operands)
            with _TRACING:
                return (compiled(x),)

        return run

    return factory


KERNELS: dict[str, KernelFactory] = {name: _polynomial_kernel(name) for name in FORMULAS}
"""The CPU's `exp`, `sigmoid` and `erf`, in place of the generic ones."""
