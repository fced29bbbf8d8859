"""`cpu-polynomial-exp`: `exp`, `sigmoid`, `erf` and `softmax` on MLX's CPU computed
from a polynomial of arithmetic ops, written into the program.

A pass on request (`-p 'lower-to-mlx{target=cpu},cpu-polynomial-exp'`), so it lives
here and not among the CPU target's passes (`transforms/cpu/`, all in the target): in
the target, a full test run went several times slower (4753d1c), and since then the
CPU backend takes the same formulas per call on 4096 values or more, dynamic shapes
included (`runtime/cpu/polynomial.py`). Its rewrite keeps the program's meaning on any
device.

The formulas and their accuracy are `transforms/cpu/polynomial.py`'s (within 2 ulp for
`exp`, 2e-7 for `erf`), which the CPU backend's kernels (`runtime/cpu/polynomial.py`)
already take at run time on enough values; this pass writes the same ops into the program instead, where a whole
program traced by `mx.compile` fuses them with their neighbours.
Softmax becomes `e / sum(e)` with `e = exp(x - max(x))`, the composition MLX's own
kernel computes."""

from __future__ import annotations

import math
from collections.abc import Callable
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
from mlxir.transforms.cpu import polynomial


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

    def binary(self, name: str, lhs: SSAValue | float, rhs: SSAValue | float) -> SSAValue:
        if not isinstance(lhs, SSAValue):
            assert isinstance(rhs, SSAValue)
            lhs = self.constant(lhs, dtype_of(rhs))
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

    def power_of_two(self, n: SSAValue) -> SSAValue:
        exponent = self.binary("add", self.astype(n, IntegerType(32)), 126)
        return self.add(mlx.ViewOp(self.binary("left_shift", exponent, 23), self.tensor(Float32Type())))


POLYNOMIAL_MIN_KNOWN_ELEMENTS = 16384
"""The polynomial replaces MLX's kernel only where the sizes known at compile time
(dynamic ones count as 1) hold at least this many elements. Op by op, each of its
~20 ops pays MLX's per-op cost: SiLU over `[1, n]`, one thread, on an idle machine
(load average 0.6), the median over 5 processes of each one's median of 50, MLX's
kernel against the polynomial (op by op; within one `mx.compile`d function):
n = 1408: 74 against 424 us (70 against 93); 4096: 137 against 440 (127 against 93);
16384: 420 against 404 (454 against 212); 65536: 2058 against 1168 (1992 against 698).
Single runs spread widely (the polynomial op by op at 1408: 218 to 695 us).
An LLM's step program, whose batch and length are dynamic, keeps its ops: the CPU's
kernels choose by the size of each call (`runtime/cpu/polynomial.py`). That threshold,
`POLYNOMIAL_MIN_ELEMENTS`, is 4096: there the formula runs as one fused loop, here it
is ~20 ops whose per-op cost is paid unless a trace fuses them."""


def _float_operand(op: Operation) -> bool:
    element = dtype_of(op.operands[0])
    if not isinstance(element, Float32Type | Float16Type | BFloat16Type):
        return False
    known = math.prod(size for size in shape_of(op.operands[0]) if size != DYNAMIC_INDEX)
    return known >= POLYNOMIAL_MIN_KNOWN_ELEMENTS


def _softmax(build: _Builder, op: Operation, x: SSAValue) -> SSAValue:
    """`e / sum(e, axes)`, `e = exp(x - max(x, axes))`; low precision in float32
    (`precise` or not: more exact, never less)."""
    assert isinstance(op, mlx.SoftmaxOp)
    shape = build.shape
    axes = list(ints(op.axes))
    reduced_axes = [axis % len(shape) for axis in axes]
    reduced = TensorType(Float32Type(), [1 if a in reduced_axes else size for a, size in enumerate(shape)])
    largest = build.add(mlx.REDUCTION_OP_CLASSES["max"](x, axes, True, reduced))
    e = polynomial.exp(build, build.binary("subtract", x, largest))
    total = build.add(mlx.REDUCTION_OP_CLASSES["sum"](e, axes, True, reduced))
    return build.binary("divide", e, total)


Formula = Callable[[_Builder, Operation, SSAValue], SSAValue]


def _elementwise(formula: Callable[[_Builder, SSAValue], SSAValue]) -> Formula:
    return lambda build, op, x: formula(build, x)


_FORMULAS: dict[str, Formula] = {
    **{name: _elementwise(formula) for name, formula in polynomial.FORMULAS.items()},
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
    """On request: exp, sigmoid, erf and softmax from a polynomial exp, on 16384 known values.

    Not in the CPU target (the module's docstring says why): MLX's CPU `exp` costs
    about 47 multiplies."""

    name = "cpu-polynomial-exp"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PolynomialTranscendental(), apply_recursively=False).rewrite_module(op)
