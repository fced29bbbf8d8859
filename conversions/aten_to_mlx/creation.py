"""Lowerings of the ops that create tensors (full, zeros, ones and their `_like`
forms, arange, diagonal, tril/triu) and of `sym_size`, a runtime dim size."""

from __future__ import annotations

import math
from typing import cast

from xdsl.dialects.builtin import Float32Type, IndexType, IntegerAttr, IntegerType, f32, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import (
    AtenLowering,
    Emitter,
    LoweringError,
    Size,
    arange,
    mixed_sizes,
    scalar_literal,
    tensor_of,
)
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import (
    DYNAMIC,
    dtype_of,
    index_operands,
    int_array,
    normalize_axis,
    rank_of,
    shape_of,
)


class LowerCreation(AtenLowering):
    OPS = (aten.CreationOp, aten.LikeOp, aten.ScalarTensorOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.CreationOp | aten.LikeOp | aten.ScalarTensorOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            if isinstance(op, aten.ScalarTensorOp):
                return e.as_tensor(op.value, dtype)
            if isinstance(op, aten.LikeOp):
                sizes = e.dims(op.input)
            else:
                sizes = mixed_sizes(op.size_list(), op.sizes)
            static, dynamic = index_operands(sizes)
            fill = getattr(op, "fill_value", None)
            if isinstance(op, aten.ZerosOp | aten.ZerosLikeOp):
                op_cls, operands = mlx.ZerosOp, [dynamic]
            elif isinstance(op, aten.OnesOp | aten.OnesLikeOp):
                op_cls, operands = mlx.OnesOp, [dynamic]
            else:
                assert fill is not None
                op_cls, operands = mlx.FullOp, [e.as_tensor(fill, dtype), dynamic]
            return e.emit(
                op_cls.build(
                    operands=operands,
                    result_types=[op.result.type],
                    properties={"static_shape": int_array(static)},
                )
            )

        self.replace(op, rewriter, build)


class LowerArange(AtenLowering):
    OPS = (aten.ArangeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ArangeOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        bounds = [op.start, op.end, op.step]
        literals = [scalar_literal(b) for b in bounds]
        integral = all(
            isinstance(b.type, IndexType | IntegerType) or (lit is not None and float(lit).is_integer())
            for b, lit in zip(bounds, literals)
        )
        length = shape_of(op.result)[0]

        def build(e: Emitter) -> SSAValue:
            if integral:
                sizes: list[Size] = [
                    int(lit) if lit is not None else b for b, lit in zip(bounds, literals)
                ]
                ints_ = e.emit(mlx.ArangeOp(sizes, tensor_of(i64, [length])))
                return e.astype(ints_, dtype)
            if length == DYNAMIC or any(lit is None for lit in literals):
                raise LoweringError(f"{op.name}: float bounds need a static length")
            start, _, step = (float(cast(float, lit)) for lit in literals)  # none is None: checked above
            steps = e.astype(arange(e, length), Float32Type())
            values = e.binary(
                "add",
                e.binary("multiply", steps, e.constant(step, Float32Type())),
                e.constant(start, Float32Type()),
            )
            return e.astype(values, dtype)

        self.replace(op, rewriter, build)


class LowerDiagonal(AtenLowering):
    OPS = (aten.DiagonalOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.DiagonalOp, rewriter: PatternRewriter) -> None:
        rank = len(shape_of(op.input))
        axis1, axis2 = (normalize_axis(d.value.data, rank) for d in (op.dim1, op.dim2))
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.DiagonalOp.build(
                    operands=[op.input],
                    result_types=[op.result.type],
                    properties={
                        "offset": op.offset,
                        "axis1": IntegerAttr(axis1, i64),
                        "axis2": IntegerAttr(axis2, i64),
                    },
                )
            ),
        )


