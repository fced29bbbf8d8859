"""The elementwise ops, one row each: the aten op, its dtype rule, the mlx op that
computes it and that op's dtype contract.

From these rows come the `aten` dialect's table-generated ops (`aten.UNARY_OPS`,
`aten.BINARY_OPS`), the `mlx` dialect's (`mlx.UNARY_OPS`, `mlx.BINARY_OPS`) and the
lowering's direct mappings (`UNARY_LOWERINGS`, `BINARY_LOWERINGS` in
`conversions/aten_to_mlx/elementwise.py`). Adding an elementwise op MLX computes
directly is one row here, plus its kernel test (docs/adding-an-op.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class DtypeRule(Enum):
    """How an aten elementwise op's result element type relates to its inputs."""

    SAME = "the result has the input's element type"
    FLOAT = "the result is floating point (the input's type when that is a float)"
    FLOAT_ONLY = "input and result are the same floating-point type"
    BOOL = "the result is i1"
    INTEGER_OR_BOOL = "input and result are the same integer or bool type"
    ANY = "any numeric result type (decided by type promotion)"


class ElementwiseKind(Enum):
    """The dtype contract of an elementwise MLX op (no implicit promotion)."""

    SAME = "operands and result share one element type"
    FLOAT = "operands and result share one floating-point type"
    COMPARE = "operands share one element type; the result is i1"
    PREDICATE = "the result is i1"
    LOGICAL = "operands and result are i1"
    BITWISE = "operands and result share one integer or bool type"


@dataclass(frozen=True)
class Elementwise:
    aten: str
    rule: DtypeRule
    mlx: str | None = None
    """The mlx op of this computation; None where the lowering composes other ops."""
    kind: ElementwiseKind | None = None
    direct: bool = True
    """The lowering is the mlx op on operands cast to the result's dtype. False where
    it needs more (a bool conversion, a rounding mode) and builds it itself."""


R, K = DtypeRule, ElementwiseKind

UNARY: tuple[Elementwise, ...] = (
    Elementwise("abs", R.SAME, "abs", K.SAME),
    Elementwise("neg", R.SAME, "negative", K.SAME),
    Elementwise("sign", R.SAME, "sign", K.SAME),
    Elementwise("square", R.SAME, "square", K.SAME),
    Elementwise("relu", R.SAME),
    Elementwise("floor", R.SAME, "floor", K.SAME),
    Elementwise("ceil", R.SAME, "ceil", K.SAME),
    Elementwise("round", R.SAME, "round", K.SAME),
    Elementwise("trunc", R.SAME),
    Elementwise("clone", R.SAME),
    Elementwise("conj_physical", R.SAME, "conj", K.SAME),
    Elementwise("exp", R.FLOAT, "exp", K.FLOAT),
    Elementwise("expm1", R.FLOAT, "expm1", K.FLOAT),
    Elementwise("log", R.FLOAT, "log", K.FLOAT),
    Elementwise("log1p", R.FLOAT, "log1p", K.FLOAT),
    Elementwise("log2", R.FLOAT, "log2", K.FLOAT),
    Elementwise("log10", R.FLOAT, "log10", K.FLOAT),
    Elementwise("sqrt", R.FLOAT, "sqrt", K.FLOAT),
    Elementwise("rsqrt", R.FLOAT, "rsqrt", K.FLOAT),
    Elementwise("sin", R.FLOAT, "sin", K.FLOAT),
    Elementwise("cos", R.FLOAT, "cos", K.FLOAT),
    Elementwise("tan", R.FLOAT, "tan", K.FLOAT),
    Elementwise("asin", R.FLOAT, "arcsin", K.FLOAT),
    Elementwise("acos", R.FLOAT, "arccos", K.FLOAT),
    Elementwise("atan", R.FLOAT, "arctan", K.FLOAT),
    Elementwise("sinh", R.FLOAT, "sinh", K.FLOAT),
    Elementwise("cosh", R.FLOAT, "cosh", K.FLOAT),
    Elementwise("tanh", R.FLOAT, "tanh", K.FLOAT),
    Elementwise("asinh", R.FLOAT, "arcsinh", K.FLOAT),
    Elementwise("acosh", R.FLOAT, "arccosh", K.FLOAT),
    Elementwise("atanh", R.FLOAT, "arctanh", K.FLOAT),
    Elementwise("sigmoid", R.FLOAT, "sigmoid", K.FLOAT),
    Elementwise("erf", R.FLOAT, "erf", K.FLOAT),
    Elementwise("erfinv", R.FLOAT, "erfinv", K.FLOAT),
    Elementwise("erfc", R.FLOAT),
    Elementwise("exp2", R.FLOAT),
    Elementwise("lgamma", R.FLOAT),
    Elementwise("digamma", R.FLOAT),
    Elementwise("reciprocal", R.FLOAT, "reciprocal", K.FLOAT),
    Elementwise("silu", R.FLOAT_ONLY),
    Elementwise("logical_not", R.BOOL, "logical_not", K.LOGICAL, direct=False),
    Elementwise("isnan", R.BOOL, "isnan", K.PREDICATE),
    Elementwise("isinf", R.BOOL, "isinf", K.PREDICATE),
    Elementwise("signbit", R.BOOL),
    Elementwise("bitwise_not", R.INTEGER_OR_BOOL, "bitwise_invert", K.BITWISE, direct=False),
)
"""Unary elementwise ops (beyond `gelu`, which has an option)."""

