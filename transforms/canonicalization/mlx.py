"""Canonicalization patterns of the `mlx` dialect, each attached to the ops it rewrites
(through `HasCanonicalizationPatternsTrait` in `dialects/mlx.py`) and each also a pass
of its own; `transforms/catalog.py` registers them.

The three seed transformations (docs/semantics.md states what each computes):

- lossless cast folding (`FoldLosslessCastChain`, `RemoveIdentityCast`);
- fully masked SDPA rows are exact zeros: the lowering marks an SDPA
  `zero_masked_rows`, and `ZeroFullyMaskedRows` makes that an explicit guard or drops
  it where no row can be empty;
- advanced indexing is expanded by the lowering (`LowerIndex` in `conversions/aten_to_mlx/indexing.py`), which
  emits no transpose that only moves size-1 dims; here `RemoveIdentityTranspose`
  and `ComposeTransposes` clean up what remains.

and the usual folds: transposes, reshapes, identity broadcasts and slices, constant
casts and scalar arithmetic, identity arithmetic (`x*1`, `x-0`, ...), double negation
and `where` on a constant condition. Each keeps the meaning of its input exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from mlxir.dialects import mlx
from mlxir.dialects.common import (
    DYNAMIC,
    dtype_of,
    int_array,
    ints,
    mixed_values,
    rank_of,
    shape_of,
)
from mlxir.support import dtypes
from mlxir.support.locations import fused
from mlxir.transforms.known_dims import known_dims

# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------


def _int_info(dtype: Attribute) -> tuple[int, bool] | None:
    """(width, signed) of an integer type other than i1."""
    if not isinstance(dtype, IntegerType):
        return None
    int_type = cast(IntegerType, dtype)  # isinstance leaves its type parameters unknown
    if int_type.width.data > 1:
        return int_type.width.data, int_type.signedness.data != Signedness.UNSIGNED
    return None


def _is_bool(dtype: Attribute) -> bool:
    return isinstance(dtype, IntegerType) and cast(IntegerType, dtype).width.data == 1


_EXACT_FLOAT_WIDENINGS = {
    ("float16", "float32"),
    ("float16", "float64"),
    ("bfloat16", "float32"),
    ("bfloat16", "float64"),
    ("float32", "float64"),
}
_FLOATS_HOLDING_INTS = {8: dtypes.FLOAT_NAMES, 16: ("float32", "float64"), 32: ("float64",)}
"""Integer width → the float types whose significand holds every such integer."""


def _float_name(dtype: Attribute) -> str | None:
    row = dtypes.of_ir(dtype)
    return row.name if row is not None and row.is_float else None


def is_lossless(source: Attribute, target: Attribute) -> bool:
    """Whether casting every value of `source` to `target` is exact (docs/semantics.md §1)."""
    if source == target:
        return True
    src_float, dst_float = _float_name(source), _float_name(target)
    if _is_bool(source):
        return isinstance(target, IntegerType) or dst_float is not None
    if src_float and dst_float:
        return (src_float, dst_float) in _EXACT_FLOAT_WIDENINGS
    src_int, dst_int = _int_info(source), _int_info(target)
    if src_int and dst_int:
        (sw, ss), (dw, ds) = src_int, dst_int
        return ss == ds and dw >= sw
    if src_int and dst_float:
        width, _signed = src_int
        return dst_float in _FLOATS_HOLDING_INTS.get(width, ())
    return False


# ---------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------


class RemoveIdentityCast(RewritePattern):
    """`astype(x, dtype(x))` → `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AstypeOp, rewriter: PatternRewriter) -> None:
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class FoldLosslessCastChain(RewritePattern):
    """`astype(astype(x, d1), d2)` → `astype(x, d2)` when `dtype(x) → d1` is exact for
    every value; lossy chains (f32→f16→f32, f32→i32→f32, ...) stay."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AstypeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mlx.AstypeOp):
            return
        if not is_lossless(dtype_of(inner.input), dtype_of(inner.result)):
            return
        if inner.input.type == op.result.type:
            rewriter.replace(op, [], [inner.input])
            return
        folded = mlx.AstypeOp(inner.input, op.result.type)
        folded.location = op.location
        rewriter.replace(op, folded)


_UNFOLDABLE = frozenset({"uint16", "uint32", "uint64", "index", "complex64"})
"""Element types whose constants are not folded: the folds were written against
torch's conversions and arithmetic, which these lack (complex64: a dense attribute
cannot hold it)."""

MAX_FOLDED_ELEMENTS = 64
"""Constant folding only touches small constants (scalars, short vectors)."""

_EXACT_INTEGERS = 2**53
"""Integers up to this magnitude are exact in a float64, so one rounding takes them to
a narrower float; a cast of a larger one is left to MLX."""


def _foldable(element_type: Attribute) -> dtypes.DType | None:
    row = dtypes.of_ir(element_type)
    return row if row is not None and row.name not in _UNFOLDABLE else None


def _bfloat16(single: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest, ties to even; NaN stays NaN), as
    float64: the top half of the float32 bits, rounded."""
    bits = single.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint32) << 16
    result = rounded.view(np.float32).astype(np.float64)
    return np.where(np.isnan(single), np.nan, result)


def _rounded(values: np.ndarray, name: str) -> np.ndarray:
    """Float64 `values` rounded to the float type `name`, as float64. The 16-bit types
    round through float32, as torch's and MLX's conversions both do (a double rounding
    a direct conversion would not make)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "float64":
            return values.astype(np.float64)
        single = values.astype(np.float32)
        if name == "float16":
            return single.astype(np.float16).astype(np.float64)
        if name == "bfloat16":
            return _bfloat16(single)
        return single.astype(np.float64)


def _wrapped(values: np.ndarray, row: dtypes.DType) -> np.ndarray:
    """Int64 `values` as the integer or bool type `row` holds them (two's complement
    wrap; a bool is whether the value is nonzero), as int64."""
    if row.name == "bool":
        return (values != 0).astype(np.int64)
    return values.astype(row.numpy).astype(np.int64)


def _converted(values: np.ndarray, source: dtypes.DType, target: dtypes.DType) -> np.ndarray | None:
    """`values` of type `source` cast to `target` as `astype` does (float64 for a float
    target, int64 otherwise); None where the cast is not defined (a NaN, infinite or
    out-of-range float to an integer: MLX computes it) or not exact to fold (an integer
    past 2^53 to a float)."""
    if target.is_float:
        if not source.is_float and bool(np.any(np.abs(values) > _EXACT_INTEGERS)):
            return None
        return _rounded(values.astype(np.float64), target.name)
    if not source.is_float:
        return _wrapped(values, target)
    if target.name == "bool":
        return (values != 0).astype(np.int64)
    if not bool(np.all(np.isfinite(values))):
        return None
    truncated = np.trunc(values)
    limits = np.iinfo(target.numpy)
    if bool(np.any((truncated < limits.min) | (truncated > limits.max))):
        return None
    return truncated.astype(np.int64)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The elements of a small `mlx.constant` in its shape: float64 for a float type
    (each value exactly its type's), int64 for an integer or bool one (a bool as 0 or
    1); None for anything else or a constant over `MAX_FOLDED_ELEMENTS`."""
    owner = value.owner
    if not isinstance(owner, mlx.ConstantOp):
        return None
    attr = owner.value
    row = _foldable(attr.get_element_type())
    shape = list(attr.get_shape())
    if row is None or math.prod(shape) > MAX_FOLDED_ELEMENTS:
        return None
    values = cast(Sequence[float], attr.get_values())
    if row.is_float:
        data = _rounded(np.array([float(v) for v in values], dtype=np.float64), row.name)
    else:
        data = _wrapped(np.array([int(v) for v in values], dtype=np.int64), row)
    if len(values) == 1 and math.prod(shape) != 1:
        data = np.broadcast_to(data, (math.prod(shape),))
    return data.reshape(shape)


def _constant_op(values: np.ndarray, result_type: Attribute) -> mlx.ConstantOp:
    assert isinstance(result_type, TensorType)
    tensor_type = cast(Any, result_type)  # from_list's overloads want the element type known statically
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":
        elements: list[float] | list[int] = [float(v) for v in flat]
    else:
        elements = [int(v) for v in flat]
    return mlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(tensor_type, elements))


class FoldConstantCast(RewritePattern):
    """`astype(constant)` → a constant of the new type, rounded as MLX would (the
    16-bit floats through float32, bfloat16 included)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AstypeOp, rewriter: PatternRewriter) -> None:
        value = constant_array(op.input)
        source, target = _foldable(dtype_of(op.input)), _foldable(dtype_of(op.result))
        if value is None or source is None or target is None:
            return
        converted = _converted(value, source, target)
        if converted is not None:
            rewriter.replace(op, _constant_op(converted, op.result.type))


def _maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # Of two equal values (-0.0 and 0.0) the first, and NaN from either, as the torch
    # arithmetic these folds were written against.
    return np.where((a >= b) | np.isnan(a), a, b)


def _minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a <= b) | np.isnan(a), a, b)


_SCALAR_FOLDS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "mlx.add": np.add,
    "mlx.subtract": np.subtract,
    "mlx.multiply": np.multiply,
    "mlx.divide": np.divide,
    "mlx.maximum": _maximum,
    "mlx.minimum": _minimum,
}
"""Foldable binary ops → the NumPy function computing them."""


class FoldConstantArithmetic(RewritePattern):
    """Binary arithmetic on two small float constants → a constant (computed in the
    result's dtype as MLX computes it: float16 and bfloat16 in float32, then rounded)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        fold = _SCALAR_FOLDS.get(op.name)
        if fold is None or not isinstance(op, mlx.BinaryOp):
            return
        lhs, rhs = constant_array(op.lhs), constant_array(op.rhs)
        name = _float_name(dtype_of(op.lhs))
        if lhs is None or rhs is None or name is None or dtype_of(op.rhs) != dtype_of(op.lhs):
            return
        computed_in = np.float64 if name == "float64" else np.float32
        with np.errstate(all="ignore"):
            result = fold(lhs.astype(computed_in), rhs.astype(computed_in))
        result = _rounded(np.asarray(result, dtype=np.float64), name)
        if list(result.shape) != list(shape_of(op.result)):
            return
        rewriter.replace(op, _constant_op(result, op.result.type))


# ---------------------------------------------------------------------------
# Identities: x*1, x-0, -(-x), where(true, x, y)
# ---------------------------------------------------------------------------


def _splat(value: SSAValue) -> float | int | None:
    """The one value every element of `value` holds, when `value` is a constant: an
    `mlx.constant` (of any size), an `mlx.full` of one, `mlx.zeros` or `mlx.ones`. A bool
    is 0 or 1; a float keeps its sign (-0.0 is not 0.0). None for anything else, an
    empty constant, or one whose elements differ."""
    owner = value.owner
    element = dtype_of(value)
    if isinstance(owner, mlx.ConstantOp):
        values = cast(Sequence[float | int], owner.value.get_values())
        if not values:
            return None
        first = values[0]
        if isinstance(first, float):
            # By bits, so that -0.0 differs from 0.0 (and a NaN is never one value).
            sign = math.copysign(1.0, first)
            if any(v != first or math.copysign(1.0, v) != sign for v in values):
                return None
            return first
        if any(v != first for v in values):
            return None
        return int(bool(first)) if _is_bool(element) else int(first)
    if isinstance(owner, mlx.FullOp):
        return _splat(owner.value)
    if isinstance(owner, mlx.ZerosOp | mlx.OnesOp):
        one = isinstance(owner, mlx.OnesOp)
        return float(one) if _float_name(element) is not None else int(one)
    return None


def _holds(value: SSAValue, identity: float) -> bool:
    """Whether every element of the constant `value` is `identity`, sign of zero
    included (an integer 0 counts as +0.0)."""
    found = _splat(value)
    return (
        found is not None
        and found == identity
        and math.copysign(1.0, found) == math.copysign(1.0, identity)
    )


def _keeps_shape(value: SSAValue, *others: SSAValue) -> bool:
    """Whether broadcasting `value` against `others` gives `value`'s own shape at run
    time, not only a result of the same type: each of an other's dims (aligned from the
    right) is 1 or the same static size as `value`'s. Equal types are not enough: a
    dynamic dim of `value` may be 1 at run time and grow to a `?` of another operand."""
    shape = shape_of(value)
    for other in others:
        other_shape = shape_of(other)
        if len(other_shape) > len(shape):
            return False
        aligned = shape[len(shape) - len(other_shape) :]
        if any(o != 1 and (o == DYNAMIC or o != d) for d, o in zip(aligned, other_shape)):
            return False
    return True


def _forward(op: Operation, value: SSAValue, *others: SSAValue) -> bool:
    """Whether `op`'s one result is `value` itself, the other operands only broadcast
    into it: same type (no dtype change, no static growth) and no runtime growth."""
    return op.results[0].type == value.type and _keeps_shape(value, *others)


class FoldIdentityArithmetic(RewritePattern):
    """`x*1`, `1*x`, `x/1`, `x-0` and `x+0`, `0+x` → `x`, where the other operand is a
    constant (`_splat`) whose every element is the identity and the op's result type is
    `x`'s (no dtype promotion, no broadcast growth, `_keeps_shape`).

    Exact, bit for bit: IEEE 754 rounds `x*1`, `x/1` and `x-(+0)` to `x` for every
    `x` (±0, ±inf, subnormals), and for integers and bools every fold is the identity
    (bool `x+False`, `x-False`, `x*True` are `x` in MLX). Float `x+(+0)` is not:
    `-0.0 + 0.0` is `+0.0`, so a float add folds only when the constant is `-0.0`
    (`+0 + -0 = +0`, `-0 + -0 = -0`), and `x-(-0)` (`= x+0`) does not fold. A NaN
    stays a NaN; its bits are x's own, where the op gives whatever NaN the backend
    computes (IEEE leaves a computed NaN's payload and sign open: MLX on CPU keeps an
    f32 quiet NaN, rewrites f16 NaNs to 0x7D00 with their sign and bf16 NaNs to
    +0x7FC0). Likewise a backend that flushes subnormals to zero would flush them in
    the op, not in the fold. `0-x` and `1/x` are no identities and stay."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, mlx.BinaryOp):
            return
        is_float = _float_name(dtype_of(op.result)) is not None
        lhs, rhs = op.lhs, op.rhs
        # (kept operand, identity operand, the identity): the commutative ops both ways.
        match op.name:
            case "mlx.multiply":
                cases = [(lhs, rhs, 1.0), (rhs, lhs, 1.0)]
            case "mlx.divide":
                cases = [(lhs, rhs, 1.0)]
            case "mlx.subtract":
                cases = [(lhs, rhs, 0.0)]
            case "mlx.add":
                zero = -0.0 if is_float else 0.0
                cases = [(lhs, rhs, zero), (rhs, lhs, zero)]
            case _:
                return
        for kept, constant, identity in cases:
            if _holds(constant, identity) and _forward(op, kept, constant):
                rewriter.replace(op, [], [kept])
                return


def _is_negative(op: Operation | None) -> bool:
    return isinstance(op, mlx.UnaryOp) and op.name == "mlx.negative"


class FoldDoubleNegation(RewritePattern):
    """`negative(negative(x))` → `x` when the result type is `x`'s.

    Exact, bit for bit: IEEE negation flips the sign bit and nothing else (±0, ±inf,
    subnormals), so two restore every bit; integer negation wraps modulo 2^n
    (`-(-INT_MIN)` is `INT_MIN`, `-(-u)` is `u` for unsigned). A NaN stays a NaN with
    x's own bits (MLX on CPU computes f16 and bf16 negation through f32 and rewrites
    their NaNs, as in `FoldIdentityArithmetic`). Bool is left alone: MLX has no
    `negative` of bool (the program's error stays)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not _is_negative(op):
            return
        inner = op.operands[0].owner
        if not (isinstance(inner, Operation) and _is_negative(inner)):
            return
        source = inner.operands[0]
        if _is_bool(dtype_of(source)) or op.results[0].type != source.type:
            return
        rewriter.replace(op, [], [source])


class FoldConstantWhere(RewritePattern):
    """`where(c, x, y)` with a constant `c` (`_splat`) → `x` when every element of `c`
    is true, `y` when every one is false, if that branch's type is the result type and
    neither the condition nor the other branch can broadcast it larger
    (`_keeps_shape`).

    Exact, bit for bit: `where` copies the selected elements without arithmetic, so the
    result is the selected branch, element for element (-0.0 and NaN included)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.WhereOp, rewriter: PatternRewriter) -> None:
        condition = _splat(op.condition)
        if condition is None:
            return
        chosen, other = (op.x, op.y) if condition else (op.y, op.x)
        if _forward(op, chosen, op.condition, other):
            rewriter.replace(op, [], [chosen])


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------


class RemoveIdentityTranspose(RewritePattern):
    """A transpose whose permutation is the identity, or that only reorders size-1
    dims among themselves, is (a reshape to) its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = list(ints(op.axes))
        if perm == sorted(perm):
            rewriter.replace(op, [], [op.input])
            return
        shape = shape_of(op.input)
        moved = [p for p in perm if shape[p] != 1]
        if moved == sorted(moved) and DYNAMIC not in shape:
            reshape = mlx.ReshapeOp(op.input, list(shape_of(op.result)), op.result.type)
            reshape.location = op.location
            rewriter.replace(op, reshape)


class ComposeTransposes(RewritePattern):
    """`transpose(transpose(x, p1), p2)` → `transpose(x, p1[p2])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mlx.TransposeOp):
            return
        first, second = ints(inner.axes), ints(op.axes)
        composed = [first[p] for p in second]
        new = mlx.TransposeOp(inner.input, composed, op.result.type)
        new.location = op.location
        rewriter.replace(op, new)


