"""Lowerings of the linear-algebra ops: matmul, addmm, linear, convolution (plain and
transposed), pooling, and the inverse, determinant and solve of square matrices."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, TensorType, UnitAttr, f32, f64, i1, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mlxir.conversions.aten_to_mlx.core import AtenLowering, Emitter, LoweringError, Size, tensor_of
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import (
    DYNAMIC,
    broadcast_shapes,
    dims_compatible,
    dtype_of,
    int_array,
    ints,
    rank_of,
    shape_of,
)


class LowerMatmul(AtenLowering):
    OPS = (aten.MatmulLikeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.MatmulLikeOp, rewriter: PatternRewriter) -> None:
        self.replace(op, rewriter, lambda e: _matmul_typed(e, op.input, op.other, op.result.type))


def _matmul_typed(e: Emitter, a: SSAValue, b: SSAValue, result_type: Attribute) -> SSAValue:
    dtype = dtype_of_type(result_type)
    a, b = e.astype(a, dtype), e.astype(b, dtype)
    a1, b1 = rank_of(a) == 1, rank_of(b) == 1
    if a1:
        a = e.expand_dims(a, [0])
    if b1:
        b = e.expand_dims(b, [1])
    sa, sb = shape_of(a), shape_of(b)
    out = [*broadcast_shapes([sa[:-2], sb[:-2]]), sa[-2], sb[-1]]
    product = e.emit(mlx.MatmulOp(a, b, tensor_of(dtype, out)))
    rank = len(out)
    squeeze = ([rank - 2] if a1 else []) + ([rank - 1] if b1 else [])
    return e.squeeze(product, squeeze)


def dtype_of_type(t: Attribute) -> Attribute:
    assert isinstance(t, TensorType)
    return cast(TensorType[Attribute], t).get_element_type()


class LowerAddmm(AtenLowering):
    OPS = (aten.AddmmOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.AddmmOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)
        props = {k: v for k, v in (("alpha", op.alpha), ("beta", op.beta)) if v is not None}
        self.replace(
            op,
            rewriter,
            lambda e: e.emit(
                mlx.AddmmOp.build(
                    operands=[e.astype(op.bias, dtype), e.astype(op.mat1, dtype), e.astype(op.mat2, dtype)],
                    result_types=[op.result.type],
                    properties=props,
                )
            ),
        )


class LowerLinear(AtenLowering):
    OPS = (aten.LinearOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LinearOp, rewriter: PatternRewriter) -> None:
        dtype = dtype_of(op.result)

        def build(e: Emitter) -> SSAValue:
            weight = e.astype(op.weight, dtype)
            if rank_of(weight) == 2:
                weight = e.transpose(weight, [1, 0])
            out = _matmul_typed(e, e.astype(op.input, dtype), weight, op.result.type)
            if op.bias is not None:
                out = e.binary("add", out, e.astype(op.bias, dtype))
            return out

        self.replace(op, rewriter, build)


def _expand_list(values: Sequence[int], count: int) -> list[int]:
    return list(values) * count if len(values) == 1 else list(values)


class LowerConvolution(AtenLowering):
    """NCHW convolution → channels-last `mlx.conv_general` between two transposes.

    A transposed convolution is the convolution of the input dilated by `stride` with
    the flipped kernel (MLX's own `conv_transpose`): stride 1, kernel dilation
    `dilation`, padding `dilation * (k - 1) - padding` low and that plus
    `output_padding` high (cropped after the convolution where it is negative), and
    the weight `[in, out/g, *k]` regrouped to `[out, in/g, *k]`."""

    OPS = (aten.ConvolutionOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.ConvolutionOp, rewriter: PatternRewriter) -> None:
        rank = rank_of(op.input)
        spatial = rank - 2
        dtype = dtype_of(op.result)
        groups = op.groups.value.data
        transposed = op.transposed is not None
        if spatial == 3 and groups != 1:
            raise LoweringError(f"{op.name}: MLX has no grouped 3-d convolution (groups={groups})")
        to_last = [0, *range(2, rank), 1]
        to_first = [0, rank - 1, *range(1, rank - 1)]
        stride = _expand_list(ints(op.stride), spatial)
        padding = _expand_list(ints(op.padding), spatial)
        dilation = _expand_list(ints(op.dilation), spatial)
        out_shape = shape_of(op.result)
        result_shape = [out_shape[p] for p in to_last]
        if not transposed:
            options = {
                "stride": stride,
                "padding_lo": padding,
                "padding_hi": padding,
                "kernel_dilation": dilation,
                "input_dilation": [1] * spatial,
            }
            crop_lo, crop_hi = [0] * spatial, [0] * spatial
        else:
            kernel = shape_of(op.weight)[2:]
            if DYNAMIC in shape_of(op.weight):
                raise LoweringError(f"{op.name}: a transposed convolution needs a static weight shape")
            extra = _expand_list(ints(op.output_padding), spatial) if op.output_padding else [0] * spatial
            low = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding)]
            high = [lo + x for lo, x in zip(low, extra)]
            options = {
                "stride": [1] * spatial,
                "padding_lo": [max(v, 0) for v in low],
                "padding_hi": [max(v, 0) for v in high],
                "kernel_dilation": dilation,
                "input_dilation": stride,
            }
            crop_lo, crop_hi = [max(-v, 0) for v in low], [max(-v, 0) for v in high]
        conv_shape = [
            *result_shape[:1],
            *(DYNAMIC if d == DYNAMIC else d + lo + hi for d, lo, hi in zip(result_shape[1:-1], crop_lo, crop_hi)),
            result_shape[-1],
        ]

        def build(e: Emitter) -> SSAValue:
            x = e.transpose(e.astype(op.input, dtype), to_last)
            weight = e.astype(op.weight, dtype)
            if transposed:
                weight = _regroup_transposed_weight(e, weight, groups)
            w = e.transpose(weight, to_last)
            conv = e.emit(
                mlx.ConvGeneralOp.build(
                    operands=[x, w],
                    result_types=[tensor_of(dtype, conv_shape)],
                    properties={
                        **{name: int_array(values) for name, values in options.items()},
                        "groups": op.groups,
                        **({"flip": UnitAttr()} if transposed else {}),
                    },
                )
            )
            if any(crop_lo) or any(crop_hi):
                dims = e.dims(conv)
                stops: list[Size] = [
                    dims[0],
                    *(e.add(size, -hi) for size, hi in zip(dims[1:-1], crop_hi)),
                    dims[-1],
                ]
                conv = e.slice(conv, [0, *crop_lo, 0], stops, [1] * rank, result_shape)
            if op.bias is not None:
                conv = e.binary("add", conv, e.astype(op.bias, dtype))
            return e.transpose(conv, to_first)

        self.replace(op, rewriter, build)


def _regroup_transposed_weight(e: Emitter, weight: SSAValue, groups: int) -> SSAValue:
    """A transposed convolution's weight `[in, out/g, *k]` as the `[out, in/g, *k]`
    weight of the equivalent convolution."""
    rank = rank_of(weight)
    swap = [1, 0, *range(2, rank)]
    if groups == 1:
        return e.transpose(weight, swap)
    cin, cout_g, *kernel = shape_of(weight)
    grouped = e.reshape(weight, [groups, cin // groups, cout_g, *kernel])
    regrouped = e.transpose(grouped, [0, 2, 1, *range(3, rank + 1)])
    return e.reshape(regrouped, [groups * cout_g, cin // groups, *kernel])


def _pool_output(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil: bool) -> int:
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


class LowerPool(AtenLowering):
    """N-d (2-d, 3-d) max/avg pooling as the max/sum over the kernel's strided slices of
    the padded input (MLX has no pooling primitive). Needs static spatial dims."""

    OPS = (aten.PoolOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.PoolOp, rewriter: PatternRewriter) -> None:
        is_max = isinstance(op, aten.MaxPoolOp)
        n = op.SPATIAL
        shape = shape_of(op.input)
        rank = len(shape)
        lead = rank - n
        sizes = list(shape[lead:])
        if DYNAMIC in sizes:
            raise LoweringError(f"{op.name}: pooling needs static spatial dims")
        kernel = _expand_list(ints(op.kernel_size), n)
        stride = _expand_list(ints(op.stride) or kernel, n)
        pad = _expand_list(ints(op.padding), n)
        dilation = _expand_list(ints(op.dilation), n) if isinstance(op, aten.MaxPoolOp) else [1] * n
        ceil = op.ceil_mode is not None
        out = [_pool_output(*args, ceil) for args in zip(sizes, kernel, stride, pad, dilation)]
        # The kernel offsets taken: one at or past the input and its explicit padding
        # reads only the ceil-mode extra (zero for sums and counts, -inf for max), so
        # a kernel wider than its input (a "global" 1280-wide average pool) costs what
        # the input holds, not what the kernel spans.
        offsets = [range(min(k, -(-(size + 2 * p) // d))) for k, size, p, d in zip(kernel, sizes, pad, dilation)]
        # The extent each spatial dim's windows read: (out - 1) * stride + last offset.
        spans = [(o - 1) * s + d * (len(r) - 1) + 1 for o, s, d, r in zip(out, stride, dilation, offsets)]
        # Extra high padding lets ceil-mode windows run past the edge.
        extra = [max(0, span - (size + 2 * p)) for span, size, p in zip(spans, sizes, pad)]
        runs_past = any(
            (o - 1) * s + d * (k - 1) + 1 > size + 2 * p
            for o, s, d, k, size, p in zip(out, stride, dilation, kernel, sizes, pad)
        )
        dtype = dtype_of(op.result)

        def padded(e: Emitter, x: SSAValue, low: Sequence[int], high: Sequence[int], value: float) -> SSAValue:
            if not any(low) and not any(high):
                return x
            count = rank_of(x) - n
            x_shape = shape_of(x)
            return e.emit(
                mlx.PadOp(
                    x,
                    [0] * count + list(low),
                    [0] * count + list(high),
                    value,
                    tensor_of(
                        dtype_of(x),
                        [*x_shape[:count], *(d + lo + hi for d, lo, hi in zip(x_shape[count:], low, high))],
                    ),
                )
            )

        def windows(e: Emitter, x: SSAValue, combine: str) -> SSAValue:
            count = rank_of(x) - n
            leading = e.dims(x)[:count]
            acc: SSAValue | None = None
            for window in itertools.product(*offsets):
                starts: list[Size] = [*([0] * count), *(o * d for o, d in zip(window, dilation))]
                stops: list[Size] = [
                    *leading,
                    *(o * d + (m - 1) * s + 1 for o, d, m, s in zip(window, dilation, out, stride)),
                ]
                part = e.slice(x, starts, stops, [1] * count + stride, [*shape_of(x)[:count], *out])
                acc = part if acc is None else e.binary(combine, acc, part)
            assert acc is not None
            return acc

        def build(e: Emitter) -> SSAValue:
            x = e.astype(op.input, dtype)
            high = [p + x_ for p, x_ in zip(pad, extra)]
            if is_max:
                return windows(e, padded(e, x, pad, high, -math.inf), "maximum")
            total = windows(e, padded(e, x, pad, high, 0.0), "add")
            divisor_attr = op.properties.get("divisor_override")
            if isinstance(divisor_attr, IntegerAttr):
                return e.binary("divide", total, e.constant(divisor_attr.value.data, dtype))
            include_pad = op.properties.get("count_include_pad") is not None
            if include_pad and not runs_past:
                return e.binary("divide", total, e.constant(math.prod(kernel), dtype))
            # Count the window cells that are real input (or real padding with
            # count_include_pad): pool a tensor of ones the same way.
            ones = e.emit(
                mlx.OnesOp.build(
                    operands=[[]],
                    result_types=[tensor_of(dtype, sizes)],
                    properties={"static_shape": int_array(sizes)},
                )
            )
            if include_pad:
                counted = padded(e, ones, pad, pad, 1.0)
                counted_pad = [0] * n
            else:
                counted, counted_pad = ones, pad
            counted_sizes = shape_of(counted)
            tail = [max(0, span - c - p) for span, c, p in zip(spans, counted_sizes, counted_pad)]
            counts = windows(e, padded(e, counted, counted_pad, tail, 0.0), "add")
            return e.binary("divide", total, counts)

        self.replace(op, rewriter, build)


def _lapack_matrices(op: Operation, matrices: SSAValue) -> None:
    """MLX's linear algebra (LAPACK on its CPU stream) takes float32 and float64 only,
    as torch's CPU kernels do (neither takes float16 or bfloat16)."""
    if dtype_of(matrices) not in (f32, f64):
        raise LoweringError(
            f"{op.name}: MLX's linear algebra takes float32 and float64 only, got {dtype_of(matrices)}"
        )


class LowerSameAsMlx(AtenLowering):
    """The linear-algebra ops with an mlx op of the same operands, results and
    properties: one table. MLX's QR is the reduced one: the complete one is the same
    where m <= n, and refused elsewhere."""

    MLX_OPS: ClassVar[dict[type[IRDLOperation], type[IRDLOperation]]] = {
        aten.LinalgInvOp: mlx.LinalgInvOp,
        aten.LinalgDetOp: mlx.LinalgDetOp,
        aten.LinalgSlogdetOp: mlx.LinalgSlogdetOp,
        aten.CholeskyInverseOp: mlx.LinalgCholeskyInvOp,
        aten.LinalgQrOp: mlx.LinalgQrOp,
        aten.LinalgSvdvalsOp: mlx.LinalgSvdvalsOp,
        aten.LinalgEigvalshOp: mlx.LinalgEigvalshOp,
    }
    OPS = tuple(MLX_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        mlx_op = self.MLX_OPS.get(type(op)) if isinstance(op, IRDLOperation) else None
        if mlx_op is None:
            return
        _lapack_matrices(op, op.operands[0])
        properties = dict(op.properties)
        if properties.pop("complete", None) is not None:
            m, n = shape_of(op.operands[0])[-2:]
            if DYNAMIC in (m, n) or m > n:
                raise LoweringError(f"{op.name}: MLX has no complete QR of a tall matrix ([..., {m}, {n}])")
        built = mlx_op.build(
            operands=list(op.operands), result_types=[r.type for r in op.results], properties=properties
        )
        self.replace(op, rewriter, lambda e: e.emit_all(built))


def _transposition(op: Operation, a: SSAValue, b: SSAValue, b_shape: Sequence[int]) -> list[int]:
    """The permutation that transposes each matrix of a solve's operands (for
    `X A = B`), once B (as `[..., n, k]`, `b_shape`) is known to have A's batch dims:
    MLX's solves broadcast nothing, so batch dims that would are refused."""
    a_shape, rank = shape_of(a), rank_of(a)
    if len(b_shape) != rank or not all(dims_compatible(x, y) for x, y in zip(a_shape[:-2], b_shape[:-2])):
        raise LoweringError(
            f"{op.name}: batch dims that broadcast (A {list(a_shape)}, B {list(shape_of(b))}) are not supported"
        )
    return [*range(rank - 2), rank - 1, rank - 2]


class LowerLinalgSolve(AtenLowering):
    """`A X = B` by `mx.linalg.solve`, which takes matrices `[..., n, k]` with A's own
    batch dims: a vector B (the result one rank below A: torch's rule) becomes one
    column, and `X A = B` is `A^T X^T = B^T`. Batch dims that would broadcast are
    refused."""

    OPS = (aten.LinalgSolveOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LinalgSolveOp, rewriter: PatternRewriter) -> None:
        _lapack_matrices(op, op.a)
        rank = rank_of(op.a)
        vector = rank_of(op.result) == rank - 1
        swap = _transposition(op, op.a, op.b, [*shape_of(op.b), 1] if vector else shape_of(op.b))

        def build(e: Emitter) -> SSAValue:
            a, b = op.a, e.expand_dims(op.b, [rank - 1]) if vector else op.b
            if op.right is not None:
                a = e.transpose(a, swap)
                if not vector:
                    b = e.transpose(b, swap)
            x = e.emit(mlx.LinalgSolveOp.build(operands=[a, b], result_types=[b.type]))
            if vector:
                return e.squeeze(x, [rank - 1])
            return e.transpose(x, swap) if op.right is not None else x

        self.replace(op, rewriter, build)


class LowerLinalgSolveTriangular(AtenLowering):
    """`mx.linalg.solve_triangular` on A's own batch dims; `X A = B` is
    `A^T X^T = B^T`, whose triangle is the other one. MLX has no unit-diagonal form:
    with `unitriangular`, A's triangle without its diagonal, plus the identity."""

    OPS = (aten.LinalgSolveTriangularOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LinalgSolveTriangularOp, rewriter: PatternRewriter) -> None:
        _lapack_matrices(op, op.a)
        swap = _transposition(op, op.a, op.b, shape_of(op.b))
        right = op.right is not None
        upper = (op.upper is not None) != right

        def build(e: Emitter) -> SSAValue:
            a = _unit_diagonal(e, op.a, op.upper is not None) if op.unitriangular is not None else op.a
            a, b = (e.transpose(a, swap), e.transpose(op.b, swap)) if right else (a, op.b)
            x = e.emit(
                mlx.LinalgSolveTriangularOp.build(
                    operands=[a, b], result_types=[b.type], properties={"upper": UnitAttr()} if upper else {}
                )
            )
            return e.transpose(x, swap) if right else x

        self.replace(op, rewriter, build)


def _unit_diagonal(e: Emitter, a: SSAValue, upper: bool) -> SSAValue:
    """`a`'s upper (or lower) triangle with ones on the diagonal."""
    k = IntegerAttr(1 if upper else -1, 64)
    strict = e.emit((mlx.TriuOp if upper else mlx.TrilOp).build(operands=[a], result_types=[a.type], properties={"k": k}))
    ones = e.broadcast_to(e.constant(1.0, dtype_of(a)), e.dims(a))
    zero = {"k": IntegerAttr(0, 64)}
    identity = e.emit(
        mlx.TrilOp.build(
            operands=[e.emit(mlx.TriuOp.build(operands=[ones], result_types=[a.type], properties=zero))],
            result_types=[a.type],
            properties=zero,
        )
    )
    return e.binary("add", strict, identity)


class LowerCholeskyEx(AtenLowering):
    """`mx.linalg.cholesky`, and LAPACK's `info` from the factor: LAPACK stops at the
    first pivot that is not positive (or is NaN) and leaves it on the diagonal, every
    earlier one a positive square root, so `info` is 0 where the whole diagonal is
    positive and else 1 + the number of leading positive entries."""

    OPS = (aten.LinalgCholeskyExOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LinalgCholeskyExOp, rewriter: PatternRewriter) -> None:
        _lapack_matrices(op, op.input)
        rank = rank_of(op.input)

        def build(e: Emitter) -> list[SSAValue]:
            factor = e.emit(
                mlx.LinalgCholeskyOp.build(
                    operands=[op.input],
                    result_types=[op.factor.type],
                    properties={"upper": UnitAttr()} if op.upper is not None else {},
                )
            )
            info = _lapack_info(e, factor, [*shape_of(op.input)[:-1]], rank, "greater")
            assert info.type == op.info.type
            return [factor, info]

        self.replace(op, rewriter, build)


def _lapack_info(e: Emitter, factor: SSAValue, diagonal_shape: list[int], rank: int, good: str) -> SSAValue:
    """LAPACK's `info` from a factor's diagonal `[..., k]`, where the factorization stops
    at (Cholesky) or reports (getrf) the first pivot that is not `good` against 0
    (`greater`: positive; `not_equal`: nonzero): 0 where every pivot is good, else 1 +
    the number of leading good ones."""
    diagonal = e.emit(
        mlx.DiagonalOp.build(
            operands=[factor],
            result_types=[tensor_of(dtype_of(factor), diagonal_shape)],
            properties={
                "offset": IntegerAttr(0, 64),
                "axis1": IntegerAttr(rank - 2, 64),
                "axis2": IntegerAttr(rank - 1, 64),
            },
        )
    )
    holds = e.binary(good, diagonal, e.constant(0.0, dtype_of(diagonal)))
    as_int = e.astype(holds, i32)
    leading = e.emit(
        mlx.CumprodOp.build(
            operands=[as_int], result_types=[as_int.type], properties={"axis": IntegerAttr(rank - 2, 64)}
        )
    )
    stopped_at = e.binary("add", e.reduce("sum", leading, [rank - 2], False, i32), e.constant(1, i32))
    all_hold = e.reduce("all", holds, [rank - 2], False, i1)
    return e.where(all_hold, e.constant(0, i32), stopped_at)


class LowerLuFactorEx(AtenLowering):
    """`mx.linalg.lu_factor` (LAPACK's getrf, as torch's CPU kernel: the same factors
    and pivots), its 0-based pivots made torch's 1-based, and LAPACK's `info` from U's
    diagonal: getrf completes the factorization past a zero pivot and reports the
    first, so `info` is 0 where no diagonal entry is zero and else 1 + the number of
    leading nonzero entries."""

    OPS = (aten.LinalgLuFactorExOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LinalgLuFactorExOp, rewriter: PatternRewriter) -> None:
        _lapack_matrices(op, op.input)
        rank = rank_of(op.input)

        def build(e: Emitter) -> list[SSAValue]:
            lu, pivots = e.emit_all(
                mlx.LinalgLuFactorOp.build(operands=[op.input], result_types=[op.lu.type, op.pivots.type])
            )
            one_based = e.binary("add", pivots, e.constant(1, i32))
            info = _lapack_info(e, lu, list(shape_of(op.pivots)), rank, "not_equal")
            assert info.type == op.info.type
            return [lu, one_based, info]

        self.replace(op, rewriter, build)


class LowerLinalgPinv(AtenLowering):
    """torch's own composition: `V diag(1/s) U^T` from the reduced SVD (`U diag(l) U^T`
    from the eigendecomposition, s = |l|, with `hermitian`), each s at most
    `max(atol, rtol * max(s))` taken as zero; products free of the vectors' signs.
    torch compares in float64: `s > atol` is exact here as `s > atol` rounded down to
    float32, `rtol * max(s)` is a float32 product (it differs only where a singular
    value lies within an ulp of it). Needs static m and n."""

    OPS = (aten.LinalgPinvOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: aten.LinalgPinvOp, rewriter: PatternRewriter) -> None:
        _lapack_matrices(op, op.input)
        *batch, m, n = shape_of(op.input)
        if DYNAMIC in (m, n):
            raise LoweringError(f"{op.name}: a pseudo-inverse needs static matrix dims, got [..., {m}, {n}]")
        rank, k, dtype = len(batch) + 2, min(m, n), dtype_of(op.input)
        atol = op.atol.value.data if op.atol is not None else None
        rtol = op.rtol.value.data if op.rtol is not None else None
        if rtol is None:  # torch's default, 0 where atol is positive
            rtol = 0.0 if atol is not None and atol > 0 else float(np.finfo(np.float32).eps) * max(m, n)
        atol_below = np.float32(atol or 0.0)
        if float(atol_below) > (atol or 0.0):
            atol_below = np.nextafter(atol_below, np.float32(-np.inf))
        swap = [*range(rank - 2), rank - 1, rank - 2]

        def inverted(e: Emitter, values: SSAValue, magnitudes: SSAValue, largest: SSAValue) -> SSAValue:
            """1/values where the magnitude is above both tolerances, else 0."""
            above = e.binary(
                "logical_and",
                e.binary("greater", magnitudes, e.constant(float(atol_below), dtype)),
                e.binary("greater", magnitudes, e.binary("multiply", largest, e.constant(rtol, dtype))),
            )
            return e.where(above, e.unary("reciprocal", values), e.constant(0.0, dtype))

        def build(e: Emitter) -> SSAValue:
            dims = e.dims(op.input)[:-2]
            starts: list[Size] = [0] * rank
            if op.hermitian is not None:
                values, vectors = e.emit_all(
                    mlx.LinalgEighOp.build(
                        operands=[op.input], result_types=[tensor_of(dtype, [*batch, n]), op.input.type]
                    )
                )
                magnitudes = e.unary("abs", values)
                padded = e.concatenate(
                    [magnitudes, e.broadcast_to(e.constant(0.0, dtype), [*dims, 1])],
                    rank - 2,
                    tensor_of(dtype, [*batch, n + 1]),
                )  # max over an empty axis fails; the zero changes no other maximum
                largest = e.reduce("max", padded, [rank - 2], True, dtype)
                scale = inverted(e, values, magnitudes, largest)
                left, right = vectors, e.transpose(vectors, swap)
            else:
                u, s, vt = e.emit_all(
                    mlx.LinalgSvdOp.build(
                        operands=[op.input],
                        result_types=[
                            tensor_of(dtype, [*batch, m, m]),
                            tensor_of(dtype, [*batch, k]),
                            tensor_of(dtype, [*batch, n, n]),
                        ],
                    )
                )
                ones = [1] * (rank - 1)
                u_k = e.slice(u, starts, [*dims, m, k], [1] * rank, [*batch, m, k])
                vt_k = e.slice(vt, starts, [*dims, k, n], [1] * rank, [*batch, k, n])
                largest = e.slice(s, starts[:-1], [*dims, min(k, 1)], ones, [*batch, min(k, 1)])
                scale = inverted(e, s, s, largest)
                left, right = e.transpose(vt_k, swap), e.transpose(u_k, swap)
            scaled = e.binary("multiply", left, e.expand_dims(scale, [rank - 2]))
            return e.emit(mlx.MatmulOp(scaled, right, op.result.type))

        self.replace(op, rewriter, build)


PATTERNS: tuple[AtenLowering, ...] = (
    LowerMatmul(),
    LowerAddmm(),
    LowerLinear(),
    LowerConvolution(),
    LowerPool(),
    LowerSameAsMlx(),
    LowerLinalgSolve(),
    LowerLinalgSolveTriangular(),
    LowerCholeskyEx(),
    LowerLuFactorEx(),
    LowerLinalgPinv(),
)