BINARY: tuple[Elementwise, ...] = (
    Elementwise("add", R.ANY, "add", K.SAME),
    Elementwise("sub", R.ANY, "subtract", K.SAME),
    Elementwise("mul", R.ANY, "multiply", K.SAME),
    Elementwise("div", R.ANY, "divide", K.FLOAT, direct=False),
    Elementwise("pow", R.ANY, "power", K.SAME),
    Elementwise("maximum", R.ANY, "maximum", K.SAME),
    Elementwise("minimum", R.ANY, "minimum", K.SAME),
    Elementwise("remainder", R.ANY, "remainder", K.SAME),
    Elementwise("fmod", R.ANY),
    Elementwise("floor_divide", R.ANY, "floor_divide", K.SAME),
    Elementwise("atan2", R.FLOAT, "arctan2", K.FLOAT),
    Elementwise("hypot", R.FLOAT),
    Elementwise("copysign", R.FLOAT),
    Elementwise("fmax", R.ANY),
    Elementwise("fmin", R.ANY),
    Elementwise("eq", R.BOOL, "equal", K.COMPARE),
    Elementwise("ne", R.BOOL, "not_equal", K.COMPARE),
    Elementwise("lt", R.BOOL, "less", K.COMPARE),
    Elementwise("le", R.BOOL, "less_equal", K.COMPARE),
    Elementwise("gt", R.BOOL, "greater", K.COMPARE),
    Elementwise("ge", R.BOOL, "greater_equal", K.COMPARE),
    Elementwise("logical_and", R.BOOL, "logical_and", K.LOGICAL, direct=False),
    Elementwise("logical_or", R.BOOL, "logical_or", K.LOGICAL, direct=False),
    Elementwise("logical_xor", R.BOOL),
    Elementwise("bitwise_and", R.INTEGER_OR_BOOL, "bitwise_and", K.BITWISE),
    Elementwise("bitwise_or", R.INTEGER_OR_BOOL, "bitwise_or", K.BITWISE),
    Elementwise("bitwise_xor", R.INTEGER_OR_BOOL, "bitwise_xor", K.BITWISE),
    Elementwise("bitwise_left_shift", R.INTEGER_OR_BOOL, "left_shift", K.BITWISE),
    Elementwise("bitwise_right_shift", R.INTEGER_OR_BOOL, "right_shift", K.BITWISE),
)
"""Binary elementwise ops; the aten `other` is a tensor or a Scalar, the mlx operands
broadcast NumPy-style."""


def aten_rules(rows: tuple[Elementwise, ...]) -> dict[str, DtypeRule]:
    return {row.aten: row.rule for row in rows}


def mlx_kinds(rows: tuple[Elementwise, ...]) -> dict[str, ElementwiseKind]:
    return {row.mlx: row.kind for row in rows if row.mlx is not None and row.kind is not None}


MLX_UNARY_OPS: dict[str, ElementwiseKind] = mlx_kinds(UNARY)
"""Unary elementwise MLX ops (`mx.<name>`) and their dtype contract."""

MLX_BINARY_OPS: dict[str, ElementwiseKind] = mlx_kinds(BINARY)
"""Binary elementwise MLX ops (`mx.<name>`), broadcasting NumPy-style."""

MLX_REDUCTION_OPS: dict[str, ElementwiseKind] = {
    "sum": ElementwiseKind.SAME,
    "prod": ElementwiseKind.SAME,
    "max": ElementwiseKind.SAME,
    "min": ElementwiseKind.SAME,
    "mean": ElementwiseKind.FLOAT,
    "logsumexp": ElementwiseKind.FLOAT,
    "any": ElementwiseKind.PREDICATE,
    "all": ElementwiseKind.PREDICATE,
}
"""Reductions (`mx.<name>(x, axes, keepdims)`) and the dtype contract of their result."""


def direct_lowerings(rows: tuple[Elementwise, ...]) -> dict[str, str]:
    """aten op → the mlx op computing it in the result's dtype."""
    return {row.aten: row.mlx for row in rows if row.mlx is not None and row.direct}