def _sizes_are_input_shape(value: SSAValue, sizes: Sequence[SSAValue | int]) -> bool:
    """Whether a mixed size list spells `value`'s own shape (literals for static dims,
    `mlx.dim value axis i` for dynamic ones)."""
    shape = shape_of(value)
    if len(sizes) != len(shape):
        return False
    for axis, (size, dim) in enumerate(zip(sizes, shape)):
        if isinstance(size, int):
            if size != dim:
                return False
        else:
            owner = size.owner
            if not (
                isinstance(owner, mlx.DimOp)
                and owner.input == value
                and owner.axis.value.data % len(shape) == axis
            ):
                return False
    return True


class RemoveIdentityReshape(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ShapedResultOp, rewriter: PatternRewriter) -> None:
        if op.input.type != op.result.type:
            return
        if _sizes_are_input_shape(op.input, mixed_values(ints(op.static_shape), op.shape)):
            rewriter.replace(op, [], [op.input])


class ComposeReshapes(RewritePattern):
    """`reshape(reshape(x))` → `reshape(x)` with the outer sizes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mlx.ReshapeOp):
            return
        # A dynamic outer size may be an `mlx.dim` of the inner result: that stays valid
        # (the inner op stays alive for it); sizes are values, not positions.
        sizes = mixed_values(ints(op.static_shape), op.shape)
        new = mlx.ReshapeOp(inner.input, sizes, op.result.type)
        new.location = op.location
        rewriter.replace(op, new)


class RemoveIdentitySlice(RewritePattern):
    """A slice from 0 to each dim's size with step 1 is its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.SliceOp, rewriter: PatternRewriter) -> None:
        if set(ints(op.strides)) - {1}:
            return
        starts = mixed_values(ints(op.static_start), op.start)
        stops = mixed_values(ints(op.static_stop), op.stop)
        if any(s != 0 for s in starts):
            return
        if _sizes_are_input_shape(op.input, stops) and op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class FoldEmptyConcatenate(RewritePattern):
    """`concatenate` drops the inputs whose size along the axis is statically 0; when
    one input remains and its type is the result type, the concatenate is that input.
    Left alone when every input is empty, or when the one that remains has another type
    (the concatenate then also states the result's type).

    Exact: an empty input contributes no element, so the others, in order, are the
    result. Partial rotary with every feature rotated (Phi-3) lowers to
    `cat(rope(x[..., :d]), x[..., d:d])`. MLX checks the off-axis sizes of every input,
    empty ones too: a program whose empty input disagrees with the others there fails
    in MLX and runs once the input is gone (the verifier has already rejected any
    static disagreement)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ConcatenateOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data % rank_of(op.result)
        kept = [v for v in op.inputs if shape_of(v)[axis] != 0]
        if len(kept) == len(op.inputs) or not kept:
            return
        if len(kept) == 1:
            if kept[0].type == op.result.type:
                rewriter.replace(op, [], [kept[0]])
            return
        new = mlx.ConcatenateOp(kept, op.axis.value.data, op.result.type)
        new.location = op.location
        rewriter.replace(op, new)


def _static_range(op: mlx.SliceOp, axis: int) -> tuple[int, int] | None:
    """The `[lo, hi)` that `op` takes of `axis`, when its bounds and the axis size are
    static, clamped as MLX clamps them (negative bounds count from the end)."""
    size = shape_of(op.input)[axis]
    start = mixed_values(ints(op.static_start), op.start)[axis]
    stop = mixed_values(ints(op.static_stop), op.stop)[axis]
    if size == DYNAMIC or not isinstance(start, int) or not isinstance(stop, int):
        return None
    lo = min(size, max(0, start + size if start < 0 else start))
    hi = min(size, max(0, stop + size if stop < 0 else stop))
    return lo, hi


def _maybe_whole(op: mlx.SliceOp, axis: int) -> bool:
    """Whether `op` may take all of `axis` (from 0, to a static stop at least the size,
    or to a runtime stop that `_runtime_whole` then has to prove the size)."""
    start = mixed_values(ints(op.static_start), op.start)[axis]
    stop = mixed_values(ints(op.static_stop), op.stop)[axis]
    if start != 0:
        return False
    if isinstance(stop, int):
        size = shape_of(op.input)[axis]
        return size != DYNAMIC and stop >= size
    return True


def _is_dim_of(size: SSAValue, value: SSAValue, axis: int) -> bool:
    owner = size.owner
    return (
        isinstance(owner, mlx.DimOp)
        and owner.input == value
        and owner.axis.value.data % rank_of(value) == axis
    )


def _cut_axis(op: mlx.SliceOp) -> int | None:
    """The one axis a step-1 slice cuts to a static, non-empty, partial range, when it
    may take all of every other axis."""
    if set(ints(op.strides)) != {1}:
        return None
    cut: int | None = None
    for axis in range(rank_of(op.input)):
        found = _static_range(op, axis)
        if found is not None and found != (0, shape_of(op.input)[axis]):
            if cut is not None or found[0] >= found[1]:
                return None
            cut = axis
        elif not _maybe_whole(op, axis):
            return None
    return cut


class SlicesToSplit(RewritePattern):
    """Step-1 slices of one value `y` that cut the same axis into non-empty, static,
    contiguous ranges covering all of it, each taking all of every other axis → one
    `split(y)` whose pieces replace them (Phi-3 cuts its fused `qkv_proj` output into
    q, k and v this way; `split-heads-once` then moves the heads once for all three).

    Exact: the pieces of a split are the slices between its points. A runtime stop on
    another axis must provably be `y`'s size there: an `mlx.dim` of `y`, else by the
    function's symbolic dims (`known_dims`, computed only once everything else
    matches). Overlapping or repeated ranges, gaps, other steps and a lone slice stay.
    Other slices of `y` (another axis, another step) are not touched."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.SliceOp, rewriter: PatternRewriter) -> None:
        axis = _cut_axis(op)
        if axis is None:
            return
        y = op.input
        pieces: dict[mlx.SliceOp, tuple[int, int]] = {}
        for use in y.uses:
            sibling = use.operation
            if isinstance(sibling, mlx.SliceOp) and sibling.input == y and _cut_axis(sibling) == axis:
                pieces[sibling] = cast(tuple[int, int], _static_range(sibling, axis))
        if len(pieces) < 2:
            return
        ordered = sorted(pieces.items(), key=lambda item: item[1])
        bounds = [0] + [hi for _, (_, hi) in ordered]
        if [lo for _, (lo, _) in ordered] != bounds[:-1] or bounds[-1] != shape_of(y)[axis]:
            return
        dtype, shape = dtype_of(y), list(shape_of(y))
        piece_types: list[Attribute] = []
        for sibling, (lo, hi) in ordered:
            shape[axis] = hi - lo
            piece_types.append(TensorType(dtype, shape))
            if sibling.result.type != piece_types[-1]:
                return
        if not self._whole_elsewhere([s for s, _ in ordered], axis):
            return
        split = mlx.SplitOp.build(
            operands=[y],
            result_types=[piece_types],
            properties={"indices": int_array(bounds[1:-1]), "axis": IntegerAttr(axis, 64)},
        )
        split.location = fused([sibling.location for sibling, _ in ordered])
        # Right after y is defined: the split must dominate every use of every slice.
        owner = y.owner
        if isinstance(owner, Operation):
            rewriter.insert(split, InsertPoint.after(owner))
        else:
            rewriter.insert(split, InsertPoint.at_start(cast(BlockArgument, y).block))
        for (sibling, _), piece in zip(ordered, split.results, strict=True):
            rewriter.replace(sibling, [], [piece])

    @staticmethod
    def _whole_elsewhere(slices: Sequence[mlx.SliceOp], cut: int) -> bool:
        """Every runtime stop off the cut axis is the input's size on its axis."""
        deferred: list[tuple[mlx.SliceOp, int, SSAValue]] = []
        for op in slices:
            stops = mixed_values(ints(op.static_stop), op.stop)
            for axis, stop in enumerate(stops):
                if axis != cut and isinstance(stop, SSAValue) and not _is_dim_of(stop, op.input, axis):
                    deferred.append((op, axis, stop))
        if not deferred:
            return True
        # The symbolic dims walk the whole function: only for slices that match otherwise.
        known = known_dims(slices[0])
        return known is not None and all(
            known.same_size(op.input, axis, stop) for op, axis, stop in deferred
        )


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------