class LowerTriangle(AtenLowering):
    OPS = (aten.TriangleOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.TriangleOp, rewriter: PatternRewriter) -> None:
        op_cls = mlx.TrilOp if op.name == "aten.tril" else mlx.TriuOp
        k = op.diagonal.value.data if op.diagonal is not None else 0
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                op_cls.build(
                    operands=[op.input],
                    result_types=[op.result.type],
                    properties={"k": IntegerAttr(k, i64)},
                )
            ),
        )


class LowerSymSize(AtenLowering):
    OPS = (aten.SymSizeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.SymSizeOp, rewriter: PatternRewriter) -> None:
        axis = normalize_axis(op.dim.value.data, rank_of(op.input))
        self.replace(op, rewriter, lambda e: e.index(e.dim(op.input, axis)))


class LowerRandom(AtenLowering):
    """A draw from a distribution as MLX's uniform or standard normal draw, in float32,
    transformed exactly as each sampler's inverse CDF says, then cast to the result's
    dtype. The values differ from torch's generator's; their distribution is the same
    (docs/semantics.md)."""

    OPS = (aten.RandomOp, aten.RandomLikeOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.RandomOp | aten.RandomLikeOp, rewriter: PatternRewriter) -> None:
        distribution = op.distribution.data
        parameters = [float(p) for p in op.parameters.get_values()]

        def build(e: Emitter) -> SSAValue:
            sizes = e.dims(op.input) if isinstance(op, aten.RandomLikeOp) else mixed_sizes(op.size_list(), op.sizes)
            static, dynamic = index_operands(sizes)
            draw_cls = mlx.RandomNormalOp if distribution in ("normal", "log_normal") else mlx.RandomUniformOp
            drawn = e.emit(
                draw_cls.build(
                    operands=[dynamic],
                    result_types=[tensor_of(f32, shape_of(op.result))],
                    properties={"static_shape": int_array(static)},
                )
            )
            return e.astype(_transformed(e, distribution, parameters, drawn), dtype_of(op.result))

        self.replace(op, rewriter, build)


def _transformed(e: Emitter, distribution: str, parameters: list[float], drawn: SSAValue) -> SSAValue:
    """`drawn` (uniform on [0, 1), or standard normal for the normal family) as a draw
    from `distribution`."""

    def c(value: float) -> SSAValue:
        return e.constant(value, f32)

    def affine(x: SSAValue, scale: float, shift: float) -> SSAValue:
        scaled = x if scale == 1 else e.binary("multiply", x, c(scale))
        return scaled if shift == 0 else e.binary("add", scaled, c(shift))

    if distribution == "normal":
        mean, std = parameters
        return affine(drawn, std, mean)
    if distribution == "log_normal":
        mean, std = parameters
        return e.unary("exp", affine(drawn, std, mean))
    if distribution == "uniform":
        low, high = parameters
        return affine(drawn, high - low, low)
    if distribution == "randint":  # floor(low + (high - low) u) < high, as u < 1
        low, high = parameters
        return e.unary("floor", affine(drawn, high - low, low))
    if distribution == "bernoulli":
        return e.binary("less", drawn, c(parameters[0]))
    if distribution == "cauchy":  # median + sigma tan(pi (u - 1/2))
        median, sigma = parameters
        return affine(e.unary("tan", affine(drawn, math.pi, -math.pi / 2)), sigma, median)
    if distribution not in ("exponential", "geometric"):
        raise LoweringError(f"aten.random: no sampler for '{distribution}'")
    # 1 - u lies in (0, 1]: its log is finite
    log_complement = e.unary("log1p", e.unary("negative", drawn))
    if distribution == "exponential":  # -log(1 - u) / lambda
        return e.binary("divide", log_complement, c(-parameters[0]))
    (p,) = parameters  # geometric: floor(log(1 - u) / log(1 - p)) + 1 >= 1
    return e.binary("add", e.unary("floor", e.binary("divide", log_complement, c(math.log1p(-p)))), c(1.0))


PATTERNS: tuple[AtenLowering, ...] = (
    LowerCreation(),
    LowerRandom(),
    LowerArange(),
    LowerDiagonal(),
    LowerTriangle(),
    LowerSymSize(),
)