def scalar_dense(dtype: Attribute, value: float) -> DenseIntOrFPElementsAttr:
    """A 0-d float literal of `dtype`."""
    tensor_type = cast(Any, TensorType(dtype, []))
    return DenseIntOrFPElementsAttr.from_list(tensor_type, [value])


def arange_length(value: SSAValue) -> SSAValue | int | None:
    """`arange(0, n, 1)` → n (a literal or its index value), else None."""
    op = value.owner
    if not isinstance(op, mlx.ArangeOp):
        return None
    start, stop, step = mixed_values(ints(op.static_bounds), op.bounds)
    return stop if start == 0 and step == 1 else None


def _arange_from_zero(value: SSAValue) -> bool:
    """`value` is `expand_dims(arange(0, n, 1))` (possibly cast): non-negative, starts at 0."""
    while isinstance(value.owner, mlx.ExpandDimsOp | mlx.AstypeOp | mlx.ReshapeOp):
        value = value.owner.input
    return arange_length(value) is not None


def _nonnegative_index(value: SSAValue) -> bool:
    """An `index` that cannot be negative: a dim size, a constant >= 0, or sums and
    products of those."""
    owner = value.owner
    if isinstance(owner, mlx.DimOp):
        return True
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data >= 0
    if isinstance(owner, arith.AddiOp | arith.MuliOp):
        return _nonnegative_index(owner.lhs) and _nonnegative_index(owner.rhs)
    return False


def _rows_from_zero_or_more(value: SSAValue) -> bool:
    """`value` is an arange from 0, or one plus a non-negative index (the positions of
    new queries after a KV cache of that length): every entry is >= 0."""
    while isinstance(value.owner, mlx.ExpandDimsOp | mlx.AstypeOp | mlx.ReshapeOp):
        value = value.owner.input
    owner = value.owner
    if isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.add":
        for start, offset in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if (
                _arange_from_zero(start)
                and isinstance(offset.owner, mlx.FromIndexOp)
                and _nonnegative_index(offset.owner.input)
            ):
                return True
        return False
    return _arange_from_zero(value)


def _provably_nonempty_rows(mask: SSAValue) -> bool:
    """A causal mask `cols <= rows` (or `rows >= cols`) with the key positions `cols` an
    arange from 0 and the query positions `rows` never negative (an arange from 0, or
    one offset by a cache length), possibly broadcast: every row attends key 0."""
    while isinstance(mask.owner, mlx.BroadcastToOp):
        mask = mask.owner.input
    owner = mask.owner
    if (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.less_equal"):
        cols, rows = owner.lhs, owner.rhs
    elif (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.greater_equal"):
        rows, cols = owner.lhs, owner.rhs
    else:
        return False
    return (
        _arange_from_zero(cols)
        and _rows_from_zero_or_more(rows)
        and rank_of(cols) >= 1
        and shape_of(cols)[-1] != 1
    )


class ZeroFullyMaskedRows(RewritePattern):
    """`zero_masked_rows` made explicit, or dropped where no row can be empty (a causal
    mask built from aranges: every row attends key 0). Explicit, `sdpa(q, k, v, mask)`
    becomes `where(any(attendable(mask), -1, keepdims), sdpa(...), 0)` without the
    property: one mask feeds every layer, so after CSE one `any` serves them all."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.ScaledDotProductAttentionOp, rewriter: PatternRewriter) -> None:
        mask = op.mask
        if op.zero_masked_rows is None or mask is None:
            return
        plain_sdpa = op.clone()
        del plain_sdpa.properties["zero_masked_rows"]
        if _provably_nonempty_rows(mask):
            rewriter.replace(op, [plain_sdpa])
            return
        dtype = dtype_of(op.result)
        new_ops: list[Operation] = []
        attendable = mask
        mask_shape = list(shape_of(mask))
        bool_type = TensorType(IntegerType(1), mask_shape)
        if not _is_bool(dtype_of(mask)):
            neg_inf = mlx.ConstantOp(scalar_dense(dtype_of(mask), -math.inf))
            greater = mlx.BINARY_OP_CLASSES["greater"](mask, neg_inf.result, bool_type)
            new_ops += [neg_inf, greater]
            attendable = greater.results[0]
        any_shape = [*mask_shape[:-1], 1]
        any_op = mlx.REDUCTION_OP_CLASSES["any"](
            attendable, [len(mask_shape) - 1], True, TensorType(IntegerType(1), any_shape)
        )
        zero = mlx.ConstantOp(scalar_dense(dtype, 0.0))
        where = mlx.WhereOp(any_op.results[0], plain_sdpa.results[0], zero.result, op.result.type)
        new_ops += [any_op, zero, plain_sdpa, where]
        for new in new_ops:
            new.location = op.location
        rewriter.replace(op, new_ops, [where.results[0]])
